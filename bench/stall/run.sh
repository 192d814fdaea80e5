#!/usr/bin/env bash
# Stall benchmark: the API as `python -m hitcurve.serve` starts it, on the private "dev"
# PostgreSQL/Redis with a fresh database "hitcurve_stall" (seeded like bench/backend), 8 clients
# sending the worst uploads in a loop while an autoscaler polls sizing and a monitor polls /health.
#   bench/stall/run.sh [duration_seconds]     (default 30)
# BENCH_API="uvicorn" starts a bare single-process `uvicorn hitcurve.main:app` instead (how the
# scripts ran the API before the hardening): the "before" figures in bench/results/2026-11-25-stall.md.
# BENCH_CODE=DIR runs the API, its migrations and the seeding from another checkout (a "before"
# commit: `git worktree add DIR COMMIT`) with this checkout's venv and benchmark clients.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
DUR=${1:-30}
PY="$ROOT/.venv/bin/python"
CODE=$(cd "${BENCH_CODE:-$ROOT}" && pwd)
if [ "$CODE" != "$ROOT" ]; then
    export PYTHONPATH="$CODE/backend:$CODE/worker:$CODE/testing${PYTHONPATH:+:$PYTHONPATH}"
fi

bash scripts/services.sh start dev
set -a; source .run/dev/env; set +a
base="${HITCURVE_DATABASE_URL%/*}"
export HITCURVE_DATABASE_URL="$base/hitcurve_stall"
export HITCURVE_REDIS_URL="${HITCURVE_REDIS_URL%/*}/14"   # nothing consumes it; flushed at the end
# The autoscaler polls every 20 ms (50/s) with one token: above the per-token request rate, whose
# 429s are not what this measures (a fast machine's quiet baseline hit it and the run stopped).
export HITCURVE_API_TOKEN_RATE_PER_S=1000 HITCURVE_API_TOKEN_BURST=1000
work=$(mktemp -d)
"$PY" bench/backend/prepare.py recreate "$base" hitcurve_stall
(cd "$CODE" && "$ROOT/.venv/bin/alembic" upgrade head >/dev/null 2>&1)
eval "$("$PY" "$CODE/bench/backend/prepare.py" seed 20 "$work/snapshot.json")"
export BENCH_AGENT_KEY BENCH_TOKEN BENCH_SERVER_ID

port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
if [ "${BENCH_API:-serve}" = uvicorn ]; then
    "$ROOT/.venv/bin/uvicorn" hitcurve.main:app --host 127.0.0.1 --port "$port" --log-level warning \
        --no-access-log >"$work/api.log" 2>&1 &
else
    "$PY" -m hitcurve.serve --host 127.0.0.1 --port "$port" --log-level warning >"$work/api.log" 2>&1 &
fi
api=$!
trap 'kill $api 2>/dev/null; wait $api 2>/dev/null; "$PY" -c "import redis,os; redis.Redis.from_url(os.environ[\"HITCURVE_REDIS_URL\"]).flushdb()"; rm -rf "$work"' EXIT
for _ in $(seq 300); do curl -sf "http://127.0.0.1:$port/api/v1/health" >/dev/null && break; sleep 0.2; done
echo "== API: ${BENCH_API:-python -m hitcurve.serve} from $CODE at $(git -C "$CODE" rev-parse --short HEAD)" \
    "($(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg))"
BENCH_API_PID=$api "$PY" bench/stall/stall.py "http://127.0.0.1:$port" "$DUR"
echo "== load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
