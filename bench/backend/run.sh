#!/usr/bin/env bash
# Backend benchmark: uvicorn (2 workers, keep-alive) on the private "dev" PostgreSQL/Redis, a fresh
# database "hitcurve_bench", loaded with wrk. Prints the sizing endpoint's throughput and latency
# percentiles and the sustained snapshot-ingestion rate, next to their targets (bench/README.md).
#   bench/backend/run.sh [duration_seconds]   (default 20)
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
cd "$ROOT"
DUR=${1:-20}
WORKERS=${BENCH_WORKERS:-2}
CLASSES=${BENCH_CLASSES:-20}
PY="$ROOT/.venv/bin/python"
command -v wrk >/dev/null || { echo "wrk is not installed" >&2; exit 1; }

bash scripts/services.sh start dev
set -a; source .run/dev/env; set +a
base="${HITCURVE_DATABASE_URL%/*}"
export HITCURVE_DATABASE_URL="$base/hitcurve_bench"
# Redis database 15: nothing consumes it, so the enqueued tasks stay put (deleted at the end).
export HITCURVE_REDIS_URL="${HITCURVE_REDIS_URL%/*}/15"
work=$(mktemp -d)
export BENCH_SNAPSHOT_TEMPLATE="$work/snapshot.json"

"$PY" bench/backend/prepare.py recreate "$base" hitcurve_bench
"$ROOT/.venv/bin/alembic" upgrade head >/dev/null 2>&1
eval "$("$PY" bench/backend/prepare.py seed "$CLASSES" "$BENCH_SNAPSHOT_TEMPLATE")"
export BENCH_AGENT_KEY

