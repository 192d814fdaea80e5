#!/usr/bin/env bash
# The service's own processes under supervisord (one per instance, .run/<instance>/): the API
# (`python -m hitcurve.serve`), two Celery workers -- `worker` on the ingest queue (uploads,
# merges) and `worker-batch` on the batch queue (simulations, corrections, reports, history
# maintenance), so a burst of policy runs never delays curves -- and beat, plus any program a caller adds as
# .run/<instance>/programs/<name>.conf (the demo adds memcached, traffic and the agent).
# supervisord restarts a program that dies, appends to its log in .run/<instance>/logs/ and
# rotates it at 10 MB (5 kept). Usage:
#   scripts/supervise.sh start INSTANCE      write the config and start (or update) supervisord;
#                                            needs .run/INSTANCE/env (scripts/services.sh start)
#   scripts/supervise.sh status INSTANCE     one line per program (pid, uptime) or "not running"
#   scripts/supervise.sh ctl INSTANCE ARGS…  supervisorctl for the instance (restart worker, …)
#   scripts/supervise.sh stop INSTANCE       stop every program, then supervisord
# Environment: HITCURVE_API_PORT (else .run/INSTANCE/api.port, a free port chosen once),
# HITCURVE_WORKER_CONCURRENCY (ingest processes, 2), HITCURVE_BATCH_CONCURRENCY (batch processes,
# 1). Stopping a worker waits up to 60 s for its running tasks.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cmd="${1:-status}"
inst="${2:-dev}"
dir="$RUN_DIR/$inst"
conf="$dir/supervisord.conf"
sock="$dir/supervisor.sock"
pidfile="$dir/procs/supervisord.pid"

ctl() { "$VENV/bin/supervisorctl" -c "$conf" "$@"; }
running() { [ -s "$pidfile" ] && kill -0 "$(cat "$pidfile")" 2>/dev/null; }

write_conf() {
    local api_port="${HITCURVE_API_PORT:-}"
    if [ -z "$api_port" ]; then
        [ -s "$dir/api.port" ] || free_port > "$dir/api.port"
        api_port=$(cat "$dir/api.port")
    fi
    mkdir -p "$dir/logs" "$dir/procs" "$dir/programs"
    # Common to every program: restart on any exit, appended logs rotated at 10 MB.
    local common="autostart=true
autorestart=true
startsecs=3
startretries=1000
redirect_stderr=true
stdout_logfile_maxbytes=10MB
stdout_logfile_backups=5
stopasgroup=true
killasgroup=true"
    cat > "$conf" <<CONF
; written by scripts/supervise.sh: edit that, not this
[unix_http_server]
file=$sock
chmod=0700

[supervisord]
logfile=$dir/logs/supervisord.log
logfile_maxbytes=10MB
logfile_backups=5
pidfile=$pidfile
directory=$ROOT
nodaemon=false
minfds=1024

[rpcinterface:supervisor]
supervisor.rpcinterface_factory = supervisor.rpcinterface:make_main_rpcinterface

[supervisorctl]
serverurl=unix://$sock

[program:api]
command=$VENV/bin/python -m hitcurve.serve --host 127.0.0.1 --port $api_port
stdout_logfile=$dir/logs/api.log
stopwaitsecs=20
$common

[program:worker]
command=$VENV/bin/celery -A hitcurve_worker.celery_app worker -Q $HITCURVE_CELERY_INGEST_QUEUE --loglevel=INFO --concurrency=${HITCURVE_WORKER_CONCURRENCY:-2} -n $inst-ingest@%%h
stdout_logfile=$dir/logs/worker.log
stopwaitsecs=60
$common

[program:worker-batch]
command=$VENV/bin/celery -A hitcurve_worker.celery_app worker -Q $HITCURVE_CELERY_BATCH_QUEUE --loglevel=INFO --concurrency=${HITCURVE_BATCH_CONCURRENCY:-1} -n $inst-batch@%%h
stdout_logfile=$dir/logs/worker-batch.log
stopwaitsecs=60
$common

[program:beat]
command=$VENV/bin/celery -A hitcurve_worker.celery_app beat --loglevel=INFO --schedule $dir/celerybeat-schedule
stdout_logfile=$dir/logs/beat.log
stopwaitsecs=10
$common

[include]
files = $dir/programs/*.conf
CONF
}

case "$cmd" in
    start)
        [ -s "$dir/env" ] || die "no $dir/env: run scripts/services.sh start $inst first"
        set -a; source "$dir/env"; set +a
        # the two queues of hitcurve.core.task_names.LANES (defaults of Settings.celery_*_queue)
        export HITCURVE_CELERY_INGEST_QUEUE="${HITCURVE_CELERY_INGEST_QUEUE:-hitcurve.ingest}"
        export HITCURVE_CELERY_BATCH_QUEUE="${HITCURVE_CELERY_BATCH_QUEUE:-hitcurve.batch}"
        write_conf
        if running; then
            ctl update >/dev/null
        else
            "$VENV/bin/supervisord" -c "$conf" || die "supervisord did not start, see $dir/logs/supervisord.log"
            for _ in $(seq 50); do [ -S "$sock" ] && break; sleep 0.1; done
        fi ;;
    status)
        if running; then ctl status || true; else echo "supervised processes ($inst): not running"; fi ;;
    ctl)
        shift 2; ctl "$@" ;;
    stop)
        if running; then
            local_pid=$(cat "$pidfile")
            ctl stop all >/dev/null 2>&1 || true
            kill "$local_pid" 2>/dev/null || true
            for _ in $(seq 300); do kill -0 "$local_pid" 2>/dev/null || break; sleep 0.1; done
        fi
        rm -f "$pidfile" ;;
    *)  die "usage: scripts/supervise.sh start|status|ctl|stop INSTANCE" ;;
esac
