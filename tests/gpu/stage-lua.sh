#!/usr/bin/env bash
# Copies Debian's Lua 5.4 headers and static library into .lua/, for a GPU
# machine that has no Lua and no package registry (carry .lua with the tree).
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
inc=/usr/include/lua5.4
lib=$(ls /usr/lib/*/liblua5.4.a 2>/dev/null | head -1)
if [ ! -f "$inc/lua.h" ] || [ -z "$lib" ]; then
  echo "stage-lua: install liblua5.4-dev first" >&2
  exit 1
fi
mkdir -p "$root/.lua/include" "$root/.lua/lib"
cp "$inc"/*.h "$root/.lua/include/"
# Debian's luaconf.h includes a multiarch header that lives elsewhere
find /usr/include -name "lua5.4-deb-multiarch.h" -exec cp {} "$root/.lua/include/" \;
cp "$lib" "$root/.lua/lib/"
# Debian's liblua5.4.a is not position-independent: liblowbit.so (the
# Python package's library) links the shared Lua, copied as plain files
# (run with LD_LIBRARY_PATH=.lua/lib).
so=$(ls /usr/lib/*/liblua5.4.so.0 2>/dev/null | head -1)
if [ -n "$so" ]; then
  cp -L "$so" "$root/.lua/lib/liblua5.4.so.0"
  cp -L "$so" "$root/.lua/lib/liblua5.4.so"
fi
echo "staged Lua in $root/.lua"
