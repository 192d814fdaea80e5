#!/usr/bin/env bash
# The whole product on this machine: private PostgreSQL and Redis (instance "dev"), the backend
# serving the dashboard, a Celery worker and beat, a demo memcached with a load generator and
# the agent watching it, all under supervisord (scripts/supervise.sh: restarted when they die,
# logs appended and rotated). `make status` lists them; `make stop` stops them.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

inst=dev
procs="$RUN_DIR/$inst/procs"; logs="$RUN_DIR/$inst/logs"
mkdir -p "$procs" "$logs"

bash scripts/services.sh start "$inst"
set -a; source "$RUN_DIR/$inst/env"; set +a

port_file() { local f="$RUN_DIR/$inst/$1.port"; [ -s "$f" ] || free_port > "$f"; cat "$f"; }
# program NAME ONESHOT COMMAND...: a demo program for supervisord (scripts/supervise.sh), which
# restarts it when it dies (ONESHOT=1: run once to success) and appends/rotates its log.
program() {
    local name="$1" oneshot="$2"; shift 2
    local restart="autorestart=true
startsecs=3"
    [ "$oneshot" = 1 ] && restart="autorestart=unexpected
exitcodes=0
startsecs=0"
    cat > "$procs_conf/$name.conf" <<CONF
[program:$name]
command=$*
stdout_logfile=$logs/$name.log
redirect_stderr=true
stdout_logfile_maxbytes=10MB
stdout_logfile_backups=5
startretries=1000
stopasgroup=true
killasgroup=true
$restart
CONF
}
procs_conf="$RUN_DIR/$inst/programs"; mkdir -p "$procs_conf"
rm -f "$procs_conf"/*.conf

say "migrating the database"
"$VENV/bin/alembic" upgrade head >>"$logs/migrate.log" 2>&1 || die "migration failed, see $logs/migrate.log"

api_port=$(port_file api)
mc_port=$(port_file memcached)
smtp_port=$(port_file smtp)
# Mail: every mail the demo sends (sign-up confirmations, invitations, password resets, reports)
# goes to a local SMTP sink that files it under .run/dev/mail/, so accounts and invitations work
# without a mail server. The API and the workers are started with these settings below.
mail_dir="$RUN_DIR/$inst/mail"; mkdir -p "$mail_dir"
program mailsink 0 "$VENV/bin/python $ROOT/scripts/mailsink.py $smtp_port $mail_dir"
export HITCURVE_SMTP_HOST=127.0.0.1 HITCURVE_SMTP_PORT="$smtp_port"
export HITCURVE_PUBLIC_URL="${HITCURVE_PUBLIC_URL:-http://127.0.0.1:$api_port}"
# The demo is a self-hosted install on one machine: its owner (scripts/demo_setup.py) is the
# install's administrator, and the setup allows channels to target a receiver on loopback or the
# local network (a hosted install refuses such targets); the alerts page switches it, no restart.
export HITCURVE_ADMIN_EMAILS="${HITCURVE_ADMIN_EMAILS:-demo@hitcurve.dev}"
mc_user=""; [ "$(id -u)" -eq 0 ] && mc_user="-u root"   # memcached refuses root without -u
program memcached 0 "$(command -v memcached) -l 127.0.0.1 -p $mc_port -U 0 -m 64 -t 2 $mc_user"
HITCURVE_API_PORT="$api_port" bash scripts/supervise.sh start "$inst"

api="http://127.0.0.1:$api_port"
for _ in $(seq 600); do
    curl -fsS "$api/api/v1/health" >/dev/null 2>&1 && break
    sleep 0.2
done
curl -fsS "$api/api/v1/health" >/dev/null || die "the backend does not answer, see $logs/api.log"
for _ in $(seq 50); do port_open "$mc_port" && break; sleep 0.1; done
port_open "$mc_port" || die "the demo memcached did not start, see $logs/memcached.log"

# Demo tenant, traffic and agent (each part joins when it is built).
"$VENV/bin/python" scripts/demo_setup.py account "$api" "$RUN_DIR/$inst" || die "demo account setup failed"
# Traffic: Zipf 0.9 over 400k keys of ~200 B against a 64 MiB memcached, so it evicts and the
# curve has something to say; misses are refilled after a simulated recompute delay.
program loadgen 0 "$ROOT/bin/hc-loadgen --server 127.0.0.1:$mc_port --dist zipf --alpha 0.9 --keys 400000 \
    --requests 0 --duration 604800 --value-size 200 --conns 1 --recompute-us 200,1000,5000 --quiet"
mkdir -p "$RUN_DIR/$inst/spool" "$RUN_DIR/$inst/snapshots"
program agent 0 "$ROOT/bin/hitcurve-agent run --memcached 127.0.0.1:$mc_port --backend-url $api \
    --agent-key-file $RUN_DIR/$inst/agent.key --spool-dir $RUN_DIR/$inst/spool \
    --snapshot-dir $RUN_DIR/$inst/snapshots --interval 20"
program assign 1 "$VENV/bin/python $ROOT/scripts/demo_setup.py assign $api $RUN_DIR/$inst 127.0.0.1:$mc_port"
HITCURVE_API_PORT="$api_port" bash scripts/supervise.sh start "$inst"

cat <<MSG

  Hitcurve is running.
    Dashboard:   http://127.0.0.1:$api_port/
    API docs:    http://127.0.0.1:$api_port/api/v1/docs
    Health:      http://127.0.0.1:$api_port/api/v1/health
    memcached:   127.0.0.1:$mc_port (demo traffic from bin/hc-loadgen, watched by bin/hitcurve-agent)
    Mail:        every mail the demo sends lands in $mail_dir/ as a .eml file
                 (a local SMTP sink on 127.0.0.1:$smtp_port; sign-up and invitation links are in them)
    First curves appear about 20 s after start (one snapshot every 20 s).
    Logs:        $logs/ (appended, rotated at 10 MB; processes restart when they die)
    Processes:   make status
  Stop everything with: make stop

MSG
[ -f "$RUN_DIR/$inst/demo-login.txt" ] && cat "$RUN_DIR/$inst/demo-login.txt"
exit 0
