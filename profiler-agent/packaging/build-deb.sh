#!/usr/bin/env bash
# Build build/hitcurve-agent_<version>_<arch>.deb from the built binary, the systemd unit and
# the example config, with dpkg-deb only (no network, no debhelper). Run via `make deb`.
#   packaging/build-deb.sh BIN OUTDIR
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
agent=$(cd "$here/.." && pwd)
bin=$(realpath "$1"); mkdir -p "$2"; out=$(realpath "$2")
version=$(sed -n 's/^#define AG_VERSION "\(.*\)"/\1/p' "$agent/src/agent/config.h")
arch=$(dpkg --print-architecture)
stage="$out/deb/hitcurve-agent_${version}_${arch}"
rm -rf "$stage"
install -d "$stage/DEBIAN"
install -D -m 0755 "$bin" "$stage/usr/bin/hitcurve-agent"
strip --strip-unneeded "$stage/usr/bin/hitcurve-agent"
# The unit as shipped in systemd/, with the Debian paths.
install -d "$stage/lib/systemd/system"
sed -e 's#/usr/local/bin/hitcurve-agent#/usr/bin/hitcurve-agent#' \
    -e 's#file:///usr/local/share/doc/hitcurve/agent-protocol.md#file:///usr/share/doc/hitcurve-agent/README.md#' \
    -e '/^# Install:/,/systemctl daemon-reload/d' \
    "$agent/systemd/hitcurve-agent.service" > "$stage/lib/systemd/system/hitcurve-agent.service"
install -D -m 0640 "$agent/systemd/agent.conf.example" "$stage/etc/hitcurve/agent.conf"
install -D -m 0644 "$agent/README.md" "$stage/usr/share/doc/hitcurve-agent/README.md"
install -m 0644 "$agent/systemd/README.md" "$stage/usr/share/doc/hitcurve-agent/systemd.md"
install -m 0644 "$here/debian/conffiles" "$stage/DEBIAN/"
install -m 0755 "$here/debian/postinst" "$here/debian/prerm" "$here/debian/postrm" "$stage/DEBIAN/"
# Library dependencies from the binary's own DT_NEEDED entries (dpkg-shlibdeps reads the
# installed packages' shlibs/symbols files; it wants a debian/control in its working dir).
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
mkdir -p "$work/debian"
printf 'Source: hitcurve-agent\n\nPackage: hitcurve-agent\nArchitecture: any\n' > "$work/debian/control"
depends=$(cd "$work" && dpkg-shlibdeps -O "$stage/usr/bin/hitcurve-agent" 2>/dev/null \
          | sed -n 's/^shlibs:Depends=//p')
[ -n "$depends" ] || { echo "build-deb: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$stage" | cut -f1)
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@DEPENDS@/$depends/" \
    "$here/debian/control.in" > "$stage/DEBIAN/control"
echo "Installed-Size: $size" >> "$stage/DEBIAN/control"
dpkg-deb --root-owner-group -Zxz --build "$stage" "$out/hitcurve-agent_${version}_${arch}.deb" >/dev/null
echo "$out/hitcurve-agent_${version}_${arch}.deb"
