#!/usr/bin/env bash
# Every benchmark, each printing its figures next to its reference. Results also go to
# bench/results/<name>.txt. Benchmarks are bounded to minutes each on a 2-core machine.
#   scripts/bench.sh [name ...]     names: profiler simulator libcachesim agent ceiling backend stall worker (default: all)
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
mkdir -p bench/results
names=("$@"); [ ${#names[@]} -gt 0 ] || names=(profiler simulator libcachesim agent ceiling backend stall worker)
rc=0
run() {  # run NAME COMMAND...
    local name="$1"; shift
    say "── benchmark: $name"
    if "$@" 2>&1 | tee "bench/results/$name.txt"; then :; else rc=1; say "benchmark $name failed"; fi
}
for n in "${names[@]}"; do
    case "$n" in
        profiler)  run profiler  make --no-print-directory -C profiler-agent bench ;;
        simulator) run simulator make --no-print-directory -C simulator bench ;;
        libcachesim) run libcachesim bash bench/libcachesim/run.sh ;;
        agent)     run agent-accuracy "$VENV/bin/python" bench/accuracy/bench_accuracy.py
                   run agent-overhead "$VENV/bin/python" profiler-agent/loadgen/bench_overhead.py ;;
        ceiling)   run ceiling "$VENV/bin/python" bench/ceiling/ceiling.py ;;
        backend)   run backend bash bench/backend/run.sh ;;
        stall)     run stall bash bench/stall/run.sh ;;
        worker)    run worker  bash bench/worker/run.sh ;;
        *) die "unknown benchmark '$n'" ;;
    esac
done
exit $rc
