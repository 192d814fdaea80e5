"""When a server's traffic "carries TTLs", the one definition.

The agent runs one estimator (SHARDS, core/sdcurve) twice over the same sampled keys: with expiry
modelled (`ttl_points`, SHARDS++ as in "TTLs Matter", EuroSys'24: an item leaves at its TTL) and
with expiry ignored (`ttl.oblivious_points`). The two differ only by expiry, so the window's
traffic carries TTLs -- and its sizing answer rests on the agent's merged TTL-aware curve --
when they differ by at least TTL_CURVE_GAP_PP at some size. Below that, expiry does not change
the curve by more than the curves' own error (about 1-2 pp) and the answer stays on the LRU
class curves (which carry the slab-class page model and memcached's own hits and misses).

Why the merged curve and not the classes' TTL-aware curves: measured on
profiler-agent/loadgen/bench_ttl.py, the agent's merged TTL-aware curve was within 0.3 pp of
memcached at M/2, M and 2M, while the worker's proportional join of the classes' TTL-aware curves
was 5.8-8.9 pp off: agents before the fix of 2026-11-25 left out of the class curves the misses
they could not attribute to a class when they happened (a key not seen stored yet: the class is
only known at the following set), so those curves ran high (profiler-agent/README.md). The
merged curve reads every miss, from any agent.
"""

from __future__ import annotations

from collections.abc import Sequence

# Largest difference (pp) between the TTL-oblivious and the TTL-aware curve at which expiry is
# taken not to matter for sizing.
TTL_CURVE_GAP_PP = 1.0


def curve_gap_pp(aware: Sequence[Sequence[float]], oblivious: Sequence[Sequence[float]]) -> float:
    """Largest |oblivious - aware| hit ratio (pp) over the aware curve's sizes (the oblivious one
    read there linearly; the agent sends both over the same sizes)."""
    if not aware or not oblivious:
        return 0.0
    xs = [float(p[0]) for p in oblivious]
    ys = [float(p[1]) for p in oblivious]
    gap = 0.0
    j = 0
    for x, y in aware:
        while j < len(xs) and xs[j] < x:
            j += 1
        if j < len(xs) and xs[j] == x:
            o = ys[j]
        elif j == 0:
            o = ys[0] * float(x) / xs[0] if xs[0] > 0 else ys[0]
        elif j >= len(xs):
            o = ys[-1]
        else:
            o = ys[j - 1] + (ys[j] - ys[j - 1]) * (float(x) - xs[j - 1]) / (xs[j] - xs[j - 1])
        gap = max(gap, abs(o - float(y)))
    return 100.0 * gap


def carries_ttls(
    aware: Sequence[Sequence[float]] | None, oblivious: Sequence[Sequence[float]] | None
) -> bool:
    """The window's traffic carries TTLs: expiry moves the agent's curve by >= TTL_CURVE_GAP_PP."""
    if not aware or not oblivious:
        return False
    return curve_gap_pp(aware, oblivious) >= TTL_CURVE_GAP_PP
