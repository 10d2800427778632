#!/usr/bin/env bash
# test_cli.sh LOWBIT RECIPE_DIR: the command-line tool's exit statuses
# (0 ok, 1 failure, 2 usage error, 3 no GPU) and what its messages say.
# No GPU is used: CUDA_VISIBLE_DEVICES is empty, so `run` must refuse bad
# arguments (2) before it finds that there is no GPU (3), here as on a
# machine with one.
set -u
lowbit=$1
recipes=$2
r=$recipes/a16w4_g128.lua
export CUDA_VISIBLE_DEVICES=
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0

fail() {
  echo "FAIL $*"
  sed 's/^/  | /' "$tmp/out" | head -20
  failures=$((failures + 1))
}

# expect NAME STATUS TEXT INPUT COMMAND...: runs COMMAND with INPUT as
# its standard input; wants the exit status and TEXT in what it printed.
expect() {
  local name=$1 want=$2 text=$3 input=$4 rc
  shift 4
  "$@" <"$input" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -ne "$want" ]; then
    fail "$name: exit status $rc, expected $want"
  elif ! grep -qF -- "$text" "$tmp/out"; then
    fail "$name: output lacks \"$text\""
  else
    echo "ok   $name"
  fi
}

# accepted NAME NOTTEXT INPUT COMMAND...: the arguments are accepted (exit
# status 0 or 1: whether NVRTC compiles the kernel is not this test's
# business) and the output does not hold NOTTEXT.
accepted() {
  local name=$1 text=$2 input=$3 rc
  shift 3
  "$@" <"$input" >"$tmp/out" 2>&1
  rc=$?
  if [ "$rc" -gt 1 ]; then
    fail "$name: exit status $rc, expected 0 or 1"
  elif grep -qF -- "$text" "$tmp/out"; then
    fail "$name: output holds \"$text\""
  else
    echo "ok   $name"
  fi
}

# also NAME TEXT: the last command's output holds TEXT as well.
also() {
  if grep -qF -- "$2" "$tmp/out"; then echo "ok   $1"; else fail "$1: output lacks \"$2\""; fi
}

# not NAME TEXT: the last command's output does not hold TEXT.
not() {
  if grep -qF -- "$2" "$tmp/out"; then fail "$1: output holds \"$2\""; else echo "ok   $1"; fi
}

none=/dev/null
printf 'name "mid"\nlocal s = string.rep("ab", 2^40)\n' >"$tmp/mid.lua"
printf 'name "half"\n' >"$tmp/half.lua"
mkdir "$tmp/dir.lua"
head -c $((1 << 20)) /dev/zero | tr '\0' '-' >"$tmp/big.lua"
echo >>"$tmp/big.lua"

# usage
expect "help" 0 "3 no GPU" $none "$lowbit" --help
also "help: --m takes a list" "--m M[,M...]"
expect "no arguments" 2 "usage:" $none "$lowbit"
expect "unknown command" 2 "unknown command 'frob'" $none "$lowbit" frob

# options: the name is checked before its value is asked for
expect "unknown last option" 2 "unknown option --bogus" $none "$lowbit" gen "$r" --bogus
not "unknown last option: no value asked for" "needs a value"
expect "known last option" 2 "--n needs a value" $none "$lowbit" gen "$r" --n
expect "integer too large" 2 "--n 4294967296: too large (at most 1073741824)" $none "$lowbit" gen "$r" --n 4294967296
expect "integer overflowing long" 2 "too large" $none "$lowbit" gen "$r" --k 99999999999999999999999
expect "not an integer" 2 "--n abc: not a positive integer" $none "$lowbit" gen "$r" --n abc
expect "negative integer" 2 "--n -5: not a positive integer" $none "$lowbit" gen "$r" --n -5
expect "arch sm_90a" 2 "'sm_90a' is not a supported arch spelling" $none "$lowbit" compile "$r" --arch sm_90a
expect "arch 90,sm_8x" 2 "'sm_8x' is not a supported arch spelling" $none "$lowbit" compile "$r" --arch 90,sm_8x
expect "arch sm_75" 2 "'sm_75': lowbit needs sm_80" $none "$lowbit" compile "$r" --arch sm_75
accepted "arch spelt NN" "--arch" $none "$lowbit" compile "$r" --arch 90

