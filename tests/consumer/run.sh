#!/usr/bin/env bash
# run.sh BUILD WORK CMAKE CC SHARED [FLAGS]: installs the build directory
# BUILD as it is (nothing is rebuilt) into a fresh prefix under WORK, and
# checks the install tree: its files, liblowbit.so's soname and exports
# (exactly the LB_API functions of the installed lowbit.h), the installed
# tool, a project beside this script built with find_package(lowbit)
# against liblowbit.so and liblowbit.a, and main.c built with
# `cc $(pkg-config --cflags --libs lowbit)`; each program runs.  Recipes
# by name resolve in the tree itself (the prefix is not the configured
# one), with LOWBIT_RECIPE_PATH unset.  SHARED is
# 0 where the build has no liblowbit.so (configure said why).  FLAGS go to
# every compile and link: a sanitized lowbit needs sanitized programs.
# No GPU is used.
set -u
build=$1
work=$2
cmake=$3
cc=$4
shared=$5
flags="-Wall -Wextra -Werror ${6:-}"
here=$(cd "$(dirname "$0")" && pwd)
prefix=$work/prefix
export CUDA_VISIBLE_DEVICES=
unset LOWBIT_RECIPE_PATH
rm -rf "$work"
mkdir -p "$work"
failures=0

fail() {
  echo "FAIL $*"
  failures=$((failures + 1))
}

# step NAME COMMAND...: later steps need this one, so a failure shows the
# output and ends the test.
step() {
  local name=$1
  shift
  if "$@" >"$work/out" 2>&1; then
    echo "ok   $name"
  else
    echo "FAIL $name (exit status $?): $*"
    sed 's/^/  | /' "$work/out" | tail -40
    exit 1
  fi
}

# refused NAME WANT COMMAND...: COMMAND fails, and says WANT.
refused() {
  local name=$1 want=$2
  shift 2
  if "$@" >"$work/out" 2>&1; then
    fail "$name: exit status 0: $(cat "$work/out")"
  elif grep -qF -- "$want" "$work/out"; then
    echo "ok   $name"
  else
    fail "$name: does not name $want: $(cat "$work/out")"
  fi
}

step "cmake --install $build" "$cmake" --install "$build" --prefix "$prefix"
lib=$(dirname "$(find "$prefix" -name liblowbit.a | head -1)")
recipe=$prefix/share/lowbit/recipes/a16w4_g128.lua
for f in include/lowbit.h bin/lowbit "${lib#"$prefix"/}/liblowbit.a" \
         "${lib#"$prefix"/}/cmake/lowbit/lowbitConfig.cmake" \
         "${lib#"$prefix"/}/cmake/lowbit/lowbitConfigVersion.cmake" \
         "${lib#"$prefix"/}/pkgconfig/lowbit.pc"; do
  [ -f "$prefix/$f" ] || fail "installed: no $f"
