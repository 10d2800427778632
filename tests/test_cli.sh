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
  elif [ "$want" -eq 2 ] && grep -qE '(^|[^a-z_])lb_[a-z0-9_]+: ' "$tmp/out"; then
    fail "$name: a usage error names a library function"
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
expect "integer too large" 2 "--n 4294967296: too large (n * k must be below 2^31" $none "$lowbit" gen "$r" --n 4294967296
expect "integer overflowing long" 2 "too large" $none "$lowbit" gen "$r" --k 99999999999999999999999
expect "not an integer" 2 "--n abc: not a positive integer" $none "$lowbit" gen "$r" --n abc
expect "negative integer" 2 "--n -5: not a positive integer" $none "$lowbit" gen "$r" --n -5
# digits only: strtol alone took " 32" and "+4" but not "32 " (until 2026-12-02)
expect "integer with a space" 2 "--n  32: not a positive integer" $none "$lowbit" gen "$r" --n " 32"
expect "integer with a plus" 2 "--m +4: not a positive integer" $none "$lowbit" gen "$r" --m +4
# a recipe's error text reaches the terminal without its control bytes
printf 'name "x"\nerror("a\\27[31mred")\n' >"$tmp/esc.lua"
expect "control bytes in a message" 1 "esc.lua:2: a?[31mred" $none "$lowbit" check "$tmp/esc.lua"
if grep -q "$(printf '\033')" "$tmp/out"; then fail "an escape byte reached the output"; else echo "ok   no escape byte in the output"; fi
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
expect "run --k 100" 2 "lowbit run: --k 100: must be a multiple of 32 (the recipe's group, 128, too)" $none "$lowbit" run "$r" --k 100
expect "run --k 96, group 128" 2 "lowbit run: --k 96: must be a multiple of the recipe's group, 128" $none "$lowbit" run "$r" --k 96
expect "run, missing recipe" 1 "cannot open recipe: No such file or directory" $none "$lowbit" run "$tmp/nothere.lua"
not "run, missing recipe: GPU not looked for" "no GPU"
expect "run, bad recipe" 1 "mid.lua:2: resulting string too large" $none "$lowbit" run "$tmp/mid.lua"
expect "run stdin" 2 "standard input" "$r" "$lowbit" run -
expect "run --flush" 2 "--flush sideways: wants read, write or both" $none "$lowbit" run "$r" --flush sideways
expect "run --iters" 2 "--iters 1000000: too large" $none "$lowbit" run "$r" --iters 1000000
expect "bench --shapes 100x100" 2 "--shapes 100x100 (K x N) with a16w4_g128: K must be a multiple of 32" $none "$lowbit" bench "$r" --shapes 100x100
expect "bench --shapes 4096" 2 "'4096' is not KxN" $none "$lowbit" bench "$r" --shapes 4096
expect "bench --shapes 4096x" 2 "--shapes: '4096x': N is missing" $none "$lowbit" bench "$r" --shapes 4096x
expect "bench --shapes 4096x-1" 2 "--shapes: '4096x-1': N -1 is not a positive integer" $none "$lowbit" bench "$r" --shapes 4096x-1
expect "run, no GPU" 3 "no GPU" $none "$lowbit" run "$r" --m 1,8 --n 4096 --k 4096
expect "bench, no GPU" 3 "no GPU" $none "$lowbit" bench "$r" --shapes 4096x4096 --m 1

