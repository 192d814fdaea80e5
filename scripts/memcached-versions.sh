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
# Binaries already built on this machine (by any checkout), by tarball hash and recipe: a fresh
# clone copies them instead of building again, as pip and npm reuse their caches.
CACHE="${XDG_CACHE_HOME:-$HOME/.cache}/hitcurve/memcached"
RECIPE=3   # bump when the build steps below change: every cached binary is rebuilt
list_only=0; [ "${1:-}" = "--list" ] && list_only=1
mkdir -p "$OUT"

build_one() {  # build_one TARBALL VERSION
    local tgz="$1" ver="$2" dest="$OUT/$2" stamp
    stamp="recipe=$RECIPE sha=$(sha256sum "$tgz" | cut -c1-16)"
    local key; key=$(echo "$stamp" | tr ' =' '__')
    if [ -x "$dest/memcached" ] && [ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ]; then
        [ $list_only -eq 1 ] || to_cache "$dest/memcached" "$CACHE/$ver-$key"
        return 0
    fi
    [ $list_only -eq 1 ] && return 0
    if [ -x "$CACHE/$ver-$key/memcached" ]; then
        mkdir -p "$dest"
        install -m 0755 "$CACHE/$ver-$key/memcached" "$dest/memcached.tmp"
        mv -f "$dest/memcached.tmp" "$dest/memcached"
        echo "$stamp" > "$dest/.stamp"
        return 0
    fi
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
    to_cache "$dest/memcached" "$CACHE/$ver-$key"
}

to_cache() {  # to_cache BINARY DIR: keep a copy for the next checkout, unless there is one
    [ ! -x "$2/memcached" ] || return 0
    mkdir -p "$2" 2>/dev/null && install -m 0755 "$1" "$2/memcached.tmp" && mv -f "$2/memcached.tmp" "$2/memcached" || true
}

# One builder at a time (pytest and a shell may both ask).
exec 9>"$OUT/.lock"
flock 9
shopt -s nullglob
# Release trees only: memcached-vendor-*.tar.gz is the proxy's Lua sources, not a version.
tarballs=("$SRC"/memcached-[0-9]*.tar.gz)
[ ${#tarballs[@]} -gt 0 ] || [ $list_only -eq 1 ] || die "no memcached tarballs in $SRC"
{
    for tgz in "${tarballs[@]}"; do
        ver=$(basename "$tgz" .tar.gz); ver=${ver#memcached-}
        # release trees only (memcached-vendor-*.tar.gz is the proxy's Lua tree, no server)
        [[ $ver =~ ^[0-9]+\.[0-9]+ ]] || continue
        build_one "$tgz" "$ver"
        [ -x "$OUT/$ver/memcached" ] && echo "$ver $OUT/$ver/memcached"
    done
    deb=$(command -v memcached || true)
    if [ -n "$deb" ]; then
        v=$("$deb" -V 2>/dev/null | awk '{print $2}')
        [ -n "$v" ] && echo "$v $deb"
    fi
} | sort -V -u -k1,1
