#!/usr/bin/env bash
# Worker benchmarks (merges/s, upload -> curve latency) on a private service instance
# "bench-worker" that is started here and stopped again at the end.
set -euo pipefail
cd "$(dirname "$0")/../.."
bash scripts/services.sh start bench-worker
trap 'bash scripts/services.sh stop bench-worker' EXIT
set -a; source .run/bench-worker/env; set +a
.venv/bin/python bench/worker/bench_worker.py
