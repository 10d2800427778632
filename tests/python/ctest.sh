#!/bin/sh
# ctest's "python" test: pytest on tests/python against the liblowbit.so of
# this build (LOWBIT_LIB=LIB; PYTHONPATH comes from the test's environment).
# usage: ctest.sh PYTHON LIB WHYFILE [PRELOAD]
# Exits 77 (skipped) when something the tests need is missing, and keeps
# the reason in WHYFILE, which ctest's post-test command prints (ctest
# shows no output of a skipped test).  PRELOAD: the sanitizer runtimes of a
# sanitized build, which an unsanitized interpreter must load first to
# dlopen that liblowbit.so; leaks are not checked there (Python keeps
# memory for its life).
py=$1
lib=$2
why=$3
preload=${4:-}
rm -f "$why"
skip() {
  echo "SKIPPED: $*" | tee "$why"
  exit 77
}
[ -n "$py" ] && command -v "$py" >/dev/null 2>&1 || skip "no Python 3 interpreter (CMake found none)"
[ -f "$lib" ] || skip "liblowbit.so is not built (LB_SHARED is OFF, or configure said why)"
"$py" -c "import numpy, pytest" 2>/dev/null ||
  skip "numpy or pytest is not installed for $py (pip install numpy pytest)"
export LOWBIT_LIB="$lib"
if [ -n "$preload" ]; then
  for f in $preload; do
    [ -f "$f" ] || skip "sanitized build, and the sanitizer runtime $f to preload into $py was not found (LB_SANITIZE is checked from Python with GCC's shared runtimes)"
  done
  export LD_PRELOAD="$preload${LD_PRELOAD:+ $LD_PRELOAD}"
  export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
fi
exec "$py" -m pytest -q -rs -p no:cacheprovider "$(dirname "$0")"
