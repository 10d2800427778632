#!/bin/bash
# cross-word codes: the rules (un=2) against the same plans without dequantisation
# (plain=1); within-word codes at 256-row tiles: un=1 against un=2
cd "$(dirname "$0")/.." || exit 1
(cmake -S . -B /tmp/bB -DCMAKE_BUILD_TYPE=Release -DLUA_ROOT=$PWD/.lua >/dev/null && cmake --build /tmp/bB -j 16 --target lowbit-cli >/dev/null) || { echo build failed; exit 1; }
export LD_LIBRARY_PATH=$PWD/.lua/lib LOWBIT_RECIPE_PATH=$PWD/recipes:$PWD/bench/recipes
L=/tmp/bB/lowbit; t0=$(date +%s)
row() { grep -E " us |rror" | awk -v p="$1" '{print p,$1,$2,$3,$4,$7,$10,$20,$21}'; }
for r in a16w3_g128 a16w5_g64 a16w6_g128 a16w7_g32; do
  env -u LOWBIT_GEMM LOWBIT_CACHE_DIR=/tmp/kr timeout 60 $L bench $r --m 128,256,1024 --iters 20 --shapes 8192x8192,4096x14336 2>&1 | row rules
  LOWBIT_GEMM=plain=1 LOWBIT_CACHE_DIR=/tmp/kp timeout 60 $L bench $r --m 128,256,1024 --iters 20 --shapes 8192x8192,4096x14336 2>&1 | row plain
  echo "($(( $(date +%s) - t0 )) s)"
done
for r in a16w8_channel a16w1_g64 a16w4_g128; do
  for u in 1 2; do
    LOWBIT_GEMM=un=$u LOWBIT_CACHE_DIR=/tmp/ku$u timeout 60 $L bench $r --m 256,1024,4096 --iters 20 --shapes 8192x8192,4096x14336 2>&1 | row un=$u
  done
  echo "($(( $(date +%s) - t0 )) s)"
done
