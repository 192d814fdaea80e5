#!/usr/bin/env bash
# Stop exactly what the project's scripts started: processes whose pid files are under .run/,
# then the private PostgreSQL and Redis instances. Nothing else is touched.
set -uo pipefail
source "$(dirname "$0")/lib.sh"
[ -d "$RUN_DIR" ] || exit 0
# Supervised processes first (their supervisor would restart them otherwise).
for conf in "$RUN_DIR"/*/supervisord.conf; do
    [ -f "$conf" ] || continue
    inst=$(basename "$(dirname "$conf")")
    if [ -s "$RUN_DIR/$inst/procs/supervisord.pid" ]; then
        bash "$ROOT/scripts/supervise.sh" stop "$inst" && say "stopped the supervised processes ($inst)"
    fi
done
for pidfile in "$RUN_DIR"/*/procs/*.pid; do
    [ -f "$pidfile" ] || continue
    pid=$(cat "$pidfile")
    name=$(basename "$pidfile" .pid)
    if kill -0 "$pid" 2>/dev/null; then
        kill "$pid" 2>/dev/null
        for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
        kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null
        say "stopped $name (pid $pid)"
    fi
    rm -f "$pidfile"
done
for inst in "$RUN_DIR"/*/; do
    inst=$(basename "$inst")
    bash "$ROOT/scripts/services.sh" stop "$inst" && say "stopped PostgreSQL and Redis ($inst)"
done