# tune: arguments checked before the GPU; plans in words for gen and compile
expect "tune --m 0" 2 "--m 0: not a positive integer" $none "$lowbit" tune "$r" --m 16,0
expect "tune --k 100" 2 "--k 100: must be a multiple of 32" $none "$lowbit" tune "$r" --k 100
expect "tune --shapes, one bad" 2 "--shapes 100x64 (K x N) with a16w4_g128: K must be a multiple of 32" $none "$lowbit" tune "$r" --shapes 4096x4096,100x64
expect "tune --shapes, no GPU" 3 "no GPU" $none "$lowbit" tune "$r" --shapes 4096x4096,8192x48
expect "tune stdin" 2 "not standard input" "$r" "$lowbit" tune -
expect "tune, two recipes" 2 "usage:" $none "$lowbit" tune "$r" "$r"
expect "tune, no GPU" 3 "no GPU" $none "$lowbit" tune "$r" --n 4096 --k 4096 --dry-run --verbose
expect "gen --plan" 0 'Plan changed by the caller: "wn=2,st=3"' $none "$lowbit" gen "$r" --m 64 --plan wn=2,st=3
expect "gen --plan, bad knob" 2 "--plan wn=5 for m = 64 (a16w4_g128's GEMM): wn must be a power of two" $none "$lowbit" gen "$r" --m 64 --plan wn=5
expect "gen --plan rows=16 for 24 rows (the GEMM's)" 2 "--plan rows=16 for m = 24 (a16w4_g128's GEMM): rows is the GEMV's knob" $none "$lowbit" gen "$r" --n 8192 --k 8192 --m 24 --plan rows=16
expect "gen --plan, a GEMM plan for the GEMV" 2 "--plan wn=2 for m = 8 (a16w4_g128's GEMV): unknown knob at \"wn=2\"" $none "$lowbit" gen "$r" --m 8 --plan wn=2
expect "gen --plan, the GEMV" 0 'Plan changed by the caller: "split=2"' $none "$lowbit" gen "$r" --m 8 --plan split=2
expect "compile --plan rows=32: the GEMV takes 24 rows" 0 "a16w4_g128 m=24: gemv, the plan \"rows=32\"" $none "$lowbit" compile "$r" --m 24 --n 256 --k 256 --plan rows=32
expect "gen --plan rows=32: four fragments" 0 "constexpr int LB_NF = 4;" $none "$lowbit" gen "$r" --m 24 --plan rows=32
expect "gen --plan rows=64" 2 "--plan rows=64 for m = 1 (a16w4_g128's GEMV): rows must be a power of two in 1..32" $none "$lowbit" gen "$r" --m 1 --plan rows=64
expect "compile --plan rows=32, 6-bit codes" 2 "--plan rows=32 for m = 24 (a16w6_g128's GEMV): rows=32: recipe 'a16w6_g128': its GEMV takes 16 rows at most (6-bit codes: four fragments of x spill)" $none "$lowbit" compile "$recipes/../bench/recipes/a16w6_g128.lua" --m 24 --n 256 --k 256 --plan rows=32
expect "compile: the plan as knobs" 0 "plan: wn=2,wk=" $none "$lowbit" compile "$r" --m 64 --n 256 --k 256 --plan wn=2
expect "compile: LOWBIT_GEMM's plan as knobs" 0 "plan: wn=2,wk=" $none env LOWBIT_GEMM=wn=2 "$lowbit" compile "$r" --m 64 --n 256 --k 256
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