# reading recipes
expect "check" 0 "a16w4_g128.lua: ok (a16w4_g128)" $none "$lowbit" check "$r"
expect "check stdin" 0 "stdin: ok (a16w4_g128)" "$r" "$lowbit" check -
expect "check /dev/stdin" 0 "/dev/stdin: ok (a16w4_g128)" "$r" "$lowbit" check /dev/stdin
expect "check stdin, bad" 1 "stdin:1: recipe has no 'activations' section" "$tmp/half.lua" "$lowbit" check -
expect "check stdin twice" 2 "'-' (standard input) given twice" "$r" "$lowbit" check - -
expect "gen stdin" 0 "__global__" "$r" "$lowbit" gen -
accepted "compile stdin" "stdin" "$r" "$lowbit" compile - --arch sm_80
expect "missing recipe" 1 "$tmp/nothere.lua: cannot open recipe: No such file or directory" $none "$lowbit" check "$tmp/nothere.lua"
expect "directory" 1 "$tmp/dir.lua: is a directory, not a recipe file" $none "$lowbit" check "$tmp/dir.lua"
expect "over 1 MiB" 1 "big.lua: recipe is 1048577 bytes, more than the limit of 1 MiB" $none "$lowbit" check "$tmp/big.lua"
expect "over 1 MiB on stdin" 1 "stdin: recipe is more than the limit of 1 MiB" "$tmp/big.lua" "$lowbit" check -
expect "three files, middle bad" 1 "$tmp/mid.lua:2: resulting string too large" $none \
  "$lowbit" check "$r" "$tmp/mid.lua" "$recipes/a16w2_g64.lua"
also "three files: first ok" "a16w4_g128.lua: ok"
also "three files: last ok" "a16w2_g64.lua: ok"
expect "three files, middle missing" 1 "$tmp/nothere.lua: cannot open recipe: No such file" $none \
  "$lowbit" check "$r" "$tmp/nothere.lua" "$recipes/a16w2_g64.lua"
expect "gen -o unwritable" 1 "cannot write $tmp/no/k.cu: No such file or directory" $none "$lowbit" gen "$r" -o "$tmp/no/k.cu"

# run and bench: every argument checked before the GPU is looked for
expect "run --m 2000000" 2 "--m 2000000: ops take M from 1 to 1048576" $none "$lowbit" run "$r" --m 2000000
expect "run --m 1,0" 2 "--m 0: not a positive integer" $none "$lowbit" run "$r" --m 1,0
expect "run --k 100" 2 "k = 100 must be a multiple of 32" $none "$lowbit" run "$r" --k 100
expect "run --k 96, group 128" 2 "k = 96 must be a multiple of the recipe's group size 128" $none "$lowbit" run "$r" --k 96
expect "run, missing recipe" 1 "cannot open recipe: No such file or directory" $none "$lowbit" run "$tmp/nothere.lua"
not "run, missing recipe: GPU not looked for" "no GPU"
expect "run, bad recipe" 1 "mid.lua:2: resulting string too large" $none "$lowbit" run "$tmp/mid.lua"
expect "run stdin" 2 "standard input" "$r" "$lowbit" run -
expect "run --flush" 2 "--flush sideways: wants read or write" $none "$lowbit" run "$r" --flush sideways
expect "run --iters" 2 "--iters 1000000: too large" $none "$lowbit" run "$r" --iters 1000000
expect "bench --shapes 100x100" 2 "k = 100 must be a multiple of 32" $none "$lowbit" bench "$r" --shapes 100x100
expect "bench --shapes 4096" 2 "'4096' is not KxN" $none "$lowbit" bench "$r" --shapes 4096
expect "bench --shapes 4096x" 2 "not a positive integer" $none "$lowbit" bench "$r" --shapes 4096x
expect "bench --out missing" 2 "--out $tmp/no: No such file or directory" $none "$lowbit" bench "$r" --out "$tmp/no"
expect "run, no GPU" 3 "no GPU" $none "$lowbit" run "$r" --m 1,8 --n 4096 --k 4096
expect "bench, no GPU" 3 "no GPU" $none "$lowbit" bench "$r" --shapes 4096x4096 --m 1

# tune: arguments checked before the GPU; plans in words for gen and compile
expect "tune --m 0" 2 "--m 0: not a positive integer" $none "$lowbit" tune "$r" --m 16,0
expect "tune --k 100" 2 "k = 100 must be a multiple of 32" $none "$lowbit" tune "$r" --k 100
expect "tune --shapes, one bad" 2 "K x N = 100 x 64: lb_sizes_of: k = 100 must be a multiple of 32" $none "$lowbit" tune "$r" --shapes 4096x4096,100x64
expect "tune --shapes, no GPU" 3 "no GPU" $none "$lowbit" tune "$r" --shapes 4096x4096,8192x48
expect "tune stdin" 2 "not standard input" "$r" "$lowbit" tune -
expect "tune, two recipes" 2 "usage:" $none "$lowbit" tune "$r" "$r"
expect "tune, no GPU" 3 "no GPU" $none "$lowbit" tune "$r" --n 4096 --k 4096 --dry-run --verbose
expect "gen --plan" 0 'Plan changed by the caller: "wn=2,st=3"' $none "$lowbit" gen "$r" --m 64 --plan wn=2,st=3
expect "gen --plan, bad knob" 1 'plan "wn=5": wn must be a power of two' $none "$lowbit" gen "$r" --m 64 --plan wn=5
expect "gen --plan, a GEMM plan for the GEMV" 1 'unknown knob at "wn=2"' $none "$lowbit" gen "$r" --m 8 --plan wn=2
expect "gen --plan, the GEMV" 0 'Plan changed by the caller: "split=2"' $none "$lowbit" gen "$r" --m 8 --plan split=2
expect "compile: the plan as knobs" 0 "plan: wn=2,wk=" $none "$lowbit" compile "$r" --m 64 --n 256 --k 256 --plan wn=2
expect "compile: the last rows apart" 0 "runs 256 rows, then the last 1 on their own kernel" $none "$lowbit" compile "$r" --m 257 --n 256 --k 256 --arch 80
expect "LOWBIT_PLAN, bad split" 1 'LOWBIT_PLAN: plan "split=3": split must be a power of two' $none env LOWBIT_PLAN=split=3 "$lowbit" gen "$r"
expect "LOWBIT_GEMM, unknown knob" 1 'LOWBIT_GEMM: plan "zz=1": unknown knob' $none env LOWBIT_GEMM=zz=1 "$lowbit" gen "$r" --m 64

