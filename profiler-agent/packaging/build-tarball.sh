#!/usr/bin/env bash
# Build build/hitcurve-agent-<version>-linux-<arch>.tar.gz for distributions without dpkg:
# bin/, the systemd unit and example config under share/hitcurve-agent/, the README and an
# INSTALL note naming the shared libraries the binary needs. Run via `make tarball`.
#   packaging/build-tarball.sh BIN OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
agent=$(cd "$here/.." && pwd)
bin=$(realpath "$1"); mkdir -p "$2"; out=$(realpath "$2")
version=$(sed -n 's/^#define AG_VERSION "\(.*\)"/\1/p' "$agent/src/agent/config.h")
arch=$(uname -m)
name="hitcurve-agent-${version}-linux-${arch}"
stage="$out/tarball/$name"
rm -rf "$stage"
install -D -m 0755 "$bin" "$stage/bin/hitcurve-agent"
strip --strip-unneeded "$stage/bin/hitcurve-agent"
install -D -m 0644 "$agent/systemd/hitcurve-agent.service" "$agent/systemd/agent.conf.example" \
    -t "$stage/share/hitcurve-agent/"
install -m 0644 "$agent/README.md" "$stage/README.md"
libs=$(objdump -p "$stage/bin/hitcurve-agent" | awk '/NEEDED/ {print "  " $2}')
cat > "$stage/INSTALL" <<TXT
hitcurve-agent $version for Linux $arch (built on $(. /etc/os-release && echo "$PRETTY_NAME")).

Shared libraries it needs (install them with your distribution's packages: jansson, libcurl,
zlib, zstd, xz/lzma, xxhash):
$libs

Install under /usr/local with the systemd unit:
  install -m 0755 bin/hitcurve-agent /usr/local/bin/
  useradd --system --user-group --no-create-home --shell /usr/sbin/nologin hitcurve
  install -d -m 0750 -g hitcurve /etc/hitcurve
  install -m 0640 -g hitcurve share/hitcurve-agent/agent.conf.example /etc/hitcurve/agent.conf
  # edit backend-url in /etc/hitcurve/agent.conf; the agent key goes to /etc/hitcurve/agent.key
  # (one line hca_..., owner hitcurve, mode 0600)
  install -m 0644 share/hitcurve-agent/hitcurve-agent.service /etc/systemd/system/
  systemctl daemon-reload && systemctl enable --now hitcurve-agent

Check a configuration without starting anything:
  hitcurve-agent run --config /etc/hitcurve/agent.conf --check-config
TXT
tar -C "$out/tarball" --owner=0 --group=0 --sort=name -czf "$out/$name.tar.gz" "$name"
echo "$out/$name.tar.gz"