# Each command takes its own options only, and checks every argument
# before the GPU is looked for (a bad plan or M list never ends in "no GPU").
expect "run --plan: not run's" 2 "--plan is not an option of run (gen and compile take it)" $none "$lowbit" run "$r" --plan foo=1
not "run --plan: before the GPU" "no GPU"
expect "run --arch: not run's" 2 "--arch is not an option of run" $none "$lowbit" run "$r" --arch sm_80
expect "bench --n: not bench's" 2 "--n is not an option of bench" $none "$lowbit" bench --n 5
also "bench --n: bench's usage" "lowbit bench [RECIPE...]"
expect "check --n: not check's" 2 "--n is not an option of check" $none "$lowbit" check "$r" --n 5
expect "gen --iters: not gen's" 2 "--iters is not an option of gen (run, bench and tune take it)" $none "$lowbit" gen "$r" --iters 5
expect "tune --sms: not tune's" 2 "--sms is not an option of tune" $none "$lowbit" tune "$r" --sms 100
expect "cache --m: not cache's" 2 "--m is not an option of cache" $none "$lowbit" cache list --m 1
expect "an option given twice" 2 "--m given twice" $none "$lowbit" gen "$r" --m 1 --m 2
expect "compile --m 1,4,4" 2 "--m 1,4,4: 4 is given twice" $none "$lowbit" compile "$r" --m 1,4,4
expect "bench --shapes twice" 2 "--shapes 4096x4096,8192x8192,4096x4096: 4096x4096 is given twice" $none "$lowbit" bench "$r" --shapes 4096x4096,8192x8192,4096x4096
expect "compile --arch 90,sm_90" 2 "--arch 90,sm_90: sm_90 is given twice" $none "$lowbit" compile "$r" --arch 90,sm_90
expect "tune --shapes and --n" 2 "--shapes and --n/--k: give one or the other" $none "$lowbit" tune "$r" --n 4096 --shapes 4096x4096
expect "run --m 1,,2" 2 "--m 1,,2: an empty item" $none "$lowbit" run "$r" --m 1,,2
not "run --m 1,,2: before the GPU" "no GPU"
expect "bench --m 1," 2 "--m 1,: an empty item" $none "$lowbit" bench "$r" --m 1,
expect "compile --m ,1" 2 "--m ,1: an empty item" $none "$lowbit" compile "$r" --m ,1
expect "compile --arch 80,,90" 2 "--arch 80,,90: an empty item" $none "$lowbit" compile "$r" --arch 80,,90
expect "gen --m 1,,2" 2 "--m 1,,2: gen writes one M's kernel (compile takes a list)" $none "$lowbit" gen "$r" --m 1,,2
expect "gen --m 1,2" 2 "gen writes one M's kernel" $none "$lowbit" gen "$r" --m 1,2
expect "run --m 0,1 --plan: the option first" 2 "--plan is not an option of run" $none "$lowbit" run "$r" --m 1 --plan wn=2

# Usage errors exit 2 and speak of options, not of library functions.
expect "gen --k 100" 2 "lowbit gen: --k 100: must be a multiple of 32 (the recipe's group, 128, too)" $none "$lowbit" gen "$r" --k 100
expect "gen --k 100, per channel" 2 "lowbit gen: --k 100: must be a multiple of 32" $none "$lowbit" gen a16w8_channel --k 100
expect "compile --k 96" 2 "lowbit compile: --k 96: must be a multiple of the recipe's group, 128" $none "$lowbit" compile "$r" --k 96
expect "gen n * k too large" 2 "--n 65536 --k 65536: n * k = 4294967296 must be below 2^31" $none "$lowbit" gen "$r" --n 65536 --k 65536
expect "gen --k too large" 2 "--k 134217728: too large (at most 67108864, 2^26)" $none "$lowbit" gen "$r" --k 134217728
expect "gen --sms 2000" 2 "--sms 2000: too large (at most 1024)" $none "$lowbit" gen "$r" --sms 2000
expect "gen --m 2147483648" 2 "--m 2147483648: ops take M from 1 to 1048576" $none "$lowbit" gen "$r" --m 2147483648
expect "compile --plan foo=1" 2 "--plan foo=1 for m = 1 (a16w4_g128's GEMV): unknown knob at \"foo=1\"" $none "$lowbit" compile "$r" --plan foo=1
not "compile --plan foo=1: nothing compiled" "cache:"
expect "compile --plan, one M's kernel" 2 "--plan wn=2 for m = 1 (a16w4_g128's GEMV)" $none "$lowbit" compile "$r" --m 64,1 --plan wn=2 --n 256 --k 256
not "compile --plan, one M's kernel: nothing compiled" "sm_90:"
expect "bench --shapes 8192x" 2 "'8192x': N is missing" $none "$lowbit" bench "$r" --shapes 8192x
expect "bench --shapes x8192" 2 "'x8192': K is missing" $none "$lowbit" bench "$r" --shapes x8192
expect "gen a.lua b.lua" 2 "gen takes one recipe, given 2 (a.lua, b.lua); compile takes several" $none "$lowbit" gen a.lua b.lua
expect "gen, no recipe" 2 "lowbit gen: no recipe given" $none "$lowbit" gen
expect "run, two recipes" 2 "run takes one recipe, given 2" $none "$lowbit" run "$r" "$r"
# "no GPU" (3) on stderr, standard output empty
for c in "run $r --n 4096 --k 4096" "bench $r --shapes 4096x4096 --m 1" "tune $r --n 4096 --k 4096"; do
  # shellcheck disable=SC2086
  "$lowbit" $c >"$tmp/o1" 2>"$tmp/out"
  rc=$?
  if [ $rc -eq 3 ] && [ ! -s "$tmp/o1" ] && grep -q "^no GPU" "$tmp/out"; then
    echo "ok   ${c%% *}: no GPU on stderr, exit 3"
  else
    cp "$tmp/o1" "$tmp/out"; fail "${c%% *}: no GPU: exit $rc, or not on stderr only"
  fi
