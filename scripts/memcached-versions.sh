#!/usr/bin/env bash
# Build every memcached source tarball of the version matrix once and cache the binaries:
#   .run/memcached/<version>/memcached      (plus .stamp: the tarball's hash and the recipe)
# A second run rebuilds nothing (the stamp matches). Prints "<version> <binary>" per line,
# Debian's own 1.6.18 (/usr/bin/memcached) included, sorted by version.
#   scripts/memcached-versions.sh [--list]      --list: print only what is already built
# Sources: HITCURVE_MEMCACHED_SRC (default ../shared/memcached, see its README).
# The trees are git snapshots, not release tarballs: they need autotools (autoconf, automake,
# libevent-dev in scripts/debian-packages.txt) and know no version of their own, so the version
# is written into config.h (else `stats` says UNKNOWN and the agent cannot use it as a signal).
set -euo pipefail
source "$(dirname "$0")/lib.sh"

SRC="${HITCURVE_MEMCACHED_SRC:-$ROOT/../shared/memcached}"
OUT="$RUN_DIR/memcached"
RECIPE=3   # bump when the build steps below change: every cached binary is rebuilt
list_only=0; [ "${1:-}" = "--list" ] && list_only=1
mkdir -p "$OUT"

build_one() {  # build_one TARBALL VERSION
    local tgz="$1" ver="$2" dest="$OUT/$2" stamp
    stamp="recipe=$RECIPE sha=$(sha256sum "$tgz" | cut -c1-16)"
    if [ -x "$dest/memcached" ] && [ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ]; then
        return 0
    fi
    [ $list_only -eq 1 ] && return 0
    say "building memcached $ver (once; cached in ${dest#"$ROOT"/})"
    local work; work=$(mktemp -d "$OUT/build-$ver.XXXX")
    (
        cd "$work"
        tar -xzf "$tgz"
        cd "memcached-$ver"
        ./autogen.sh >build.log 2>&1
        ./configure >>build.log 2>&1
        sed -i "s/\"UNKNOWN\"/\"$ver\"/" config.h
        # 1.5.x: GCC 12 rejects its -Werror build (sigignore deprecated, `hash` defined in
        # several objects); the memcached README's flags build it.
        case "$ver" in
            1.5.*) make -j2 CFLAGS="-g -O2 -pthread -fcommon -Wall -pedantic" memcached >>build.log 2>&1 ;;
            *)     make -j2 memcached >>build.log 2>&1 ;;
        esac
    ) || { tail -n 30 "$work/memcached-$ver/build.log" >&2 || true; rm -rf "$work"; die "memcached $ver did not build"; }
    mkdir -p "$dest"
    install -m 0755 "$work/memcached-$ver/memcached" "$dest/memcached.tmp"
    mv -f "$dest/memcached.tmp" "$dest/memcached"
    echo "$stamp" > "$dest/.stamp"
    rm -rf "$work"
}

# One builder at a time (pytest and a shell may both ask).
exec 9>"$OUT/.lock"
flock 9
shopt -s nullglob
tarballs=("$SRC"/memcached-*.tar.gz)
[ ${#tarballs[@]} -gt 0 ] || [ $list_only -eq 1 ] || die "no memcached tarballs in $SRC"
{
    for tgz in "${tarballs[@]}"; do
        ver=$(basename "$tgz" .tar.gz); ver=${ver#memcached-}
        build_one "$tgz" "$ver"
        [ -x "$OUT/$ver/memcached" ] && echo "$ver $OUT/$ver/memcached"
    done
    deb=$(command -v memcached || true)
    if [ -n "$deb" ]; then
        v=$("$deb" -V 2>/dev/null | awk '{print $2}')
        [ -n "$v" ] && echo "$v $deb"
    fi
} | sort -V -u -k1,1
