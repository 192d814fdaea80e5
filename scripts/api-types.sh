#!/usr/bin/env bash
# The dashboard's API types (frontend/src/api/schema.ts) from the backend's OpenAPI document:
# openapi-typescript (pinned in frontend/package-lock.json) over the document the API serves at
# /api/v1/openapi.json. Run it after changing a route or schema; backend/tests/test_api_types.py
# fails while the committed file differs from what this writes.
#   scripts/api-types.sh [OUT]      (default frontend/src/api/schema.ts)
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"
out="${1:-frontend/src/api/schema.ts}"
doc=$(mktemp --suffix=.json)
trap 'rm -f "$doc"' EXIT
# The document names no connection: any URL satisfies the settings' required fields.
HITCURVE_DATABASE_URL="${HITCURVE_DATABASE_URL:-postgresql+psycopg://openapi@127.0.0.1/openapi}" \
HITCURVE_REDIS_URL="${HITCURVE_REDIS_URL:-redis://127.0.0.1/0}" \
    "$VENV/bin/python" -c 'import json, sys
from hitcurve.main import create_app
json.dump(create_app().openapi(), open(sys.argv[1], "w"))' "$doc"
frontend/node_modules/.bin/openapi-typescript "$doc" --default-non-nullable false --output "$out" >/dev/null
