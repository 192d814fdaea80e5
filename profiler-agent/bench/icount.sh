#!/usr/bin/env bash
# Instructions per event of the live update path (stable on a shared machine, unlike events/s):
# builds bench/hotpath without -march=native (valgrind lacks AVX-512) and counts the
# instructions of feed() under callgrind. usage: bench/icount.sh [hotpath args...]
# (run from profiler-agent/ after `make build/bench/hotpath`; core objects come from build/)
set -euo pipefail
OUT=build/bench/hotpath-generic
CORE=$(ls build/src/core/*.o); REF=$(ls build/ref/*.o); TR=$(ls build/up/tracereader/src/*.o)
gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -O2 -g -I../tracereader/include -Isrc \
    -o "$OUT" bench/hotpath.c $CORE $REF $TR -ljansson -lcurl -lz -lzstd -llzma -lxxhash -lpthread -lm
CG=$(mktemp /tmp/hc-icount.XXXXXX)
EV=$(valgrind --tool=callgrind --callgrind-out-file="$CG" --toggle-collect=feed "$OUT" --repeat 1 "$@" 2>"$CG.err" \
     | sed -n 's/.*; \([0-9]*\) events.*/\1/p')
IR=$(sed -n 's/^==[0-9]*== Collected : \([0-9]*\)/\1/p' "$CG.err")
echo "instructions in feed(): $IR, events: $EV, instructions/event: $(awk -v a="$IR" -v b="$EV" 'BEGIN{printf "%.1f", a/b}')"
if [[ -n "${ICOUNT_ANNOTATE:-}" ]]; then callgrind_annotate "$CG" | sed -n '1,60p' | grep -v '^$'; fi
rm -f "$CG" "$CG.err"
