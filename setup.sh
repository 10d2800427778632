#!/usr/bin/env bash
# setup.sh: set lowbit up and run the main job.
#
# Installs what the build needs when it is missing (Lua 5.4 and CMake,
# from Debian/Ubuntu packages; the CUDA toolkit must be there already),
# builds, checks every recipe, generates and compiles the default recipe
# (a16w4_g128) for sm_80/86/89/90, and runs it on the GPU when there is one.
set -euo pipefail
cd "$(dirname "$0")"

need=()
[ -f /usr/include/lua5.4/lua.h ] || need+=(liblua5.4-dev)
command -v cmake >/dev/null || need+=(cmake)
if [ ${#need[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "setup: please install ${need[*]} (Lua 5.4 headers and static library, CMake)" >&2
    exit 1
  fi
  sudo=""
  [ "$(id -u)" = 0 ] || sudo=sudo
  $sudo apt-get update -qq
  $sudo apt-get install -y -qq "${need[@]}"
fi
if ! command -v nvcc >/dev/null && [ ! -d /usr/local/cuda ]; then
  echo "setup: the CUDA toolkit (NVRTC and its headers) is needed" >&2
  exit 1
fi
[ -d /usr/local/cuda/bin ] && export PATH=$PATH:/usr/local/cuda/bin

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build build -j
build/lowbit check recipes/*.lua
build/lowbit gen recipes/a16w4_g128.lua -o build/a16w4_g128.cu
echo "generated build/a16w4_g128.cu"
build/lowbit compile recipes/a16w4_g128.lua --arch sm_80,sm_86,sm_89,sm_90
rc=0
build/lowbit run recipes/a16w4_g128.lua --m 1 --n 8192 --k 8192 || rc=$?
# 3: no GPU here, nothing ran (the tool said why)
[ $rc -eq 0 ] || [ $rc -eq 3 ]
