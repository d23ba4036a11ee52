#!/usr/bin/env bash
# Ctrl-C during a parallel run, over and over, on a loaded machine.
#
# Runs tests/test_cli_validate.py::test_ctrl_c_during_a_parallel_run_exits_130_with_one_line
# RUNS times (default 50) while LOAD busy processes (default: one per core) compete for the
# CPU: stress-ng when it is installed, plain Python busy loops otherwise. Prints each run's
# verdict and exit latency (SIGINT to the process group -> the run has exited, as the test
# measures it), then the number that passed and the latency figures.
#
# Usage: bash benchmarks/loop_ctrl_c.sh [RUNS] [LOAD]
# Uses the blockkit that PYTHONPATH selects (export PYTHONPATH=$PWD/src in a worktree).
set -uo pipefail
cd "$(dirname "$0")/.."

runs=${1:-50}
load=${2:-$(nproc)}
test_id="tests/test_cli_validate.py::test_ctrl_c_during_a_parallel_run_exits_130_with_one_line"

load_pids=()
stop_load() {
  if [ "${#load_pids[@]}" -gt 0 ]; then
    kill "${load_pids[@]}" 2>/dev/null
    wait "${load_pids[@]}" 2>/dev/null
  fi
}
trap stop_load EXIT
trap 'exit 130' INT TERM

if [ "$load" -gt 0 ]; then
  if command -v stress-ng >/dev/null 2>&1; then
    stress-ng --quiet --cpu "$load" --timeout 0 &
    load_pids+=($!)
    echo "load: stress-ng --cpu $load"
  else
    for _ in $(seq "$load"); do
      python3 -c "while True: pass" &
      load_pids+=($!)
    done
    echo "load: $load busy Python processes"
  fi
fi

passed=0
latencies=()
for i in $(seq "$runs"); do
  output=$(python3 -m pytest -q -s -p no:cacheprovider "$test_id" 2>&1)
  status=$?
  latency=$(printf '%s\n' "$output" | sed -n 's/.*ctrl-c exit latency: \([0-9.]*\) s.*/\1/p' | tail -n 1)
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    verdict=pass
  else
    verdict=FAIL
    printf '%s\n' "$output" | tail -n 20
  fi
  [ -n "$latency" ] && latencies+=("$latency")
  printf 'run %d/%d: %s, exit latency %s s\n' "$i" "$runs" "$verdict" "${latency:-?}"
done

echo "passed: $passed/$runs"
if [ "${#latencies[@]}" -gt 0 ]; then
  printf '%s\n' "${latencies[@]}" | python3 -c '
import statistics, sys
values = sorted(float(line) for line in sys.stdin)
print(f"exit latency over {len(values)} runs: median {statistics.median(values):.3f} s, max {values[-1]:.3f} s")
'
fi
[ "$passed" -eq "$runs" ]
