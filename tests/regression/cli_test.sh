#!/usr/bin/env bash
# The command line as users run it: shipped configs, outputs, determinism, exit codes and
# messages for bad input. One behaviour a case, each its own ctest entry (tests/CMakeLists.txt):
#   cli_test.sh --list                   the cases, a line each: NAME LABEL (fast or slow)
#   cli_test.sh IPUSIM SOURCE_DIR CASE   runs one case; exit 0 passed, 1 failed, 77 skipped
# A case writes only into its own temporary folder: the source tree may be read-only.
set -u

expect() { # expect CODE PATTERN -- command...
  local code=$1 pattern=$2; shift 3
  local got; got=$("$@" 2>&1); local rc=$?
  [ "$rc" = "$code" ] || { fail "'$*' exited $rc, expected $code: $got"; return; }
  grep -qF -- "$pattern" <<<"$got" || { fail "'$*' output lacks '$pattern': $got"; return; }
  ok
}
ok()   { passes=$((passes + 1)); }
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }
# skip WHY: the rest of the case cannot run here; a failure before it still fails the case
skip() { [ "$fails" = 0 ] || { echo "$passes passed, $fails failed (then skipped: $*)"; exit 1; }; echo "SKIPPED: $*"; exit 77; }
# summary.json without the simulator's wall clock, which differs run to run
strip() { sed '/"simulator": {/,/}/d' "$1"; }
png() { [ "$(head -c 8 "$1" | od -An -tx1 | tr -d ' \n')" = "89504e470d0a1a0a" ]; }
# a sweep's CSV rows by point, without the wall-clock column
rows() { tail -n +2 "$1" | cut -d, -f1-5,7- | sort -n; }
# the exchange-tiles sweep, run into DIR with the given options
# a sweep of the default config over AXES (JSON), written to $out/bad.json
bad_sweep() { printf '{"config": "%s/configs/default.json", "axes": %s}\n' "$PWD" "$1" > "$out/bad.json"; }
# $out/slow.json: loops of tile-0 compute that never repeat exactly (no sync: the tiles drift
# apart), about a second a point of the sweeps below; for stopping runs and sweeps midway.
slow_schedule() {
  cat > "$out/slow.json" <<JSON
{"system": {"base": "$PWD/configs/hardware/mk2.json"}, "workload": {"kind": "schedule", "steps": [{"op": "repeat", "name": "drift",
  "count": 3000000, "body": [{"op": "compute", "name": "c", "tiles": [{"tiles": [0, 0], "cycles": 7}]}]}]}}
JSON
}
# started FILE: FILE has content; created FILE: it exists (up to two minutes: a sanitizer build
# runs the points ten times slower).
started() { for _ in $(seq 1200); do [ -s "$1" ] && return 0; sleep 0.1; done; return 1; }
created() { for _ in $(seq 1200); do [ -e "$1" ] && return 0; sleep 0.1; done; return 1; }
tiles_sweep() { local dir=$1; shift; "$ipusim" sweep configs/sweeps/exchange_tiles.json "$@" --out "$dir"; }

# Runs write their summary (and trace on request); identical runs write identical bytes.
case_run_outputs_and_determinism() {
  expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --out "$out/a" --trace
  [ -s "$out/a/summary.json" ] && [ -s "$out/a/trace.json" ] && ok || fail "summary or trace missing"
  grep -q '"traceEvents"' "$out/a/trace.json" && ok || fail "trace is not Chrome trace JSON"
  expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --out "$out/b" --trace

  # Determinism: identical trace bytes, identical summary apart from the simulator's wall clock.
  cmp -s "$out/a/trace.json" "$out/b/trace.json" && ok || fail "traces differ between identical runs"
  [ "$(strip "$out/a/summary.json")" = "$(strip "$out/b/summary.json")" ] && ok || fail "summaries differ between identical runs"
}

