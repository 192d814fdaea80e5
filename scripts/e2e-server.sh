#!/usr/bin/env bash
# Backend for the Playwright checks: the private "test" services, a migrated database of its own
# (dropped and made anew each run), seeded by e2e/seed.py when present, served on port $1.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
port="${1:?usage: e2e-server.sh PORT}"
bash scripts/services.sh start test
set -a; source "$RUN_DIR/test/env"; set +a
base="${HITCURVE_DATABASE_URL%/*}"
db="hitcurve_e2e_$port"   # one database per server port: parallel runs never share one
"$VENV/bin/python" - "$base" "$db" <<'PY'
import sys
from sqlalchemy import create_engine, text
engine = create_engine(sys.argv[1] + "/postgres", isolation_level="AUTOCOMMIT")
with engine.connect() as conn:
    conn.execute(text(f'DROP DATABASE IF EXISTS "{sys.argv[2]}" WITH (FORCE)'))
    conn.execute(text(f'CREATE DATABASE "{sys.argv[2]}"'))
PY
export HITCURVE_DATABASE_URL="$base/$db"
"$VENV/bin/alembic" upgrade head >/dev/null
if [ -f e2e/seed.py ]; then "$VENV/bin/python" e2e/seed.py; fi
# Account mails (password reset, invitations) go to an SMTP sink that files them under
# .run/test/e2e-mail-<port>/ for the browser checks to read; it ends with this script's process.
mail_dir="$RUN_DIR/test/e2e-mail-$port"; rm -rf "$mail_dir"; mkdir -p "$mail_dir"
smtp_port=$(free_port)
"$VENV/bin/python" scripts/mailsink.py "$smtp_port" "$mail_dir" &
sink=$!
export HITCURVE_SMTP_HOST=127.0.0.1 HITCURVE_SMTP_PORT="$smtp_port" HITCURVE_PUBLIC_URL="http://127.0.0.1:$port"
# One API process is enough for the browser checks; the launcher keeps proxy headers untrusted.
export HITCURVE_API_WORKERS="${HITCURVE_API_WORKERS:-1}"
# The notification-channel checks post to a receiver the test runs on loopback, a target a hosted
# install refuses: this self-hosted test server allows it in its install settings, as an operator
# would on the host, and the seeded owner is the install's administrator, who may switch it.
export HITCURVE_ADMIN_EMAILS=e2e@example.com
"$VENV/bin/python" -m hitcurve.notify.install_admin private-webhooks allow >/dev/null
# Every check signs up from 127.0.0.1, and the test Redis keeps the count for an hour across runs:
# the per-address sign-up limit (tested by backend/tests) is raised here, as pytest's conftest does.
export HITCURVE_SIGNUP_MAX_PER_IP_PER_HOUR="${HITCURVE_SIGNUP_MAX_PER_IP_PER_HOUR:-10000}"
"$VENV/bin/python" -m hitcurve.serve --host 127.0.0.1 --port "$port" --log-level warning &
api=$!
trap 'kill $api $sink 2>/dev/null; wait' EXIT TERM INT
wait $api
