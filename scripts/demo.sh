#!/usr/bin/env bash
# The whole product on this machine: private PostgreSQL and Redis (instance "dev"), the backend
# serving the dashboard, a Celery worker and beat, a demo memcached with a load generator and
# the agent watching it. Everything runs in the background; `make stop` stops it by pid.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

inst=dev
procs="$RUN_DIR/$inst/procs"; logs="$RUN_DIR/$inst/logs"
mkdir -p "$procs" "$logs"

bash scripts/services.sh start "$inst"
set -a; source "$RUN_DIR/$inst/env"; set +a

running() { [ -f "$procs/$1.pid" ] && kill -0 "$(cat "$procs/$1.pid")" 2>/dev/null; }
launch() {  # launch NAME COMMAND...: start in the background unless already running
    local name="$1"; shift
    if running "$name"; then return 0; fi
    nohup "$@" >"$logs/$name.log" 2>&1 &
    echo $! > "$procs/$name.pid"
}
port_file() { local f="$RUN_DIR/$inst/$1.port"; [ -s "$f" ] || free_port > "$f"; cat "$f"; }

say "migrating the database"
"$VENV/bin/alembic" upgrade head >"$logs/migrate.log" 2>&1 || die "migration failed, see $logs/migrate.log"

api_port=$(port_file api)
launch api "$VENV/bin/uvicorn" hitcurve.main:app --host 127.0.0.1 --port "$api_port"
launch worker "$VENV/bin/celery" -A hitcurve_worker.celery_app worker --loglevel=INFO --concurrency=2 -n "demo@%h"
if "$VENV/bin/python" -c 'import hitcurve_worker.schedule' 2>/dev/null; then
    launch beat "$VENV/bin/celery" -A hitcurve_worker.celery_app beat --loglevel=INFO \
        --schedule "$RUN_DIR/$inst/celerybeat-schedule"
fi

for _ in $(seq 100); do
    curl -fsS "http://127.0.0.1:$api_port/api/v1/health" >/dev/null 2>&1 && break
    running api || die "the backend exited, see $logs/api.log"
    sleep 0.2
done
curl -fsS "http://127.0.0.1:$api_port/api/v1/health" >/dev/null || die "the backend does not answer, see $logs/api.log"

# Demo tenant, memcached, traffic and agent (each part joins when it is built).
mc_port=$(port_file memcached)
mc_user=(); [ "$(id -u)" -eq 0 ] && mc_user=(-u root)   # memcached refuses root without -u
launch memcached memcached -l 127.0.0.1 -p "$mc_port" -U 0 -m 64 -t 2 "${mc_user[@]}"
for _ in $(seq 50); do port_open "$mc_port" && break; sleep 0.1; done
port_open "$mc_port" || die "the demo memcached did not start, see $logs/memcached.log"
api="http://127.0.0.1:$api_port"
"$VENV/bin/python" scripts/demo_setup.py account "$api" "$RUN_DIR/$inst" || die "demo account setup failed"
# Traffic: Zipf 0.9 over 400k keys of ~200 B against a 64 MiB memcached, so it evicts and the
# curve has something to say; misses are refilled after a simulated recompute delay.
launch loadgen bin/hc-loadgen --server "127.0.0.1:$mc_port" --dist zipf --alpha 0.9 --keys 400000 \
    --requests 0 --duration 604800 --value-size 200 --conns 1 --recompute-us 200,1000,5000 --quiet
mkdir -p "$RUN_DIR/$inst/spool" "$RUN_DIR/$inst/snapshots"
launch agent bin/hitcurve-agent run --memcached "127.0.0.1:$mc_port" --backend-url "$api" \
    --agent-key-file "$RUN_DIR/$inst/agent.key" --spool-dir "$RUN_DIR/$inst/spool" \
    --snapshot-dir "$RUN_DIR/$inst/snapshots" --interval 20
launch assign "$VENV/bin/python" scripts/demo_setup.py assign "$api" "$RUN_DIR/$inst" "127.0.0.1:$mc_port"

cat <<MSG

  Hitcurve is running.
    Dashboard:   http://127.0.0.1:$api_port/
    API docs:    http://127.0.0.1:$api_port/api/v1/docs
    Health:      http://127.0.0.1:$api_port/api/v1/health
    memcached:   127.0.0.1:$mc_port (demo traffic from bin/hc-loadgen, watched by bin/hitcurve-agent)
    First curves appear about 20 s after start (one snapshot every 20 s).
    Logs:        $logs/
  Stop everything with: make stop

MSG
[ -f "$RUN_DIR/$inst/demo-login.txt" ] && cat "$RUN_DIR/$inst/demo-login.txt"
exit 0
