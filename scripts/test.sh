#!/usr/bin/env bash
# Every test of the project, against real private PostgreSQL and Redis instances (instance
# "test", stopped again at the end) and real memcached/Chromium processes the tests start.
# Runs every step even after a failure, then prints a summary and exits non-zero if any failed.
#   scripts/test.sh [--lint-only]
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

lint_only=0; [ "${1:-}" = "--lint-only" ] && lint_only=1
failed=(); passed=()
step() {  # step NAME COMMAND...: run one step, remember its outcome
    local name="$1"; shift
    say "── $name"
    if "$@"; then passed+=("$name"); else failed+=("$name"); say "FAILED: $name"; fi
}

py=("$VENV/bin/python")
step "ruff (lint)"        "$VENV/bin/ruff" check backend worker testing migrations simulator/python profiler-agent bench e2e tests deploy conftest.py
step "mypy (types)"       "$VENV/bin/mypy" --no-incremental backend/hitcurve worker/hitcurve_worker testing/hitcurve_testing
step "tsc (frontend types)" bash -c 'cd frontend && npx --no-install tsc --noEmit'
step "eslint (frontend)"  bash -c 'cd frontend && npx --no-install eslint .'
step "tsc (e2e types)"    bash -c 'cd e2e && npx --no-install tsc --noEmit'

if [ $lint_only -eq 0 ]; then
    for d in tracereader profiler-agent simulator; do
        [ -f "$d/Makefile" ] && step "C unit tests: $d" make --no-print-directory -C "$d" test
    done
    # The parser/normaliser and the agent's units again under ASan + UBSan (issue 15).
    step "C unit tests under ASan/UBSan: tracereader" make --no-print-directory -C tracereader test-asan
    step "C unit tests under ASan/UBSan: profiler-agent" make --no-print-directory -C profiler-agent test-asan
    # Every memcached of the version matrix, built once and cached under .run/memcached/.
    step "memcached version matrix (build)" bash scripts/memcached-versions.sh

    bash scripts/services.sh start test || die "could not start the test services"
    trap 'bash scripts/services.sh stop test' EXIT
    set -a; source "$RUN_DIR/test/env"; set +a

    step "pytest" "${py[@]}" -m pytest -q -p no:cacheprovider
    step "vitest (frontend)" bash -c 'cd frontend && npx --no-install vitest run'
    if [ -f e2e/package.json ]; then
        HITCURVE_E2E_PORT=$(free_port); export HITCURVE_E2E_PORT
        step "playwright (e2e)" bash -c 'cd e2e && npx --no-install playwright test'
    fi
fi

echo
say "passed steps: ${#passed[@]}, failed steps: ${#failed[@]}"
for f in "${failed[@]}"; do say "  failed: $f"; done
[ ${#failed[@]} -eq 0 ]
