#!/usr/bin/env bash
# Hitcurve's simulator side by side with libCacheSim (PyPI, pinned in requirements.lock):
# hit-ratio differences and end-to-end speed on the shared traces, then the 20 x 20 x 1M
# grid. The pinned libCacheSim goes into bench/libcachesim/.venv (created here, git-ignored).
#   bench/libcachesim/run.sh [compare.py options, e.g. --traces OLTP,multi1 --policies lru,lirs]
set -euo pipefail
cd "$(dirname "$0")/../.."
export HITCURVE_TRACES_DIR="${HITCURVE_TRACES_DIR:-$(cd ../shared/traces 2>/dev/null && pwd || echo /work/shared/traces)}"
V=bench/libcachesim/.venv
if ! "$V/bin/python" -c 'import libcachesim' 2>/dev/null; then
    python3 -m venv "$V"
    "$V/bin/pip" install -q --disable-pip-version-check -r bench/libcachesim/requirements.lock
fi
make -s -C simulator all
"$V/bin/python" bench/libcachesim/compare.py "$@"
