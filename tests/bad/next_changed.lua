-- expect: next_changed.lua:5: invalid key to 'next'
name "next_changed"
-- integer keys hash the same in every run (string hashes are seeded)
local t = {[1000] = 1, [2000] = 2, [3000] = 3}
for k in pairs(t) do
  t[k] = nil; t[k + 1] = 1
end