done

# compile takes several recipes, each in turn; the status line is for a
# terminal only
expect "compile, two recipes" 0 "a16w3_g128 m=16 (gemv) sm_90:" $none "$lowbit" compile "$r" a16w3_g128 --arch sm_80,sm_90 --m 1,16 --n 256 --k 256
also "compile, two recipes: the first" "a16w4_g128 m=1 (gemv) sm_80:"
not "compile, piped: no status line" "[1/8]"
"$lowbit" compile "$r" a16w3_g128 --n 256 --k 256 2>"$tmp/out" >/dev/null
if [ ! -s "$tmp/out" ]; then echo "ok   compile, piped: nothing on stderr"; else fail "compile, piped: stderr not empty"; fi
expect "compile, one recipe missing" 1 "nothere.lua: cannot open recipe" $none "$lowbit" compile "$tmp/nothere.lua" "$r" --n 256 --k 256 --arch 80
also "compile, one recipe missing: the other compiled" "a16w4_g128 m=1 (gemv) sm_80:"
if script -qc true /dev/null >/dev/null 2>&1; then
  script -qc "'$lowbit' compile '$r' a16w3_g128 --n 256 --k 256 --arch 80,90" "$tmp/tty" >/dev/null 2>&1
  cp "$tmp/tty" "$tmp/out"
  if grep -qF "[4/4] a16w3_g128 m=1 sm_90: compile" "$tmp/tty"; then
    echo "ok   compile, on a terminal: the status line"
  else
    fail "compile, on a terminal: no '[4/4] ...' status"
  fi
else
  echo "skip compile, on a terminal: no script(1) here"
fi

# bench --out makes its directory (mkdir -p), or says why it cannot
expect "bench --out, new directories" 3 "no GPU" $none "$lowbit" bench "$r" --shapes 4096x4096 --m 1 --out "$tmp/res/a/b"
if [ -d "$tmp/res/a/b" ]; then echo "ok   bench --out: directory made"; else fail "bench --out: $tmp/res/a/b not made"; fi
expect "bench --out ''" 2 "--out wants a directory" $none "$lowbit" bench "$r" --out ""
expect "bench --out under a file" 2 "--out $tmp/plainfile/x: $tmp/plainfile is not a directory" $none "$lowbit" bench "$r" --out "$tmp/plainfile/x"
expect "bench --out, a bad shape: no directory" 2 "must be a multiple" $none "$lowbit" bench "$r" --shapes 100x100 --out "$tmp/res2"
if [ ! -e "$tmp/res2" ]; then echo "ok   bench --out: none made on a usage error"; else fail "bench --out: made though the shape was bad"; fi
# --flush both: taken by run and bench (the GPU then times each row twice)
expect "run --flush both" 3 "no GPU" $none "$lowbit" run "$r" --n 4096 --k 4096 --flush both
expect "bench --flush both" 3 "no GPU" $none "$lowbit" bench "$r" --shapes 4096x4096 --m 1 --flush both
expect "help: --flush both" 0 "--flush read|write|both" $none "$lowbit" --help

