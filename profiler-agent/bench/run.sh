#!/usr/bin/env bash
# make bench: accuracy (vs exact Mattson LRU), speed and memory tables. Bounded to a few
# minutes on 2 cores; `make bench BENCH_ARGS=--quick` skips arc-P3 and shortens synthetic runs.
set -euo pipefail
B="$1"; BIN="$2"; shift 2
QUICK=""
[[ "${1:-}" == "--quick" ]] && QUICK="--quick"
TR="${HITCURVE_TRACES_DIR:-../../shared/traces}"
echo "== accuracy, defaults (no sampling)"
"$B/accuracy" $QUICK
echo
echo "== accuracy, fixed-size sampling 16384 tracked keys"
"$B/accuracy" $QUICK --sample-keys 16384
echo
echo "== accuracy, MIMIR aging and rotation (tail-pair aging, flush-oldest ghost, B=128, F=3; found-key removal and FP subtraction kept) for comparison"
"$B/accuracy" $QUICK --mimir --filters 3
echo
echo "== estimators: ROUNDER vs STACKER (--estimator), accuracy, GETs/s and bytes per key side by side, MIMIR's figures beside"
"$B/estimators" $QUICK
echo
echo "== estimators under fixed-size sampling, 16384 tracked keys (the live agent samples)"
"$B/estimators" $QUICK --sample-keys 16384 | sed '/^# at MIMIR/,$d'
echo
echo "== accuracy vs B (defaults otherwise, quick set)"
printf "%-6s %11s %11s\n" B "MAE[0,N]" "MAE[N,2N]"
for b in 8 32 128 512; do
  "$B/accuracy" --quick --buckets "$b" | awk -v b="$b" '/^mean\(all\)/{printf "%-6s %11s %11s\n", b, $2, $3}'
done
echo
echo "== lost events (offline: exact-LRU HIT/MISS/SET/EVICT stream, p of EVICTs or of all events dropped)"
if [[ -n "$QUICK" ]]; then "$B/loss" --requests 1000000 --p 0,0.05,0.10; else "$B/loss"; fi
echo
echo "== speed (median of 3 runs is yours to take: the machine is shared)"
for i in 1 2 3; do "$B/speed" --requests 3000000 | sed -n '3,4p'; done
"$B/speed" --requests 3000000
echo
echo "== breakdown cost: events/s of the core with and without TTL curves, prefixes, hot keys"
"$B/breakdown" --requests 3000000
echo
echo "== hot path, defaults (best/median of 5 on thread CPU time; instructions/event is the stable figure)"
"$B/hotpath" --repeat 5
"$B/hotpath" --repeat 5 --ghost-factor 1
if command -v valgrind >/dev/null; then bash bench/icount.sh; bash bench/icount.sh --ghost-factor 1; fi
echo
echo "== end-to-end replay of arc-OLTP (read zstd, parse, hash, profile, JSON)"
for n in 1000 5000 15000; do
  /usr/bin/time -f "N=$n wall %e s, max RSS %M KiB" "$BIN" replay --format arc --cache-size "$n" "$TR/arc-OLTP.lis.zst" \
    | python3 -c 'import json,sys; o=json.load(sys.stdin); print("  hit_ratio_at_current %.4f, points %d, profile %.3f s, requests %d" % (o["hit_ratio_at_current"], len(o["points"]), o["profile"]["elapsed_s"], o["requests"]))'
done
echo "reference: exact LRU 0.3283 / 0.5365 / 0.6463 at 1K / 5K / 15K (traces/README.md)"
echo
echo "== memory"
"$B/memory"
