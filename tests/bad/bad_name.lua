-- expect: bad_name.lua:2: name 'a b' may hold only letters, digits
name "a b"