# bench's default recipes are names, found from any directory (the
# source tree's recipes/ through LB_RECIPES), and by the installed tool on
# LOWBIT_RECIPE_PATH even where its configured directory does not exist
(cd "$tmp" && env -u LOWBIT_RECIPE_PATH "$lowbit" bench --shapes 4096x4096 --m 1) >"$tmp/out" 2>&1
rc=$?
if [ $rc -eq 3 ]; then echo "ok   bench: the default recipes found by name"; else fail "bench, default recipes: exit $rc, not 3"; fi
# a name found nowhere: the build-tree tool says LOWBIT_RECIPE_PATH's
# last directory was its own doing
expect "check: a name found nowhere" 1 "no nosuch_recipe.lua in LOWBIT_RECIPE_PATH" $none env -u LOWBIT_RECIPE_PATH "$lowbit" check nosuch_recipe
also "check: the tree's recipes/ said as the tool's" "(this lowbit, in a build tree, adds the source tree's"
inst=$(dirname "$lowbit")/installed/lowbit
if [ -x "$inst" ]; then
  expect "installed check: a name found nowhere" 1 "LOWBIT_RECIPE_PATH (unset)" $none env -u LOWBIT_RECIPE_PATH "$inst" check nosuch_recipe
  not "installed check: no word of a build tree" "in a build tree"
  (cd "$tmp" && LOWBIT_RECIPE_PATH=$recipes "$inst" bench --shapes 4096x4096 --m 1) >"$tmp/out" 2>&1
  rc=$?
  if [ $rc -eq 3 ]; then echo "ok   installed tool: default recipes on LOWBIT_RECIPE_PATH"; else fail "installed tool, default recipes: exit $rc, not 3"; fi
else
  echo "skip installed tool: not built beside $lowbit"
fi

