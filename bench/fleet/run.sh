#!/usr/bin/env bash
# Fleet simulator against the real stack on this machine: a private service instance
# "fleet" (PostgreSQL, Redis) with a fresh schema, the supervised API (HITCURVE_API_WORKERS
# processes), ingest worker (HITCURVE_WORKER_CONCURRENCY), batch worker and beat, then
# bench/fleet/fleet.py with the arguments given here; everything is stopped again at the end.
#   bash bench/fleet/run.sh --agents 10000 --interval 60 --duration 600          # the target
#   bash bench/fleet/run.sh --agents 2000 --duration 420 --mode catch-up --stop-at 60 --stop-for 300
# The summary (JSON) also lands in bench/results/fleet-<time>.json.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
inst=fleet
bash scripts/services.sh start "$inst"
cleanup() { bash scripts/supervise.sh stop "$inst" || true; bash scripts/services.sh stop "$inst" || true; }
trap cleanup EXIT
set -a; source "$RUN_DIR/$inst/env"; set +a
# a fresh schema and an empty broker, so table sizes, counts and queues are this run's
"$VENV/bin/python" - <<'PY'
import redis
from sqlalchemy import text
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine
with get_engine().begin() as c:
    c.execute(text("DROP SCHEMA public CASCADE; CREATE SCHEMA public"))
redis.Redis.from_url(get_settings().redis_url).flushdb()
PY
"$VENV/bin/alembic" upgrade head >/dev/null
bash scripts/supervise.sh start "$inst"
port=$(cat "$RUN_DIR/$inst/api.port")
for _ in $(seq 600); do
    curl -fsS "http://127.0.0.1:$port/api/v1/health" 2>/dev/null | grep -q '"status":"ok"' && break
    sleep 0.5
done
curl -fsS "http://127.0.0.1:$port/api/v1/health" | grep -q '"status":"ok"' || die "the fleet stack is not healthy"
mkdir -p bench/results
"$VENV/bin/python" bench/fleet/fleet.py --port "$port" --instance "$inst" \
    --json "bench/results/fleet-$(date -u +%Y%m%dT%H%M%SZ).json" "$@"
