#!/usr/bin/env bash
# The command line as users run it: shipped configs, outputs, determinism, exit codes and
# messages for bad input. Usage: cli_test.sh IPUSIM SOURCE_DIR
set -u
ipusim=$1
cd "$2"
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fails=0; passes=0
ok()   { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
expect() { # expect CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  local got; got=$("$@" 2>&1); local rc=$?
  [ "$rc" = "$code" ] || { fail "'$*' exited $rc, expected $code: $got"; return; }
  grep -qF -- "$pattern" <<<"$got" || { fail "'$*' output lacks '$pattern': $got"; return; }
  ok
}

# Runs write their summary (and trace on request) into the output folder.
expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --out "$out/a" --trace
[ -s "$out/a/summary.json" ] && [ -s "$out/a/trace.json" ] && ok || fail "summary or trace missing"
grep -q '"traceEvents"' "$out/a/trace.json" && ok || fail "trace is not Chrome trace JSON"
expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --out "$out/b" --trace

# Determinism: identical trace bytes, identical summary apart from the simulator's wall clock.
cmp -s "$out/a/trace.json" "$out/b/trace.json" && ok || fail "traces differ between identical runs"
strip() { sed '/"simulator": {/,/}/d' "$1"; }
[ "$(strip "$out/a/summary.json")" = "$(strip "$out/b/summary.json")" ] && ok || fail "summaries differ between identical runs"

for f in configs/schedules/*.json configs/mnist/train.json configs/mnist/infer.json configs/mnist/pipelined*.json configs/mnist/sharded.json configs/mnist/offload_optimiser.json configs/mnist/phased_*.json; do
  expect 0 "total" -- "$ipusim" run "$f" --out "$out/c"
done
expect 0 "/system/ipu/tiles" -- "$ipusim" params
expect 0 "Usage" -- "$ipusim" --help
expect 0 "--set" -- "$ipusim" run --help

# Bad input: a clear message naming the file and JSON path, a non-zero exit, no outputs.
expect 1 "/system/ipu/tiles: expected integer, >= 1" -- "$ipusim" run configs/default.json --out "$out/d" --set /system/ipu/tiles=-3
[ ! -e "$out/d/summary.json" ] && ok || fail "a failed run left a summary"
expect 1 "not a JSON pointer" -- "$ipusim" run configs/default.json --out "$out/d" --set tiles=3
expect 1 "cannot read file" -- "$ipusim" run configs/nope.json --out "$out/d"
expect 1 "unknown key \"tilez\"" -- "$ipusim" run configs/default.json --out "$out/d" --set /system/ipu/tilez=3
expect 2 "" -- "$ipusim" run
expect 2 "" -- "$ipusim" frobnicate

# The tutorial: 3 epochs of training, then inference in its own process, in one run.
expect 0 "then inference:" -- "$ipusim" run configs/mnist/pipelined.json --out "$out/t" --trace
[ -s "$out/t/summary.json" ] && [ -s "$out/t/inference/summary.json" ] && [ -s "$out/t/inference/trace.json" ] && ok || fail "tutorial outputs missing"
grep -q '"run_total"' "$out/t/summary.json" && ok || fail "no run_total in the tutorial summary"
expect 1 "/inference/micro_batch: expected integer, >= 1" -- "$ipusim" run configs/mnist/pipelined.json --out "$out/t2" --set /inference/micro_batch=0

# Out of memory: a report, exit 3, and no summary or trace.
expect 3 "out of memory on IPU 0" -- "$ipusim" run configs/mnist/oom.json --out "$out/e" --trace
[ -s "$out/e/oom_report.json" ] && [ ! -e "$out/e/summary.json" ] && [ ! -e "$out/e/trace.json" ] && [ ! -e "$out/e/trace.json.tmp" ] \
  && ok || fail "out of memory left the wrong files: $(ls "$out/e")"

echo "$passes passed, $fails failed"
[ "$fails" = 0 ]
