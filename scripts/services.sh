#!/usr/bin/env bash
# Private PostgreSQL and Redis instances on loopback, one set per "instance" name (dev, test, …),
# each with its own data directory under .run/<instance>/ and its own free ports. Never touches
# system services. Usage:
#   scripts/services.sh start|stop|status|env [instance]     (instance defaults to "dev")
# `start` prints nothing but errors; `env` prints the shell variables to reach the instance.
set -euo pipefail
source "$(dirname "$0")/lib.sh"

cmd="${1:-status}"
inst="${2:-dev}"
dir="$RUN_DIR/$inst"
mkdir -p "$dir"

PG_BIN=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$PG_BIN" ] || PG_BIN=$(dirname "$(command -v initdb 2>/dev/null || echo /nonexistent/initdb)")

# PostgreSQL refuses to run as root: as root we run it as the `postgres` user the Debian package
# creates. That user cannot enter a checkout under /root, so its data then lives in /var/tmp,
# linked from .run/<instance>/pg.
pg_user_run() {
    if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi
}

port_for() {  # port_for NAME: the instance's port for NAME, chosen once and kept
    local f="$dir/$1.port"
    if [ ! -s "$f" ]; then free_port > "$f"; fi
    cat "$f"
}

# PostgreSQL settings per instance (docs/storage.md, "PostgreSQL settings for ingest"). dev, test
# and demo hold disposable data: fsync=off, defaults otherwise. `fleet` (bench/fleet/run.sh)
# measures the stack as it would run in production: durable (fsync, full_page_writes and
# synchronous_commit at their defaults, on); a checkpoint every 15 min or ~8 GB of WAL instead of
# 5 min or ~0.5 GB (after each, the first change of every page logs the whole 8 KB page); those
# images compressed (lz4); 1 GB of shared buffers; pg_stat_statements loaded, so the run can say
# what costs PostgreSQL per upload. HITCURVE_FLEET_PG_SETTINGS replaces the fleet's own settings
# for an A/B ("-c fsync=off": the dev settings' PostgreSQL, with pg_stat_statements).
FLEET_PG="-c shared_buffers=1GB -c max_wal_size=16GB -c checkpoint_timeout=15min -c wal_compression=lz4"
pg_settings() {
    local port=$1 pkglib
    local s="-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories='' -c max_connections=200"
    if [ "$inst" != fleet ]; then echo "$s -c fsync=off"; return; fi
    s="$s ${HITCURVE_FLEET_PG_SETTINGS:-$FLEET_PG}"
    pkglib=$("$PG_BIN/pg_config" --pkglibdir 2>/dev/null || true)
    if [ -e "$pkglib/pg_stat_statements.so" ]; then
        s="$s -c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=1000"
    fi
    echo "$s"
}

pg_pid() { pg_user_run head -n1 "$dir/pg/postmaster.pid" 2>/dev/null || true; }
alive()  { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

start_pg() {
    local port; port=$(port_for pg)
    if alive "$(pg_pid)"; then return 0; fi
    if [ ! -e "$dir/pg/PG_VERSION" ] && [ ! -e "$dir/pg" ]; then
        [ -x "$PG_BIN/initdb" ] || die "PostgreSQL server binaries not found: run scripts/install.sh"
        local data="$dir/pg"
        if [ "$(id -u)" -eq 0 ] && ! runuser -u postgres -- test -x "$dir"; then
            data="/var/tmp/hitcurve-$(echo "$dir" | sha256sum | cut -c1-12)/pg"
            rm -rf "$data"; mkdir -p "$(dirname "$data")"; ln -sfn "$data" "$dir/pg"
        fi
        mkdir -p "$data"
        [ -s "$dir/pg.password" ] || (umask 077; python3 -c 'import secrets;print(secrets.token_hex(16))' > "$dir/pg.password")
        local pwfile; pwfile=$(mktemp); cp "$dir/pg.password" "$pwfile"
        if [ "$(id -u)" -eq 0 ]; then chown -R postgres: "$data" "$pwfile"; fi
        pg_user_run "$PG_BIN/initdb" -D "$data" -U hitcurve --pwfile="$pwfile" \
            --auth=scram-sha-256 -E UTF8 --locale=C.UTF-8 >"$dir/pg-initdb.log" 2>&1 \
            || { rm -f "$pwfile"; die "initdb failed, see $dir/pg-initdb.log"; }
        rm -f "$pwfile"
    fi
    local data; data=$(readlink -f "$dir/pg")
    local log="$data/server.log"
    pg_user_run "$PG_BIN/pg_ctl" -D "$data" -l "$log" -w -t 30 \
        -o "$(pg_settings "$port")" \
        start >/dev/null || die "PostgreSQL ($inst) did not start, see $log"
    PGPASSWORD=$(cat "$dir/pg.password") "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U hitcurve -d postgres -qAt \
        -c "SELECT 1 FROM pg_database WHERE datname='hitcurve'" | grep -q 1 \
        || PGPASSWORD=$(cat "$dir/pg.password") "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U hitcurve hitcurve
}

stop_pg() {
    [ -e "$dir/pg" ] || return 0
    if alive "$(pg_pid)"; then
        pg_user_run "$PG_BIN/pg_ctl" -D "$(readlink -f "$dir/pg")" -m fast -w stop >/dev/null
    fi
}

start_redis() {
    local port; port=$(port_for redis)
    if alive "$(cat "$dir/redis.pid" 2>/dev/null)"; then return 0; fi
    command -v redis-server >/dev/null || die "redis-server not found: run scripts/install.sh"
    mkdir -p "$dir/redis"
    redis-server --bind 127.0.0.1 --port "$port" --dir "$dir/redis" --daemonize yes \
        --pidfile "$dir/redis.pid" --logfile "$dir/redis/redis.log" --appendonly yes --save "" \
        || die "Redis ($inst) did not start, see $dir/redis/redis.log"
    for _ in $(seq 50); do port_open "$port" && return 0; sleep 0.1; done
    die "Redis ($inst) did not accept connections on port $port, see $dir/redis/redis.log"
}

stop_redis() {
    local pid; pid=$(cat "$dir/redis.pid" 2>/dev/null || true)
    if alive "$pid"; then
        kill "$pid"
        for _ in $(seq 50); do alive "$pid" || break; sleep 0.1; done
    fi
    rm -f "$dir/redis.pid"
}

print_env() {
    local pgp rp; pgp=$(port_for pg); rp=$(port_for redis)
    cat <<ENV
HITCURVE_DATABASE_URL=postgresql+psycopg://hitcurve:$(cat "$dir/pg.password" 2>/dev/null)@127.0.0.1:$pgp/hitcurve
HITCURVE_REDIS_URL=redis://127.0.0.1:$rp/0
HITCURVE_RUN_INSTANCE=$inst
ENV
}

case "$cmd" in
    start)  start_pg; start_redis; (umask 077; print_env > "$dir/env") ;;
    stop)   stop_redis; stop_pg ;;
    status)
        if alive "$(pg_pid)"; then echo "postgresql ($inst): running on 127.0.0.1:$(port_for pg), pid $(pg_pid)"; else echo "postgresql ($inst): stopped"; fi
        if alive "$(cat "$dir/redis.pid" 2>/dev/null)"; then echo "redis ($inst): running on 127.0.0.1:$(port_for redis), pid $(cat "$dir/redis.pid")"; else echo "redis ($inst): stopped"; fi ;;
    env)    print_env ;;
    *)      die "usage: scripts/services.sh start|stop|status|env [instance]" ;;
esac
