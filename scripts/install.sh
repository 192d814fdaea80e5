#!/usr/bin/env bash
# Install what is missing, and nothing else: Debian packages, the Python virtual env from
# requirements.lock, and node_modules from the committed package-lock files. Idempotent: a
# second run finds everything in place (stamp files hold the lock hashes) and returns quickly.
set -euo pipefail
source "$(dirname "$0")/lib.sh"
cd "$ROOT"

# --- Debian packages -------------------------------------------------------------------------
missing=()
while read -r pkg; do
    case "$pkg" in ''|'#'*) continue ;; esac
    status=$(dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null || true)
    [ "$status" = "install ok installed" ] || missing+=("$pkg")
done < scripts/debian-packages.txt
if ! command -v node >/dev/null 2>&1; then missing+=(nodejs npm); fi
if [ ${#missing[@]} -gt 0 ]; then
    say "installing Debian packages: ${missing[*]}"
    command -v apt-get >/dev/null || die "apt-get not found: Hitcurve's scripts need Debian 12 or Ubuntu (see README)"
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 18 ] || die "Node.js >= 18 is required (found $(node --version))"

# --- Python virtual env ----------------------------------------------------------------------
# The stamp covers the simulator's C sources too: the editable hitcurve_sim extension is compiled
# from them at install, and a venv built before a change to them (e.g. mcslru.base, which the
# worker's policy correction needs) would otherwise keep the old .so and answer without it.
sim_sources=$(find simulator/src simulator/include simulator/python tracereader/include -name '*.[ch]' 2>/dev/null | LC_ALL=C sort)
# shellcheck disable=SC2086  # one word per path (no spaces in the repository's paths)
py_stamp=$(sha_of requirements.lock backend/pyproject.toml worker/pyproject.toml testing/pyproject.toml simulator/python/pyproject.toml simulator/python/setup.py $sim_sources)
if [ ! -x "$VENV/bin/python" ] || [ "$(cat "$VENV/.hitcurve-stamp" 2>/dev/null)" != "$py_stamp" ]; then
    say "creating the Python virtual env (.venv) from requirements.lock"
    [ -x "$VENV/bin/python" ] || python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q --disable-pip-version-check -r requirements.lock
    editables=(-e backend -e worker -e testing)
    [ -f simulator/python/pyproject.toml ] && editables+=(-e simulator/python)
    "$VENV/bin/pip" install -q --disable-pip-version-check --no-deps --no-build-isolation "${editables[@]}"
    echo "$py_stamp" > "$VENV/.hitcurve-stamp"
fi

# --- node_modules ----------------------------------------------------------------------------
for dir in frontend e2e; do
    [ -f "$dir/package-lock.json" ] || continue
    js_stamp=$(sha_of "$dir/package-lock.json")
    if [ ! -d "$dir/node_modules" ] || [ "$(cat "$dir/node_modules/.hitcurve-stamp" 2>/dev/null)" != "$js_stamp" ]; then
        say "installing node_modules in $dir/ from package-lock.json"
        # `npm install` rather than `npm ci`: npm 11 leaves other platforms' optional packages
        # (rollup's native builds) out of the lock, which `npm ci` then calls out of sync. With a
        # lock present, `npm install` installs exactly the locked versions, but it also rewrites
        # the lock (adding those packages): the committed lock is put back afterwards, so the
        # checkout stays clean and the stamp (the committed lock's hash) matches on the next run.
        saved=$(mktemp)
        cp "$dir/package-lock.json" "$saved"
        if ! (cd "$dir" && npm install --no-audit --no-fund --loglevel=error); then
            cp "$saved" "$dir/package-lock.json"; rm -f "$saved"
            die "npm install failed in $dir/"
        fi
        cmp -s "$saved" "$dir/package-lock.json" || cp "$saved" "$dir/package-lock.json"
        rm -f "$saved"
        echo "$js_stamp" > "$dir/node_modules/.hitcurve-stamp"
    fi
done
say "dependencies are in place"