done
want=$(cd "$here/../../recipes" && ls ./*.lua | sort)
got=$(cd "$prefix/share/lowbit/recipes" 2>/dev/null && ls ./*.lua | sort)
[ "$want" = "$got" ] || fail "installed recipes: '$got', not '$want'"

if [ "$shared" = 1 ]; then
  so=$lib/liblowbit.so
  [ -f "$so.0.1.0" ] && [ -L "$so.0" ] && [ -L "$so" ] ||
    fail "installed: no liblowbit.so.0.1.0 with links liblowbit.so.0, liblowbit.so"
  soname=$(readelf -d "$so.0.1.0" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
  [ "$soname" = liblowbit.so.0 ] || fail "soname '$soname', not liblowbit.so.0"
  # What liblowbit.so exports is exactly the functions lowbit.h declares
  # (at the start of a line), each of them LB_API.
  nm -D --defined-only "$so.0.1.0" | awk 'NF == 3 { print $3 }' |
    sort >"$work/exported"
  grep -E '^[A-Za-z_].*[ *]lb_[A-Za-z0-9_]*\(' "$prefix/include/lowbit.h" |
    grep -vE '^(typedef|extern) ' >"$work/decls"
  sed 's/^[^(]*[ *]\(lb_[A-Za-z0-9_]*\)(.*/\1/' "$work/decls" |
    sort >"$work/public"
  noapi=$(grep -v '^LB_API ' "$work/decls")
  [ -z "$noapi" ] || fail "lowbit.h declares without LB_API: $noapi"
  [ -s "$work/exported" ] || fail "liblowbit.so exports nothing"
  extra=$(comm -23 "$work/exported" "$work/public" | tr '\n' ' ')
  missing=$(comm -13 "$work/exported" "$work/public" | tr '\n' ' ')
  [ -z "$extra" ] || fail "liblowbit.so exports what lowbit.h does not declare: $extra"
  [ -z "$missing" ] || fail "liblowbit.so does not export: $missing"
  [ -z "$extra$missing" ] &&
    echo "ok   liblowbit.so exports the $(wc -l <"$work/public") LB_API functions of lowbit.h, nothing else"
else
  echo "note this build has no liblowbit.so (LB_SHARED=OFF, or cmake warned why): liblowbit.a and the tool only"
fi

step "installed lowbit --version" "$prefix/bin/lowbit" --version
grep -q "^lowbit 0\.1\.0$" "$work/out" || fail "lowbit --version: $(cat "$work/out")"
step "installed lowbit check" "$prefix/bin/lowbit" check \
  "$prefix"/share/lowbit/recipes/*.lua
# By name: the tool (liblowbit.a inside) finds the recipes beside itself,
# and a name that is not there is reported with the directory looked in
# (resolved: the library names it so).
recipes=$(cd "$prefix/share/lowbit/recipes" && pwd -P)
step "installed lowbit check a16w4_g128 (by name)" "$prefix/bin/lowbit" \
  check a16w4_g128
grep -q "^a16w4_g128: ok" "$work/out" || fail "lowbit check a16w4_g128: $(cat "$work/out")"
refused "installed lowbit check nosuch_recipe: names $recipes" "$recipes" \
  "$prefix/bin/lowbit" check nosuch_recipe
# and from a copy of the tree elsewhere (a moved install)
mkdir -p "$work/moved"
cp -a "$prefix/bin" "$prefix/share" "$work/moved/"
step "moved tree: lowbit check a16w4_g128 (by name)" "$work/moved/bin/lowbit" \
  check a16w4_g128
refused "moved tree: lowbit check nosuch_recipe: names $work/moved" \
  "$(cd "$work/moved" && pwd -P)/share/lowbit/recipes" \
  "$work/moved/bin/lowbit" check nosuch_recipe

# find_package(lowbit), the way a user's project does it.
step "consumer: configure with CMAKE_PREFIX_PATH" "$cmake" -S "$here" \
  -B "$work/cmake" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_C_COMPILER="$cc" \
  -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_FLAGS="$flags" \
  -DCMAKE_EXE_LINKER_FLAGS="${6:-}" -DCONSUMER_SHARED="$shared"
step "consumer: build" "$cmake" --build "$work/cmake"
if [ "$shared" = 1 ]; then
  step "consumer (liblowbit.so): load, pack, generate, compile sm_80" \
    "$work/cmake/consumer" "$recipe" 80
  cat "$work/out"
  # liblowbit.so brings its own dependencies: the program names none
  needed=$(readelf -d "$work/cmake/consumer" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p')
  case " $(echo $needed) " in
    *" liblowbit.so.0 "*) ;;
    *) fail "consumer does not need liblowbit.so.0: $needed" ;;
  esac
  case "$needed" in
    *nvrtc* | *lua* | *libcuda*) fail "consumer needs lowbit's dependencies: $needed" ;;
  esac
  ldd "$work/cmake/consumer" | grep -qF "liblowbit.so.0 => $lib/" ||
    fail "consumer does not load $lib/liblowbit.so.0: $(ldd "$work/cmake/consumer" | grep lowbit)"
  # liblowbit.so finds the recipes beside itself, wherever the program is
  step "consumer (liblowbit.so): a16w4_g128 by name" \
    "$work/cmake/consumer" a16w4_g128
  refused "consumer (liblowbit.so): nosuch_recipe names $recipes" "$recipes" \
    "$work/cmake/consumer" nosuch_recipe
fi
step "consumer_static (liblowbit.a): load, pack, generate, compile sm_80" \
  "$work/cmake/consumer_static" "$recipe" 80
cat "$work/out"
# liblowbit.a in a program outside the tree cannot tell where the tree is:
# the user's LOWBIT_RECIPE_PATH names it.
step "consumer_static (liblowbit.a): a16w4_g128 by name in LOWBIT_RECIPE_PATH" \
  env LOWBIT_RECIPE_PATH="$prefix/share/lowbit/recipes" \
  "$work/cmake/consumer_static" a16w4_g128
# lowbit opens the driver at run time: a program must not need it to start
readelf -d "$work/cmake/consumer_static" | grep -q "NEEDED.*libcuda\.so" &&
  fail "consumer_static needs libcuda.so (the driver stub)"

# pkg-config, from the install tree
export PKG_CONFIG_PATH=$lib/pkgconfig
if ! command -v pkg-config >/dev/null; then
  fail "pkg-config is not installed (apt-get install pkgconf): its lowbit.pc is not checked"
else
  step "pkg-config --modversion lowbit" pkg-config --modversion lowbit
  [ "$(cat "$work/out")" = 0.1.0 ] || fail "pkg-config --modversion: $(cat "$work/out")"
  libs="--libs"
  [ "$shared" = 1 ] || libs="--static --libs"
  step "pkg-config --cflags $libs lowbit" pkg-config --cflags $libs lowbit
  pc=$(cat "$work/out")
  echo "     $pc"
  case "$pc" in
    *"-I$prefix/include"*) ;;
    *) fail "pkg-config --cflags does not name $prefix/include: $pc" ;;
  esac
  # shellcheck disable=SC2086
  step "cc \$(pkg-config --cflags $libs lowbit) main.c" "$cc" -std=c11 \
    $flags "$here/main.c" -o "$work/pc-consumer" $pc
  step "pkg-config consumer: load, pack, generate, compile sm_80" \
    env LD_LIBRARY_PATH="$lib" "$work/pc-consumer" "$recipe" 80
  cat "$work/out"
fi

if [ $failures -ne 0 ]; then
  echo "$failures failures"
  exit 1
fi
echo "install tree, find_package and pkg-config: all ok"