# The cache and LOWBIT_DUMP_DIR, as lowbit gen and compile see them.
: >"$tmp/plainfile"
mkdir -p "$tmp/dump"
expect "compile: unusable cache named" 0 "not writable, kernels are compiled every time" $none env LOWBIT_CACHE_DIR="$tmp/plainfile/c" "$lowbit" compile "$r" --n 256 --k 256
expect "compile: cache off" 0 "cache: off" $none env LOWBIT_CACHE=0 "$lowbit" compile "$r" --n 256 --k 256
accepted "gen: LOWBIT_DUMP_DIR written" "LOWBIT_DUMP_DIR" $none env LOWBIT_DUMP_DIR="$tmp/dump" "$lowbit" gen "$r" --n 256 --k 256 -o "$tmp/g.cu"
if cmp -s "$tmp/g.cu" "$tmp"/dump/a16w4_g128-n256-k256-*.cu; then echo "ok   gen: dump equals the output"; else fail "gen: no dump equal to the output in $tmp/dump"; fi
expect "compile: LOWBIT_DUMP_DIR written" 0 "cache:" $none env LOWBIT_DUMP_DIR="$tmp/dump" "$lowbit" compile "$r" --n 512 --k 256
if ls "$tmp"/dump/a16w4_g128-n512-k256-*.cu >/dev/null 2>&1; then echo "ok   compile: dump written"; else fail "compile: no dump"; fi
expect "gen: unwritable LOWBIT_DUMP_DIR" 1 "LOWBIT_DUMP_DIR: cannot write $tmp/none/" $none env LOWBIT_DUMP_DIR="$tmp/none" "$lowbit" gen "$r" --n 256 --k 256 -o "$tmp/g2.cu"

# lowbit --version; recipes by name; lowbit cache list|clear|path
expect "--version" 0 "lowbit 0." $none "$lowbit" --version
expect "check by name" 0 "a16w4_g128: ok" $none "$lowbit" check a16w4_g128
expect "check, unknown name" 1 "no nosuch_recipe.lua in LOWBIT_RECIPE_PATH" $none "$lowbit" check nosuch_recipe
c="$tmp/cache-ls"
expect "cache list, empty" 0 "0 entries" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" cache list
expect "cache path" 0 "cache: $c" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" cache path
expect "compile into the cache" 0 "cache: $c" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" compile "$r" --n 512 --k 256 --arch 80
: >"$c/keep-me.txt"
expect "cache list, one entry" 0 "1 entry" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" cache list
if grep -qE "a16w4_g128 +512 +256 +sm_80" "$tmp/out"; then echo "ok   cache list names the recipe, shape and arch"; else fail "cache list: no 'a16w4_g128 512 256 sm_80' row"; fi
printf '# a table\nlowbit-tune 2 Some GPU, 132 SMs, sm_90, driver 13000, nvrtc 13.0\n0123456789abcdef 2 4096 4096 wn=2 10.00 12.00 a16w4_g128\n' >"$c/tune-0123456789abcdef.txt"
expect "cache list, a tuning table" 0 "tune-0123456789abcdef.txt: 1 plan(s), Some GPU, 132 SMs, sm_90" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" cache list
expect "cache clear" 0 "removed 1 file(s)" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" cache clear
if [ -f "$c/tune-0123456789abcdef.txt" ]; then echo "ok   cache clear keeps the tuning table"; else fail "cache clear removed the tuning table"; fi
if [ -f "$c/keep-me.txt" ] && ! ls "$c"/*.lbc >/dev/null 2>&1; then echo "ok   cache clear: entries gone, other files kept"; else fail "cache clear: wrong files removed"; fi
expect "cache list after clear" 0 "0 entries" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" cache list
expect "cache, no subcommand" 2 "wants list, clear or path" $none "$lowbit" cache
expect "cache off" 1 "no cache: LOWBIT_CACHE=0" $none env LOWBIT_CACHE=0 "$lowbit" cache list

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
