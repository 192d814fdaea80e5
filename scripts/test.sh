#!/usr/bin/env bash
# The project's tests, against real private PostgreSQL and Redis instances (instance "test",
# stopped again at the end) and real memcached/Chromium processes the tests start.
#   scripts/test.sh             every test (`make test`)
#   scripts/test.sh --check     the edit loop (`make check`): lint, types, C and Python unit tests,
#                               Vitest; no memcached, agent, Celery worker, API server or browser
#                               (pytest -m "not live and not slow")
#   scripts/test.sh --lint-only ruff, mypy, tsc, eslint (`make lint`)
# Independent steps run side by side in lanes (the machine mostly waits: on memcached windows,
# agents, workers, the browser), each step's output kept in .run/test/logs/ and printed whole
# when the step ends. Every step runs even after a failure; a summary closes the run, non-zero
# if any step failed. HITCURVE_TEST_WORKERS: pytest-xdist processes (default 4 for the whole
# suite, 2 for --check), each with its own database and Redis server (conftest.py).
set -uo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

mode=all
case "${1:-}" in
    --lint-only) mode=lint ;;
    --check) mode=check ;;
    "") ;;
    *) die "usage: scripts/test.sh [--check|--lint-only]" ;;
esac

LOGS="$RUN_DIR/test/logs"
rm -rf "$LOGS"; mkdir -p "$LOGS"
started=$(date +%s)

step() {  # step NAME COMMAND...: run one step, its output to its log, then print it whole
    local name="$1"; shift
    local slug; slug=$(printf '%s' "$name" | tr -c 'A-Za-z0-9' '_')
    local log="$LOGS/$slug.log" t0 rc outcome
    t0=$(date +%s)
    "$@" >"$log" 2>&1 </dev/null
    rc=$?
    outcome=passed; [ $rc -eq 0 ] || outcome=failed
    printf '%s\t%s\t%s\n' "$outcome" "$(( $(date +%s) - t0 ))" "$name" >"$LOGS/$slug.result"
    {
        flock 9
        say "── $name: $outcome in $(( $(date +%s) - t0 )) s (at +$(( $(date +%s) - started )) s)"
        cat "$log"
        [ $rc -eq 0 ] || say "FAILED: $name (exit $rc; log: ${log#"$ROOT"/})"
    } 9>"$LOGS/.print"
    return $rc
}

py="$VENV/bin/python"
static_lane() {
    step "ruff (lint)"          "$VENV/bin/ruff" check backend worker testing migrations simulator/python profiler-agent bench e2e tests deploy conftest.py
    # The edit loop (check, lint) keeps mypy's, tsc's and eslint's caches under .run/cache/ and
    # checks again only what changed since; the whole suite checks everything from nothing.
    local mypy_args=(--no-incremental) tsc_front="" tsc_e2e="" eslint_args=""
    if [ "$mode" != all ]; then
        local cache="$RUN_DIR/cache"; mkdir -p "$cache"
        mypy_args=(--cache-dir "$cache/mypy")
        tsc_front="--incremental --tsBuildInfoFile $cache/tsc-frontend.tsbuildinfo"
        tsc_e2e="--incremental --tsBuildInfoFile $cache/tsc-e2e.tsbuildinfo"
        eslint_args="--cache --cache-location $cache/eslint-frontend"
    fi
    step "mypy (types)"         "$VENV/bin/mypy" "${mypy_args[@]}" backend/hitcurve worker/hitcurve_worker testing/hitcurve_testing
    step "tsc (frontend types)" bash -c "cd frontend && npx --no-install tsc --noEmit $tsc_front"
    step "eslint (frontend)"    bash -c "cd frontend && npx --no-install eslint $eslint_args ."
    step "tsc (e2e types)"      bash -c "cd e2e && npx --no-install tsc --noEmit $tsc_e2e"
}
c_lane() {
    for d in tracereader profiler-agent simulator; do
        [ -f "$d/Makefile" ] && step "C unit tests: $d" make --no-print-directory -C "$d" test
    done
    [ "$mode" = check ] && return
    # The parser/normaliser and the agent's units again under ASan + UBSan.
    step "C unit tests under ASan/UBSan: tracereader" make --no-print-directory -C tracereader test-asan
    step "C unit tests under ASan/UBSan: profiler-agent" make --no-print-directory -C profiler-agent test-asan
}
pytest_lane() {
    local workers
    if [ "$mode" = check ]; then
        workers="${HITCURVE_TEST_WORKERS:-2}"
        step "pytest (unit)" "$py" -m pytest -q -p no:cacheprovider -n "$workers" -m "not live and not slow"
    else
        # Every memcached of the version matrix, built once and cached under .run/memcached/
        # (the version tests collect their parameters from it).
        step "memcached version matrix (build)" bash scripts/memcached-versions.sh
        workers="${HITCURVE_TEST_WORKERS:-4}"
        # worksteal: a worker that runs out takes half of another's queue, so one long live
        # test does not leave the others idle behind it
        step "pytest" "$py" -m pytest -q -p no:cacheprovider -n "$workers" --dist worksteal --durations=25
    fi
}
vitest_step() {
    step "vitest (frontend)" bash -c 'cd frontend && npx --no-install vitest run'
}
browser_lane() {  # Playwright: the longest lane of the whole suite, so it starts first
    if [ -f e2e/package.json ]; then
        HITCURVE_E2E_PORT=$(free_port); export HITCURVE_E2E_PORT
        step "playwright (e2e)" bash -c 'cd e2e && npx --no-install playwright test'
    fi
}

if [ "$mode" = lint ]; then
    static_lane
else
    bash scripts/services.sh start test || die "could not start the test services"
    trap 'bash scripts/services.sh stop test' EXIT
    set -a; source "$RUN_DIR/test/env"; set +a
    # the waiting lanes first: their processes idle while the CPU-bound lanes compile and lint
    pytest_lane & lanes=($!)
    if [ "$mode" = check ]; then
        vitest_step & lanes+=($!)
    else
        browser_lane & lanes+=($!)
        vitest_step & lanes+=($!)
    fi
    { static_lane; c_lane; } & lanes+=($!)
    wait "${lanes[@]}"
fi

passed=0; failed=()
for r in "$LOGS"/*.result; do
    IFS=$'\t' read -r outcome secs name <"$r"
    if [ "$outcome" = passed ]; then passed=$((passed + 1)); else failed+=("$name"); fi
done
echo
say "passed steps: $passed, failed steps: ${#failed[@]} (wall $(( $(date +%s) - started )) s; logs in ${LOGS#"$ROOT"/})"
for f in "${failed[@]}"; do say "  failed: $f"; done
[ ${#failed[@]} -eq 0 ]
