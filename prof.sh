export LD_LIBRARY_PATH=$PWD/.lua/lib LOWBIT_CACHE_DIR=/tmp/kc3 LOWBIT_TUNE=0
B=build-gpu/lowbit
[ -x $B ] || { cmake -S . -B build-gpu -DCMAKE_BUILD_TYPE=Release -DLUA_ROOT=$PWD/.lua >/dev/null && cmake --build build-gpu -j >/dev/null 2>&1; }
for p in "" stages=2 warps=4,stages=2 warps=4,stages=2,minb=1 warps=4,minb=1 split=2,stages=2; do
  echo "== $p"
  LOWBIT_PLAN=$p $B bench recipes/a16w4_g128.lua --m 1,8 --iters 40 --shapes 4096x28672,14336x4096,4096x6144,4096x4096 2>&1 | grep -E '^[ab][0-9a-z_]+ +[0-9]+x[0-9]+ +[0-9]' | awk '{print $2,$3,$4,$5}'
done > $OUT/m1.txt
cat $OUT/m1.txt
$B tune bench/recipes/a16w7_g32.lua --n 16384 --k 256 --m 1,8 2>&1 | tail -5
