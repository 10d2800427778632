#!/bin/bash
# tests/gpu/ab.sh: two versions of lowbit timed in one device call, so
# that both meet the same clocks, the same card and the same cuBLAS.
#
#   tests/gpu/ab.sh BASE RECIPE... [lowbit bench options]
#
# A is the version in BASE, a directory of its sources; B is this
# checkout.  Make BASE here, before the call, from a revision:
#
#   rm -rf ab && mkdir ab && git archive REV | tar -x -C ab
#
# and pass carry [".lua", "ab"] to the device tool (/ab/ is ignored, so
# it travels only when carried).  BASE "." times this checkout against
# itself: with AB_ENV_A and AB_ENV_B (environment assignments for one side,
# e.g. AB_ENV_A="LOWBIT_GEMM=un=1" AB_ENV_B="LOWBIT_GEMM=un=2") that
# compares two plans of one build.  Recipes are names (recipes/ and
# bench/recipes/ of each side) or paths; the options go to `lowbit bench`
# as they are (--m, --shapes, --iters).  Each recipe runs on A, then on B,
# AB_REPEAT times (default 1).  Prints a row per recipe, shape and M: A's
# and B's microseconds (the median of the repeats), B / A, and both checks
# (each side's rows are printed first as they come).
# Exits non-zero where a build fails, or a row is missing or not "ok" on
# either side.
set -u
here=$(cd "$(dirname "$0")/../.." && pwd)
if [ $# -lt 2 ] || [ ! -d "$1" ]; then
  echo "usage: tests/gpu/ab.sh BASE RECIPE... [lowbit bench options]" >&2
  echo "  (BASE: a directory of the other version's sources)" >&2
  exit 2
fi
base=$(cd "$1" && pwd)
shift
recipes=()
while [ $# -gt 0 ] && [ "${1#--}" = "$1" ]; do
  recipes+=("$1")
  shift
done
opts=("$@")
reps=${AB_REPEAT:-1}
lua=$here/.lua
[ -d "$lua" ] || lua=
out=$(mktemp -d /tmp/ab.XXXXXX)

build() {   # build SIDE SOURCES: lowbit-cli into /tmp/ab-SIDE
  local args=(-S "$2" -B "/tmp/ab-$1" -DCMAKE_BUILD_TYPE=Release)
  [ -n "$lua" ] && args+=("-DLUA_ROOT=$lua")
  cmake "${args[@]}" > "$out/cmake-$1.log" 2>&1 &&
    cmake --build "/tmp/ab-$1" -j "$(nproc)" --target lowbit-cli \
      >> "$out/cmake-$1.log" 2>&1 ||
    { echo "ab: side $1 ($2) does not build: $out/cmake-$1.log" >&2; exit 1; }
}
build A "$base"
build B "$here"

# side SIDE SOURCES ENV RECIPE: its bench rows, "recipe shape m us check",
# from the summary table at the end of lowbit bench's output (the rows
# run.sh's `slowest` reads: recipe, K x N, M, lowbit us, ..., check)
side() {
  local path=$2/recipes:$2/bench/recipes
  env ${3:+$3} LD_LIBRARY_PATH="${lua:+$lua/lib}" LOWBIT_RECIPE_PATH="$path" \
    LOWBIT_CACHE_DIR="/tmp/ab-$1/cache" timeout 300 "/tmp/ab-$1/lowbit" bench \
    "$4" "${opts[@]}" 2>&1 | tee -a "$out/raw-$1" |
    awk '$2 ~ /^[0-9]+x[0-9]+$/ && $3 ~ /^[0-9]+$/ { print $1, $2, $3, $4, $NF }'
}
# Each side's rows also go out as they come ("A recipe shape m us check"),
# so that a call cut short by its time limit still says what it timed.
for r in "${recipes[@]}"; do
  for ((i = 0; i < reps; i++)); do
    side A "$base" "${AB_ENV_A:-}" "$r" | tee -a "$out/A" | sed 's/^/A /'
    side B "$here" "${AB_ENV_B:-}" "$r" | tee -a "$out/B" | sed 's/^/B /'
  done
done

# The median of each side's repeats, then the rows side by side (A's
# order); a row on one side only, or not "ok", fails the run.
awk '
  function med(key, side,   n, i, j, t, v) {
    n = split(times[side, key], v, " ")
    for (i = 2; i <= n; i++)
      for (j = i; j > 1 && v[j] + 0 < v[j - 1] + 0; j--) {
        t = v[j]; v[j] = v[j - 1]; v[j - 1] = t
      }
    return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
  }
  {
    side = FILENAME ~ /\/A$/ ? "A" : "B"
    key = $1 " " $2 " " $3
    if (!((side, key) in times) && side == "A") order[++rows] = key
    if (!((side, key) in times) && side == "B" && !(("A", key) in times))
      extra[++extras] = key
    times[side, key] = times[side, key] " " $4
    if ($5 != "ok") bad[side, key] = $5
  }
  END {
    printf "%-40s %-11s %5s %10s %10s %7s  %s\n", "recipe", "K x N", "M",
           "A us", "B us", "B / A", "checks"
    fail = 0
    for (i = 1; i <= rows; i++) {
      key = order[i]
      split(key, f, " ")
      if (!(("B", key) in times)) {
        printf "%-40s %-11s %5s %10.1f %10s %7s  B missing\n", f[1], f[2],
               f[3], med(key, "A"), "-", "-"
        fail = 1
        continue
      }
      a = med(key, "A"); b = med(key, "B")
      chk = (("A", key) in bad ? "A " bad["A", key] : "ok") " / " \
            (("B", key) in bad ? "B " bad["B", key] : "ok")
      if (("A", key) in bad || ("B", key) in bad) fail = 1
      printf "%-40s %-11s %5s %10.1f %10.1f %7.3f  %s\n", f[1], f[2], f[3],
             a, b, b / a, chk
    }
    for (i = 1; i <= extras; i++) {
      print extra[i] ": A missing"
      fail = 1
    }
    if (rows == 0) { print "ab: no rows from A"; fail = 1 }
    exit fail
  }' "$out/A" "$out/B"
rc=$?
# (no rows: what lowbit bench said instead)
[ -s "$out/A" ] || tail -n 3 "$out/raw-A"
echo "(logs: $out)"
exit $rc
