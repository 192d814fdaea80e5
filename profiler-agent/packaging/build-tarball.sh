#!/usr/bin/env bash
# Build build/hitcurve-agent-<version>-linux-<arch>.tar.gz, the agent for any Linux of this
# architecture with the GNU C library (the version INSTALL names or later), nothing else installed:
# bin/hitcurve-agent starts libexec/hitcurve-agent with the shared libraries it was built against
# (libcurl, jansson, zstd, xz, xxhash and theirs), which travel in lib/; the C library itself
# (libc, libm, libresolv, the dynamic loader) is the host's. Also the systemd unit and example
# config under share/hitcurve-agent/, the README and INSTALL. Run via `make tarball`.
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
install -D -m 0755 "$bin" "$stage/libexec/hitcurve-agent"
strip --strip-unneeded "$stage/libexec/hitcurve-agent"
# Every library the loader resolves for the binary, its own dependencies included, except the C
# library's parts, which must match the host's kernel interface and loader.
install -d "$stage/lib"
ldd "$stage/libexec/hitcurve-agent" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' |
while read -r soname path; do
    case "$soname" in
        libc.so.*|libm.so.*|libresolv.so.*|libpthread.so.*|libdl.so.*|librt.so.*|ld-linux*) continue ;;
    esac
    install -m 0644 "$(realpath "$path")" "$stage/lib/$soname"
done
[ -f "$stage/lib/libjansson.so.4" ] || { echo "build-tarball: ldd found no libjansson to bundle" >&2; exit 1; }
# The newest GNU C library version any of them asks for: the host must have it.
glibc=$(objdump -T "$stage/libexec/hitcurve-agent" "$stage"/lib/*.so* 2>/dev/null |
        grep -o 'GLIBC_[0-9][0-9.]*' | sed 's/GLIBC_//' | sort -uV | tail -1)
cat > "$stage/bin-hitcurve-agent" <<'SH'
#!/bin/sh
# The agent with the shared libraries of this folder (lib/); only the C library is the host's.
# Works through a symlink (e.g. /usr/local/bin/hitcurve-agent -> this file).
dir=$(dirname "$(readlink -f "$0")")/..
LD_LIBRARY_PATH="$dir/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "$dir/libexec/hitcurve-agent" "$@"
SH
install -D -m 0755 "$stage/bin-hitcurve-agent" "$stage/bin/hitcurve-agent"
rm "$stage/bin-hitcurve-agent"
install -D -m 0644 "$agent/systemd/hitcurve-agent.service" "$agent/systemd/agent.conf.example" \
    -t "$stage/share/hitcurve-agent/"
install -m 0644 "$agent/README.md" "$stage/README.md"
libs=$(cd "$stage/lib" && ls | sed 's/^/  /')
cat > "$stage/INSTALL" <<TXT
hitcurve-agent $version for Linux $arch (built on $(. /etc/os-release && echo "$PRETTY_NAME")).

Needs the GNU C library $glibc or later (Debian 12, Ubuntu 22.04 and later have it) and nothing
else: bin/hitcurve-agent runs libexec/hitcurve-agent with these libraries from lib/:
$libs
HTTPS to the backend checks its certificate against /etc/ssl/certs/ca-certificates.crt (Debian's
ca-certificates); elsewhere give ca-file = <your CA bundle> in the configuration.

Run it in place (no root needed):
  bin/hitcurve-agent run --memcached 127.0.0.1:11211 --backend-url https://hitcurve.example.com \\
      --agent-key-file agent.key --spool-dir ./spool

Install under /opt with the systemd unit:
  cp -a . /opt/hitcurve-agent
  ln -sf /opt/hitcurve-agent/bin/hitcurve-agent /usr/local/bin/hitcurve-agent
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
