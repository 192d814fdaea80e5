#!/usr/bin/env bash
# The agent's release artefacts in build/release/: the Debian package, the tarball for other
# distributions and SHA256SUMS over both (check with `sha256sum -c --ignore-missing SHA256SUMS`).
# The backend serves this folder under /api/v1/agent-release/ (Settings.agent_release_dir), so the
# dashboard's install blocks fetch from the Hitcurve they were copied from. Run via `make release`.
#   packaging/build-release.sh BIN OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$2"; out=$(realpath "$2")
rel="$out/release"
# made aside and moved into place, so a backend serving the folder never sees half of it
next="$out/release.next"
rm -rf "$next" "$out/release.old"; mkdir -p "$next"
deb=$(bash "$here/build-deb.sh" "$1" "$out")
tgz=$(bash "$here/build-tarball.sh" "$1" "$out")
cp "$deb" "$tgz" "$next/"
(cd "$next" && sha256sum -- *.deb *.tar.gz > SHA256SUMS)
[ -d "$rel" ] && mv "$rel" "$out/release.old"
mv "$next" "$rel"
rm -rf "$out/release.old"
echo "$rel"