# cache list: newest first, the kernel that tells entries of one shape
# apart, FIFOs and directories named like entries or tables listed as
# what they are (not read: a FIFO would hang an open); cache clear keeps
# such a directory and says so
c="$tmp/cache-more"
env LOWBIT_CACHE_DIR="$c" "$lowbit" compile "$r" --n 512 --k 256 --arch 80 --m 1,64 >/dev/null 2>&1
for f in "$c"/*.lbc; do touch -d "2020-01-01 00:00" "$f"; done
env LOWBIT_CACHE_DIR="$c" "$lowbit" compile "$recipes/a16w2_g64.lua" --n 512 --k 256 --arch 80 >/dev/null 2>&1
mkfifo "$c/tune-fifo.txt" "$c/0123456789abcdee.lbc"
mkdir "$c/0123456789abcdef.lbc" "$c/tune-dir.txt"
if command -v timeout >/dev/null; then to="timeout 20"; else to=""; fi
# shellcheck disable=SC2086
expect "cache list, FIFOs and directories" 0 "0123456789abcdee.lbc  not a regular file (a FIFO)" $none env LOWBIT_CACHE_DIR="$c" $to "$lowbit" cache list
also "cache list: a directory named like an entry" "0123456789abcdef.lbc  not a regular file (a directory)"
also "cache list: a FIFO named like a table" "tune-fifo.txt: not a regular file (a FIFO)"
also "cache list: a directory named like a table" "tune-dir.txt: not a regular file (a directory)"
also "cache list: the count" "3 entries"
also "cache list: the kernel column" "gemm 33..64"
also "cache list: the plan column" "rules"
first=$(grep -m1 -E '^[0-9a-f]{16}\.lbc +[0-9]' "$tmp/out")
case "$first" in *a16w2_g64*) echo "ok   cache list: newest first" ;; *) fail "cache list: not newest first: $first" ;; esac
if grep -E 'a16w4_g128 +512 +256 +sm_80 +gemv 1\.\.8 ' "$tmp/out" >/dev/null &&
   grep -E 'a16w4_g128 +512 +256 +sm_80 +gemm 33\.\.64 ' "$tmp/out" >/dev/null; then
  echo "ok   cache list: one shape's two kernels told apart"
else
  fail "cache list: no gemv/gemm rows for a16w4_g128 512 256 sm_80"
fi
# the columns line up: "n" of the header over each row's n
hn=$(head -2 "$tmp/out" | tail -1 | awk '{print index($0, " n ")}')
ok=1
while IFS= read -r line; do
  case "$line" in [0-9a-f]*.lbc\ *[0-9]\ *) ;; *) continue ;; esac
  case "$line" in *"not a regular"*) continue ;; esac
  [ "${line:$hn:1}" != " " ] || [ "${line:$((hn - 1)):1}" != " " ] || ok=0
done <"$tmp/out"
# (a long recipe name widens its column rather than push the rest)
sed 's/^name .*/name "a16w4_g128_with_a_name_longer_than_the_column"/' "$r" >"$tmp/long.lua"
env LOWBIT_CACHE_DIR="$c" "$lowbit" compile "$tmp/long.lua" --n 512 --k 256 --arch 80 >/dev/null 2>&1
env LOWBIT_CACHE_DIR="$c" "$lowbit" cache list >"$tmp/out" 2>&1
a=$(grep -E ' a16w4_g128_with' "$tmp/out" | awk '{print index($0, " 512 ")}')
b=$(grep -E ' a16w2_g64 ' "$tmp/out" | head -1 | awk '{print index($0, " 512 ")}')
if [ $ok -eq 1 ] && [ -n "$a" ] && [ "$a" = "$b" ]; then echo "ok   cache list: columns aligned"; else fail "cache list: columns not aligned ($a, $b)"; fi
expect "cache clear, a directory named like an entry" 0 "kept 0123456789abcdef.lbc: a directory named like a cache entry, not one" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" cache clear
if [ -d "$c/0123456789abcdef.lbc" ] && ! ls "$c"/*.lbc 2>/dev/null | grep -v 0123456789abcdef >/dev/null; then
  echo "ok   cache clear: entries gone, the directory kept"
else
  fail "cache clear: wrong files removed"
fi
env LOWBIT_CACHE_DIR="$tmp/cache-plan" LOWBIT_GEMM=wn=4 "$lowbit" compile "$r" --n 512 --k 256 --arch 80 --m 100 >/dev/null 2>&1
expect "cache list: a plan set by LOWBIT_GEMM" 0 "(LOWBIT_GEMM)" $none env LOWBIT_CACHE_DIR="$tmp/cache-plan" "$lowbit" cache list
also "cache list: its knobs and kernel" "gemm 65..160  132"

# an entry whose header is damaged lists with its unknowns as '?' (it
# said sm_0 until 2026-12-02)
c="$tmp/cache-damaged"
mkdir -p "$c"
printf 'not an entry, not a header' >"$c/0123456789abcded.lbc"
expect "cache list, a damaged entry" 0 "1 entry" $none env LOWBIT_CACHE_DIR="$c" "$lowbit" cache list
if grep -E '^0123456789abcded\.lbc +26 +\? +0 +0 +\? ' "$tmp/out" >/dev/null; then
  echo "ok   cache list: a damaged entry's arch is '?'"
else
  fail "cache list: a damaged entry: $(grep 0123456789abcded "$tmp/out")"
fi
echo "$failures failure(s)"
[ "$failures" -eq 0 ]