port=$("$PY" -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$ROOT/.venv/bin/uvicorn" hitcurve.main:app --host 127.0.0.1 --port "$port" --workers "$WORKERS" \
    --log-level warning --no-access-log >"$work/uvicorn.log" 2>&1 &
uv=$!
trap 'kill $uv 2>/dev/null; wait $uv 2>/dev/null; "$PY" -c "import redis,os; redis.Redis.from_url(os.environ[\"HITCURVE_REDIS_URL\"]).flushdb()"; [ -n "${BENCH_KEEP:-}" ] && echo "kept $work" || rm -rf "$work"' EXIT
for _ in $(seq 100); do curl -sf "http://127.0.0.1:$port/api/v1/health" >/dev/null && break; sleep 0.1; done

url="http://127.0.0.1:$port/api/v1/sizing/servers/$BENCH_SERVER_ID/memory?target_hit_ratio=0.9"
curl -sf -H "Authorization: Bearer $BENCH_TOKEN" "$url" >/dev/null || { echo "sizing request failed" >&2; exit 1; }
wrk -t2 -c16 -d3s -H "Authorization: Bearer $BENCH_TOKEN" "$url" >/dev/null  # warm-up

pg_pid=$(head -n1 "$(readlink -f .run/dev/pg)/postmaster.pid" 2>/dev/null || runuser -u postgres -- head -n1 "$(readlink -f .run/dev/pg)/postmaster.pid")
cpu() { echo "$("$PY" bench/backend/cpu.py "$uv") $("$PY" bench/backend/cpu.py "$pg_pid")"; }

c0=$(cpu)
echo "== sizing: GET /api/v1/sizing/servers/{id}/memory (API token, keep-alive, 2 threads, 32 connections, ${DUR}s)"
wrk -t2 -c32 -d"${DUR}s" --latency -s bench/backend/status.lua -H "Authorization: Bearer $BENCH_TOKEN" "$url" | tee "$work/sizing.txt"
c1=$(cpu)
echo "== sizing again with 8 connections (less queueing: the latency a lightly loaded autoscaler sees)"
wrk -t2 -c8 -d"${DUR}s" --latency -H "Authorization: Bearer $BENCH_TOKEN" "$url" | tee "$work/sizing8.txt"
c1=$(cpu)
echo "== ingestion: POST /api/v1/agent/snapshots ($CLASSES classes, $(wc -c <"$BENCH_SNAPSHOT_TEMPLATE") bytes JSON, new id each, 2 threads, 16 connections, ${DUR}s)"
wrk -t2 -c16 -d"${DUR}s" --latency -s bench/backend/snapshot.lua "http://127.0.0.1:$port/api/v1/agent/snapshots" \
    | tee "$work/ingest.txt"
c2=$(cpu)
stored=$("$PY" -c "
from sqlalchemy import create_engine, text; import os
e=create_engine(os.environ['HITCURVE_DATABASE_URL'])
with e.connect() as c: print(c.execute(text('select count(*) from snapshots')).scalar())")

"$PY" - "$work/sizing.txt" "$work/ingest.txt" "$stored" "$DUR" $c0 $c1 $c2 "$work/sizing8.txt" <<'PY'
import os, re, sys
def parse(path):
    t = open(path).read()
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", t).group(1))
    m = re.search(r"99%\s+([\d.]+)(us|ms|s)\b", t)
    p99 = float(m.group(1)) * {"us": 1e-3, "ms": 1, "s": 1e3}[m.group(2)]
    non2xx = re.search(r"Non-2xx or 3xx responses: (\d+)", t)
    return rps, p99, int(non2xx.group(1)) if non2xx else 0
s_rps, s_p99, s_bad = parse(sys.argv[1])
i_rps, i_p99, i_bad = parse(sys.argv[2])
stored, dur = int(sys.argv[3]), float(sys.argv[4])
a0, p0, a1, p1, a2, p2 = (float(x) for x in sys.argv[5:11])
s_req = float(re.search(r"(\d+) requests in", open(sys.argv[1]).read()).group(1))
i_req = float(re.search(r"(\d+) requests in", open(sys.argv[2]).read()).group(1))
s8_rps, s8_p99, s8_bad = parse(sys.argv[11])
s_req += float(re.search(r"(\d+) requests in", open(sys.argv[11]).read()).group(1))
s_app, s_pg = 1000 * (a1 - a0) / s_req, 1000 * (p1 - p0) / s_req
i_app, i_pg = 1000 * (a2 - a1) / i_req, 1000 * (p2 - p1) / i_req
s_cpu_ms, i_cpu_ms = s_app + s_pg, i_app + i_pg
cores = os.cpu_count() or 2
print()
print("result                              measured        target")
print(f"sizing throughput                   {s_rps:8.0f} req/s  >= 1000 req/s   {'ok' if s_rps >= 1000 else 'BELOW'}")
print(f"sizing p99 latency                  {s_p99:8.1f} ms     <= 50 ms        {'ok' if s_p99 <= 50 else 'ABOVE'}")
print(f"sizing non-2xx answers              {s_bad:8d}")
print(f"sizing throughput, 8 connections    {s8_rps:8.0f} req/s  >= 1000 req/s   {'ok' if s8_rps >= 1000 else 'BELOW'}")
print(f"sizing p99 latency, 8 connections   {s8_p99:8.1f} ms     <= 50 ms        {'ok' if s8_p99 <= 50 else 'ABOVE'}")
print(f"snapshot ingestion                  {i_rps:8.0f} /s     >= 200 /s       {'ok' if i_rps >= 200 else 'BELOW'}")
print(f"snapshot ingestion p99 latency      {i_p99:8.1f} ms")
print(f"snapshots stored (whole run)        {stored:8d}        non-202 answers: {i_bad}")
print()
print("CPU cost per request (uvicorn workers + PostgreSQL, from /proc), and the rate it allows on")
print(f"{cores} dedicated cores (what the run above would reach on an otherwise idle machine):")
print(f"sizing              {s_cpu_ms:6.2f} ms CPU (app {s_app:.2f} + PostgreSQL {s_pg:.2f})"
      f"  -> {1000 * cores / s_cpu_ms:6.0f} req/s")
print(f"snapshot ingestion  {i_cpu_ms:6.2f} ms CPU (app {i_app:.2f} + PostgreSQL {i_pg:.2f})"
      f"  -> {1000 * cores / i_cpu_ms:6.0f} /s")
PY
echo "load average: $(cut -d' ' -f1-3 /proc/loadavg)  (2-core machine shared with other work)"