# Every shipped config without a bundled model runs.
case_shipped_configs_run() {
  for f in configs/schedules/*.json configs/graph/*.json configs/mnist/train.json configs/mnist/infer.json configs/mnist/pipelined*.json configs/mnist/sharded.json configs/mnist/offload_optimiser.json configs/mnist/phased_*.json; do
    expect 0 "total" -- "$ipusim" run "$f" --out "$out/c" --force
  done
}

# ResNet-50 from the ONNX model the build exported ("bundled:resnet50.onnx"), found beside the program.
case_resnet_configs_run() {
  resnet=$(dirname "$ipusim")/models/resnet50.onnx
  [ -f "$resnet" ] || skip "this build exported no ONNX models (python3-torch and python3-torchvision are not installed)"
  for f in configs/resnet/*.json; do
    expect 0 "samples/s" -- "$ipusim" run "$f" --out "$out/c" --force
  done
  expect 1 "/workload/blocks/0/prefix: no node name of" -- "$ipusim" run configs/resnet/resnet50_pod16.json --out "$out/d" \
    --set '/workload/blocks=[{"name": "x", "prefix": "/layer5/"}]'
}

# The help and the parameter list print.
case_help_and_params() {
  expect 0 "/system/ipu/tiles" -- "$ipusim" params
  expect 0 "Usage" -- "$ipusim" --help
  expect 0 "--set" -- "$ipusim" run --help
}

# Bad input: a clear message naming the file and JSON path, a non-zero exit, no outputs, nor an earlier run's outputs to be taken for its own.
case_bad_input_messages() {
  expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --out "$out/a" --trace
  expect 1 "/system/ipu/tiles: expected integer, >= 1" -- "$ipusim" run configs/default.json --out "$out/d" --set /system/ipu/tiles=-3
  [ ! -e "$out/d/summary.json" ] && ok || fail "a failed run left a summary"
  # ... nor an earlier run's outputs to be taken for its own.
  expect 1 "/workload/io_tiles: expected 0 or an even number" -- "$ipusim" run configs/default.json --out "$out/a" --force \
    --set /workload/io_tiles=3
  [ ! -e "$out/a/summary.json" ] && [ ! -e "$out/a/trace.json" ] && ok || fail "a failed run left an earlier run's outputs"
  expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --out "$out/a" --trace
  expect 1 "not a JSON pointer" -- "$ipusim" run configs/default.json --out "$out/d" --set tiles=3
  expect 1 "cannot read file" -- "$ipusim" run configs/nope.json --out "$out/d"
  expect 1 "unknown key \"tilez\"" -- "$ipusim" run configs/default.json --out "$out/d" --set /system/ipu/tilez=3
  expect 1 "/workload/graph/ops/0/groups: expected a divisor of the input's 1 channels and of out_channels 10, found 2" -- \
    "$ipusim" run configs/graph/mnist.json --out "$out/d" --set /workload/graph/ops/0/groups=2
  expect 2 "" -- "$ipusim" run
  expect 2 "" -- "$ipusim" frobnicate
}

# The tutorial: 3 epochs of training, then inference in its own process, in one run.
case_tutorial_with_inference() {
  expect 0 "then inference:" -- "$ipusim" run configs/mnist/pipelined.json --out "$out/t" --trace
  [ -s "$out/t/summary.json" ] && [ -s "$out/t/inference/summary.json" ] && [ -s "$out/t/inference/trace.json" ] && ok || fail "tutorial outputs missing"
  grep -q '"run_total"' "$out/t/summary.json" && ok || fail "no run_total in the tutorial summary"
  expect 1 "/inference/micro_batch: expected integer, >= 1" -- "$ipusim" run configs/mnist/pipelined.json --out "$out/t2" --set /inference/micro_batch=0
}

# VCD: each IPU's activity and IPU-Link bytes; IPU 0 computes 1,000 cycles, then copies (1,000 cycles = 751,880,000 fs at 1.33 GHz; the timescale is the kernel's femtosecond).
case_vcd_waves() {
  expect 0 "waves.vcd" -- "$ipusim" run configs/schedules/two_ipu_copy.json --vcd --out "$out/v"
  # 4 IPU signals + both directions of the M2000's 6 linked pairs, of its 4 IPUs' PCIe links to
  # the gateway and of the gateway's link to the host
  [ "$(grep -c '\$var' "$out/v/waves.vcd")" = 26 ] && grep -q '^#751880000$' "$out/v/waves.vcd" && grep -q 'ipu0_to_ipu1' "$out/v/waves.vcd" \
    && grep -q '^b11110100001001000000 ' "$out/v/waves.vcd" && grep -q '1 fs' "$out/v/waves.vcd" && ok || fail "VCD content"
  # IPU 1 (second activity signal) waits for the send from cycle 500 (sync, code 2) and copies
  # from 1,000 (code 5); the waveform ends with the run, at 25,889 cycles.
  [ "$(grep -A1 '^#375940000$' "$out/v/waves.vcd" | tail -1)" = "b10 aaaac" ] \
    && [ "$(grep -A4 '^#751880000$' "$out/v/waves.vcd" | grep -c '^b101 ')" = 2 ] \
    && [ "$(grep '^#' "$out/v/waves.vcd" | tail -1)" = "#19465421320" ] && ok || fail "VCD copy wait and end time"
}

# Quiet: no SystemC warnings (unrepresentable times) or notes naming the temporary file.
case_vcd_quiet() {
  noise=$("$ipusim" run configs/default.json --vcd --out "$out/v2" 2>&1 | grep -c 'W713\|I703\|tmp\.vcd')
  [ "$noise" = 0 ] && [ -s "$out/v2/waves.vcd" ] && ok || fail "--vcd printed $noise SystemC warning or temporary-file lines"
}

# A sweep keeps a config's inference phase: its figures are in every row.
case_sweep_keeps_inference() {
  printf '{"name": "inference_kept", "config": "%s/configs/mnist/pipelined.json", "axes": [{"pointer": "/workload/micro_batch", "values": [16, 40]}]}\n' "$PWD" > "$out/inference_sweep.json"
  expect 0 "2 points, 0 failed" -- "$ipusim" sweep "$out/inference_sweep.json" --out "$out/si"
  [ "$(grep -c '"run_total"' "$out/si/results.jsonl")" = 2 ] && head -1 "$out/si/results.csv" | grep -q ',inference_samples_per_second,run_total_cycles,' \
    && [ "$(tail -n +2 "$out/si/results.csv" | awk -F, '$(NF-2) != "" && $(NF-1) != ""' | wc -l)" = 2 ] && ok || fail "a sweep dropped the inference phase"
}

# Plots: PNG files from a trace and a summary; a file that is neither is refused.
case_plots() {
  "$ipusim" run configs/mnist/pipelined_2stage.json --set /run/dataset_samples=0 --set /run/epochs=1 --trace --out "$out/p" > /dev/null
  tools/plot.py "$out/p/trace.json" > /dev/null && png "$out/p/trace_gantt.png" && ok || fail "no Gantt chart"
  tools/plot.py "$out/p/summary.json" > /dev/null && png "$out/p/summary_balance.png" && png "$out/p/summary_memory.png" && ok || fail "no summary plots"
  expect 1 "neither a trace" -- tools/plot.py configs/default.json
}

# A sweep's worker compiles once for the points that change only what the compiler ignores (the clock, link timing), once again for a value it reads (the micro-batch).
case_sweep_compiles_once_per_key() {
  printf '{"config": "%s/configs/default.json", "axes": [{"pointer": "/workload/micro_batch", "values": [20, 40]}, {"pointer": "/system/ipu/clock_hz", "values": [1.0e9, 1.33e9, 1.6e9]}]}\n' "$PWD" > "$out/clock_sweep.json"
  expect 0 "6 points, 0 failed, 2 schedules compiled" -- "$ipusim" sweep "$out/clock_sweep.json" -j 1 --out "$out/sc"
}

# Sweeps: one whole row per point in CSV and JSONL; --resume runs only what is missing and repairs a damaged row; curves and heat maps plot.
case_sweep_rows_resume_and_curves() {
  expect 0 "9 points, 0 failed" -- "$ipusim" sweep configs/sweeps/exchange_tiles.json -j 2 --out "$out/s"
  [ "$(wc -l < "$out/s/results.csv")" = 10 ] && [ "$(wc -l < "$out/s/results.jsonl")" = 9 ] && ok || fail "sweep rows: $(wc -l "$out/s/results.csv")"
  # as if interrupted after 5 points: both files hold the same 5 rows
  head -n 5 "$out/s/results.jsonl" > "$out/s/partial" && mv "$out/s/partial" "$out/s/results.jsonl"
  head -n 6 "$out/s/results.csv" > "$out/s/partial" && mv "$out/s/partial" "$out/s/results.csv"
  expect 0 "9 points" -- "$ipusim" sweep configs/sweeps/exchange_tiles.json --resume --out "$out/s"
  [ "$(wc -l < "$out/s/results.jsonl")" = 9 ] && [ "$(wc -l < "$out/s/results.csv")" = 10 ] && ok || fail "resume did not complete the sweep"
  [ "$(tail -n +2 "$out/s/results.csv" | cut -d, -f1 | sort -n | uniq | wc -l)" = 9 ] && ok || fail "resume repeated a point"
  tools/plot.py "$out/s/results.csv" --x /system/ipu/tiles > /dev/null && png "$out/s/results_total_cycles_vs_system.ipu.tiles.png" \
    && ok || fail "no sweep curves"
  tools/plot.py "$out/s/results.csv" --x /system/ipu/tiles --heat /system/ipu/exchange/send_bytes_per_cycle > /dev/null \
    && png "$out/s/results_total_cycles_heat_system.ipu.tiles_system.ipu.exchange.send_bytes_per_cycle.png" && ok || fail "no sweep heat map"
  # A damaged last row (a crash or a full disk mid-write) is dropped on --resume and its point runs again.
  head -c -40 "$out/s/results.jsonl" > "$out/s/partial" && mv "$out/s/partial" "$out/s/results.jsonl"
  expect 0 "--resume: dropped 1 damaged or repeated row" -- "$ipusim" sweep configs/sweeps/exchange_tiles.json --resume --out "$out/s"
  [ "$(wc -l < "$out/s/results.jsonl")" = 9 ] && [ "$(wc -l < "$out/s/results.csv")" = 10 ] \
    && [ "$(tail -n +2 "$out/s/results.csv" | cut -d, -f1 | sort -n | uniq | wc -l)" = 9 ] && ok || fail "resume did not repair a damaged row"
}

# A sweep records a failing point and exits 5; a bad sweep file is refused with its JSON path.
case_sweep_failures_and_bad_sweeps() {
  cat > "$out/bad_sweep.json" <<JSON
{"config": "$PWD/configs/default.json", "axes": [{"pointer": "/workload/micro_batch", "values": [40, 20000]}]}
JSON
  expect 5 "2 points, 1 failed" -- "$ipusim" sweep "$out/bad_sweep.json" --out "$out/b"
  grep -q '"status":"out_of_memory"' "$out/b/results.jsonl" && ok || fail "the failing point is not recorded"
  expect 1 "--resume: the results in" -- "$ipusim" sweep configs/sweeps/exchange_tiles.json --resume --out "$out/b"
  bad_sweep '[{"pointer": "/system/ipu/tilez", "values": [1]}]'
  expect 1 "\"/system/ipu/tilez\" names no value" -- "$ipusim" sweep "$out/bad.json" --out "$out/c"
  bad_sweep '[{"pointer": "/system/ipu/tiles", "values": []}]'
  expect 1 "/axes/0: the axis has no values" -- "$ipusim" sweep "$out/bad.json" --out "$out/c"
  bad_sweep '[{"pointer": "/system/ipu/tiles", "range": {"from": 1, "to": "x", "step": 1}}]'
  expect 1 "/axes/0/range/to: expected a number" -- "$ipusim" sweep "$out/bad.json" --out "$out/c"
  bad_sweep '[{"zip": [{"pointer": "/system/ipu/tiles", "values": [1, 2]}, {"pointer": "/system/ipu/columns", "values": [1]}]}]'
  expect 1 "zipped axes need equal lengths" -- "$ipusim" sweep "$out/bad.json" --out "$out/c"
  bad_sweep '[{"pointer": "/system/ipu/tiles", "values": [1472, "many"]}]'
  expect 1 "the value \"many\" for \"/system/ipu/tiles\" is not accepted" -- "$ipusim" sweep "$out/bad.json" --out "$out/c"
}

# Interrupting a sweep (SIGTERM to its process group, as Ctrl-C sends SIGINT): points in flight leave no row, --resume runs them; a killed coordinator leaves no point running.
case_sweep_interrupt() {
  slow_schedule
  printf '{"config": "%s/slow.json", "axes": [{"pointer": "/workload/steps/0/count", "range": {"from": 3000000, "to": 3000005, "step": 1}}]}\n' \
    "$out" > "$out/slow_sweep.json"
  set -m # job control: each background job is a process group of its own, whose id is $!
  "$ipusim" sweep "$out/slow_sweep.json" -j 2 --out "$out/int" > "$out/int.log" 2>&1 &
  pid=$!
  started "$out/int/results.jsonl"; kill -TERM -- "-$pid"; wait "$pid"; rc=$?
  [ "$rc" = 130 ] && grep -q "interrupted: the finished points are in" "$out/int.log" && ok || fail "interrupted sweep exited $rc: $(cat "$out/int.log")"
  [ "$(wc -l < "$out/int/results.jsonl")" -lt 6 ] && ! grep -q "signal" "$out/int/results.jsonl" \
    && ok || fail "an interrupted sweep recorded its points in flight: $(cat "$out/int/results.jsonl")"
  expect 0 "6 points, 0 failed" -- "$ipusim" sweep "$out/slow_sweep.json" -j 2 --resume --out "$out/int"
  [ "$(tail -n +2 "$out/int/results.csv" | cut -d, -f1 | sort -n | uniq | wc -l)" = 6 ] && ok || fail "resume after Ctrl-C: $(cat "$out/int/results.csv")"
  "$ipusim" sweep "$out/slow_sweep.json" -j 2 --out "$out/orphans" > /dev/null 2>&1 &
  pid=$!
  started "$out/orphans/results.jsonl"; kill -KILL "$pid"; wait "$pid" 2> /dev/null; sleep 0.5
  ! pgrep -f -- "$out/orphans" > /dev/null && ok || fail "points outlived their killed sweep: $(pgrep -af -- "$out/orphans")"
  pkill -KILL -f -- "$out/orphans" 2> /dev/null
  set +m
}

# Interrupting a run: exit 130, and neither a summary nor a temporary trace stays behind.
case_run_interrupt() {
  slow_schedule
  set -m
  "$ipusim" run "$out/slow.json" --set /workload/steps/0/count=300000000 --set '/run/trace/cycles=[0,100]' --trace \
    --out "$out/rint" > "$out/rint.log" 2>&1 &
  pid=$!
  # (a windowed trace's header waits in its buffer: the file exists but may be empty)
  created "$out/rint/trace.json.tmp"; sleep 0.3; kill -TERM -- "-$pid"; wait "$pid"; rc=$?
  [ "$rc" = 130 ] && [ -z "$(ls -A "$out/rint")" ] && ok || fail "an interrupted run exited $rc and left: $(ls -A "$out/rint") $(cat "$out/rint.log")"
  set +m
}

# The same sweep under MPI (2 ranks on one machine): the same rows and the same summary line, whatever the ranks or -j.
case_mpi_sweep_matches_local() {
  expect 0 "9 points, 0 failed" -- tiles_sweep "$out/s" -j 2
  OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout 300 \
    mpirun --allow-run-as-root --oversubscribe -n 2 "$ipusim" sweep configs/sweeps/exchange_tiles.json --out "$out/m" > "$out/m.log" 2>&1
  # rank 0 prints the local sweep's summary line, once
  [ "$(grep -c '^exchange_tiles: 9 points, 0 failed, [0-9]* schedules\? compiled; results in' "$out/m.log")" = 1 ] \
    && ok || fail "the MPI sweep did not print its summary once: $(cat "$out/m.log")"
  [ "$(wc -l < "$out/m/results.csv")" = 10 ] && [ "$(rows "$out/m/results.csv")" = "$(rows "$out/s/results.csv")" ] \
    && ok || fail "the MPI sweep's rows differ from the local sweep's"
  # ... and the same rows whatever -j.
  expect 0 "9 points, 0 failed" -- tiles_sweep "$out/s1" -j 1
  [ "$(rows "$out/s1/results.csv")" = "$(rows "$out/s/results.csv")" ] && ok || fail "sweep rows differ between -j 1 and -j 2"
}

# Validation: the shipped hand-derived cases pass; a wrong expectation exits 6; a missing metric or config names its JSON path.
case_validate() {
  expect 0 "all within tolerance" -- "$ipusim" validate configs/validation/timing_rules.json -j 2
  expect 0 "27 cases: mean relative error 0.0034 %, max 0.0907 %; all within tolerance" -- "$ipusim" validate configs/validation/poplibs_vertices.json -j 2
  # The host calibrated on one PopTorch tutorial's measurements, validated on the pipelining tutorial's log.
  expect 0 "4 cases: mean relative error 4.3237 %, max 9.1835 %; all within tolerance" -- "$ipusim" validate configs/validation/host.json -j 2
  cat > "$out/wrong.json" <<JSON
{"cases": [{"name": "off by one", "config": "$PWD/configs/schedules/amp_matmul.json", "metric": "/total_cycles", "expected": 838},
           {"name": "relative", "config": "$PWD/configs/schedules/amp_matmul.json", "metric": "/total_cycles", "expected": 838, "tolerance": {"relative": 0.01}}]}
JSON
  expect 6 "SOME OUTSIDE TOLERANCE" -- "$ipusim" validate "$out/wrong.json"
  cat > "$out/missing.json" <<JSON
{"cases": [{"config": "$PWD/configs/schedules/amp_matmul.json", "metric": "/no/such/metric", "expected": 1}]}
JSON
  expect 1 "/cases/0/metric: the summary has no number at \"/no/such/metric\"" -- "$ipusim" validate "$out/missing.json"
  cat > "$out/noconfig.json" <<JSON
{"cases": [{"config": "$out/nowhere.json", "metric": "/total_cycles", "expected": 1}]}
JSON
  expect 1 "/cases/0/config: $out/nowhere.json: cannot read file" -- "$ipusim" validate "$out/noconfig.json"
}

# Output folders: a --set variant gets its own default folder; a run never replaces another run's results unless forced; an earlier run's inference folder goes with its results.
case_output_folders() {
  expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --out "$out/a"
  mkdir -p "$out/cwd"
  (cd "$out/cwd" && "$ipusim" run "$OLDPWD/configs/default.json" > /dev/null && "$ipusim" run "$OLDPWD/configs/default.json" \
    --set /system/ipu/tiles=64 > /dev/null) && [ -s "$out/cwd/out/mnist_train_step/summary.json" ] \
    && [ "$(ls "$out/cwd/out" | grep -c '^mnist_train_step-[0-9a-f]\{8\}$')" = 1 ] && ok || fail "default folders: $(ls "$out/cwd/out")"
  expect 1 "holds the results of another run" -- "$ipusim" run configs/default.json --set /system/ipu/tiles=64 --out "$out/cwd/out/mnist_train_step"
  [ -s "$out/cwd/out/mnist_train_step/summary.json" ] && ok || fail "a refused run removed another run's summary"
  expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --set /system/ipu/tiles=64 --out "$out/cwd/out/mnist_train_step" --force
  echo '[1]' > "$out/cwd/out/mnist_train_step/run.json"
  expect 1 "holds the results of another run (its run.json is not readable)" -- "$ipusim" run configs/default.json --out "$out/cwd/out/mnist_train_step"
  expect 0 "then inference" -- "$ipusim" run configs/mnist/pipelined.json --out "$out/inf"
  expect 0 "mnist_train" -- "$ipusim" run configs/mnist/train.json --out "$out/inf" --force
  [ ! -e "$out/inf/inference" ] && ok || fail "an earlier run's inference folder survived: $(ls "$out/inf")"
}

# available_memory_proportion has one place; the old hardware key still works, with a note.
case_memory_proportion_deprecated_key() {
  "$ipusim" run configs/default.json --out "$out/a" > /dev/null
  "$ipusim" run configs/default.json --out "$out/amp_old" --set /system/ipu/memory/available_memory_proportion=0.001 > "$out/amp_old.log" 2>&1
  "$ipusim" run configs/default.json --out "$out/amp_new" --set /workload/available_memory_proportion=0.001 > "$out/amp_new.log" 2>&1
  grep -q "note: --set: /system/ipu/memory/available_memory_proportion is deprecated" "$out/amp_old.log" && ! grep -q note "$out/amp_new.log" \
    && [ "$(grep '^ "total_cycles"' "$out/amp_old/summary.json")" = "$(grep '^ "total_cycles"' "$out/amp_new/summary.json")" ] \
    && [ "$(grep '^ "total_cycles"' "$out/amp_new/summary.json")" != "$(grep '^ "total_cycles"' "$out/a/summary.json")" ] \
    && ok || fail "available_memory_proportion: old and new places differ"
}

# params lists every key (filtered by pointer), with its accepted values.
case_params_filter() {
  expect 0 "/run/trace/cycles" -- "$ipusim" params /run/trace
  expect 0 "(integer, >= 1, <= 4294967295)" -- "$ipusim" params /run/gradient_accumulation
  expect 1 "params: nope: no parameter's pointer contains this" -- "$ipusim" params nope
}

# --set makes the objects and list elements a value needs, and /system takes a hardware preset.
case_set_presets() {
  expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --set /system=pod16 --set /workload/strategy/replicas=16 --out "$out/preset"
  grep -q '"num_ipus": 16' "$out/preset/summary.json" && ok || fail "--set /system=pod16 did not give 16 IPUs"
}

# Compile: the compiled Schedule as a config of its own simulates to the same figures; what does not fit still does not fit; an edited schedule is checked like a hand-written one.
case_compile_round_trip() {
  one_epoch=(--set /run/dataset_samples=0 --set /run/epochs=1)
  expect 0 "compiled for 2 IPUs" -- "$ipusim" compile configs/mnist/pipelined_2stage.json "${one_epoch[@]}" -o "$out/k/two.json"
  expect 0 "mnist_pipelined_2stage_compiled (schedule)" -- "$ipusim" run "$out/k/two.json" --out "$out/k/compiled"
  "$ipusim" run configs/mnist/pipelined_2stage.json "${one_epoch[@]}" --out "$out/k/direct" > /dev/null
  figures() { grep -E '^ "(total_cycles|samples_per_second)"' "$1/summary.json"; } # the run's own, not its inference phase's
  [ -n "$(figures "$out/k/direct")" ] && [ "$(figures "$out/k/compiled")" = "$(figures "$out/k/direct")" ] \
    && ok || fail "the compiled schedule simulates to other figures"
  expect 0 "note: out of memory on IPU 0: " -- "$ipusim" compile configs/mnist/oom.json -o "$out/k/oom.json"
  expect 3 "out of memory on IPU 0" -- "$ipusim" run "$out/k/oom.json" --out "$out/k/oom"
  expect 1 "/workload/programs/0/fragments/0/steps/0/bytes: expected integer" -- "$ipusim" run "$out/k/two.json" --out "$out/k/bad" \
    --set /workload/programs/0/fragments/0/steps/0/bytes=-1
  expect 1 "cannot read file" -- "$ipusim" compile configs/nope.json -o "$out/k/nope.json"
  [ ! -e "$out/k/nope.json" ] && ok || fail "a failed compile left a file"
}

# Out of memory: a report, exit 3, no summary or trace; a pipeline stops compiling at the first IPU that does not fit and says which IPUs it left.
case_out_of_memory() {
  expect 3 "out of memory on IPU 0" -- "$ipusim" run configs/mnist/oom.json --out "$out/e" --trace
  [ -s "$out/e/oom_report.json" ] && [ ! -e "$out/e/summary.json" ] && [ ! -e "$out/e/trace.json" ] && [ ! -e "$out/e/trace.json.tmp" ] \
    && ok || fail "out of memory left the wrong files: $(ls "$out/e")"
  tools/plot.py "$out/e/oom_report.json" > /dev/null && png "$out/e/oom_memory.png" && ok || fail "no memory map of an out-of-memory run"
  # A pipeline stops compiling at the first IPU that does not fit, and says which IPUs it left.
  expect 3 "(IPUs 2, 3 come after the first that does not fit: their memory was not accounted)" -- "$ipusim" run \
    configs/bert/large_phase1_pod16.json --set '/workload/model={"layers":96}' --set '/workload/strategy/layers_per_ipu=[0,32,32,32]' \
    --out "$out/e96"
  python3 -c 'import json, sys; sys.exit(json.load(open(sys.argv[1]))["ipus_not_accounted"] != [2, 3])' "$out/e96/oom_report.json" \
    && ok || fail "the report does not list IPUs 2 and 3, left uncompiled"
}

# Engines: the per-cycle reference gives the same summary and trace bytes as the fast engine; a deadlock is named.
case_engines_agree() {
  for eng in fast reference; do
    expect 0 "mnist_train_step" -- "$ipusim" run configs/default.json --set /system/ipu/tiles=64 --engine $eng --out "$out/eng_$eng" --trace
  done
  [ "$(strip "$out/eng_fast/summary.json")" = "$(strip "$out/eng_reference/summary.json")" ] && ok || fail "summaries differ between engines"
  cmp -s "$out/eng_fast/trace.json" "$out/eng_reference/trace.json" && ok || fail "traces differ between engines"
  grep -q '"engine": "reference"' "$out/eng_reference/summary.json" && ok || fail "summary does not name the reference engine"
  cat > "$out/deadlock.json" <<JSON
{"system": {"base": "$PWD/configs/hardware/m2000.json"}, "workload": {"kind": "schedule", "programs": [
  {"ipu": 0, "steps": [{"op": "sync", "kind": "external"}]},
  {"ipu": 1, "steps": [{"op": "compute", "name": "c", "tiles": [{"tiles": "all", "cycles": 5}]}]}]}}
JSON
  expect 1 "/workload: IPU 0 waits at an external sync the other IPUs never reach" -- "$ipusim" run "$out/deadlock.json" \
    --engine reference --out "$out/eng_dead"
  expect 2 "slow not in {fast,reference}" -- "$ipusim" run configs/default.json --engine slow
}

# Pipelines: each IPU's stage work against the slowest, in the summary and beside its name in the trace.
case_pipeline_balance() {
  expect 0 "work per micro-batch against the slowest IPU" -- "$ipusim" run configs/mnist/pipelined_2stage.json --out "$out/lbl" --trace
  grep -q 'IPU 1 (stage 1: [0-9]* cycles per micro-batch, [0-9]* % of the slowest IPU)' "$out/lbl/trace.json" \
    && grep -q '"imbalance"' "$out/lbl/summary.json" && ok || fail "stage balance missing from the trace or summary"
}

# BERT: sequences/s and model FLOPs; BERT-Large on one IPU, or micro-batch 64 at SL512, does not fit.
case_bert() {
  expect 0 "sequences/s" -- "$ipusim" run configs/bert/large_squad_infer_m2000.json --out "$out/f"
  expect 0 "TFLOPS per IPU" -- "$ipusim" run configs/bert/large_squad_infer_m2000.json --out "$out/f"
  expect 3 "out of memory on IPU 0" -- "$ipusim" run configs/bert/large_phase1_pod16.json --out "$out/g" \
    --set '/workload/strategy={"kind":"single"}' --set /system/num_ipus=1 --set /workload/available_memory_proportion=0.15 \
    --set /run/gradient_accumulation=16
  grep -q '"worst_tiles"' "$out/g/oom_report.json" && grep -q '"live"' "$out/g/oom_report.json" && [ ! -e "$out/g/summary.json" ] \
    && ok || fail "BERT-Large on one IPU: no out-of-memory report"
  expect 3 "out of memory on IPU" -- "$ipusim" run configs/bert/large_phase2_pod16.json --out "$out/h" --set /workload/micro_batch=64
  expect 1 "/workload/strategy/layers_per_ipu: expected layers adding up to the model's 24, found 23" -- \
    "$ipusim" run configs/bert/large_phase1_pod16.json --out "$out/i" --set '/workload/strategy/layers_per_ipu=[3,7,7,6]'
}

# An installed copy (cmake --install): the command line runs the shipped configs from its own
# share/ipusim, from any folder, and finds the bundled models beside it.
case_installed_copy() {
  cmake --install "$(dirname "$ipusim")" --prefix "$out/prefix" > "$out/install.log" 2>&1 \
    && ok || fail "cmake --install failed: $(cat "$out/install.log")"
  mkdir -p "$out/elsewhere"
  (cd "$out/elsewhere" && "$out/prefix/bin/ipusim" run "$out/prefix/share/ipusim/configs/default.json" --out run > run.log 2>&1) \
    && grep -q "mnist_train_step" "$out/elsewhere/run.log" && ok || fail "the installed copy: $(cat "$out/elsewhere/run.log")"
  [ -f "$(dirname "$ipusim")/models/resnet50.onnx" ] || skip "this build exported no ONNX models (python3-torch and python3-torchvision are not installed)"
  # (the installed program looks beside itself first: share/ipusim/models of its prefix)
  [ -f "$out/prefix/share/ipusim/models/resnet50.onnx" ] && ok || fail "the install left out the bundled ResNet-50"
  (cd "$out/elsewhere" && "$out/prefix/bin/ipusim" run "$out/prefix/share/ipusim/configs/resnet/resnet50_pod16.json" --out resnet \
    > resnet.log 2>&1) && grep -q "samples/s" "$out/elsewhere/resnet.log" && ok || fail "the installed copy, ResNet-50: $(cat "$out/elsewhere/resnet.log")"
}

# Each case and its label: fast cases make `ctest -L fast`.
labels=(
  run_outputs_and_determinism:fast shipped_configs_run:fast resnet_configs_run:slow
  help_and_params:fast bad_input_messages:fast tutorial_with_inference:fast vcd_waves:fast
  vcd_quiet:fast sweep_keeps_inference:fast plots:fast sweep_compiles_once_per_key:fast
  sweep_rows_resume_and_curves:fast sweep_failures_and_bad_sweeps:fast sweep_interrupt:slow
  run_interrupt:fast mpi_sweep_matches_local:slow validate:fast output_folders:fast
  memory_proportion_deprecated_key:fast params_filter:fast set_presets:fast compile_round_trip:fast
  out_of_memory:fast engines_agree:fast pipeline_balance:fast bert:fast installed_copy:slow
)
if [ "${1:-}" = --list ]; then
  declared=$(declare -F | sed -n 's/^declare -f case_//p' | sort)
  labelled=$(printf '%s\n' "${labels[@]%%:*}" | sort)
  [ "$declared" = "$labelled" ] || { echo "cli_test.sh: the case functions and the labels list differ:" \
    "$(diff <(echo "$declared") <(echo "$labelled"))" >&2; exit 1; }
  for entry in "${labels[@]}"; do echo "${entry%%:*} ${entry#*:}"; done
  exit 0
fi
[ $# = 3 ] || { echo "usage: cli_test.sh --list | cli_test.sh IPUSIM SOURCE_DIR CASE" >&2; exit 2; }
ipusim=$1
cd "$2"
declare -F "case_$3" > /dev/null || { echo "no case $3 (cli_test.sh --list lists them)" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fails=0; passes=0
"case_$3"
echo "$passes passed, $fails failed"
[ "$fails" = 0 ] && [ "$passes" -gt 0 ]
