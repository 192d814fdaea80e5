"""TTL what-if: "if prefix P's TTL were X, what hit rate, and how much memory for
today's hit rate".

Inputs, all from one agent window (profiler-agent/src/core/ttlwhatif.h): for P, its sampled
reads and stores replayed against unbounded caches whose items live X seconds, one per TTL of the
agent's grid, plus one whose items live the TTL each store carried ("today"). Per column the
replay gives the hit ratio TTL allows, v(X), and the mean bytes of P's live items, L(X) (the
memory P needs to lose nothing to eviction). The replay follows cache-aside clients: a miss is
refilled, so a shorter TTL also brings the refill earlier (a histogram of ages at hits cut at X
would read a hot key at half its hit ratio). Beside it: P's own TTL-aware byte curve h_P(M)
(`prefixes[].points`, P's sampled requests alone in an LRU pool of M bytes, at today's TTLs),
P's measured hit ratio h0, the bytes it holds today x0, its share s of the reads and the server's
measured hit ratio H.

Sample bias: the replay runs on a hash sample of keys (8192), and on Zipf traffic a hot key in
or out of the sample moves every column (bench_ttlwhatif at rate 0.5: +2.9 pp at today's TTL).
The agent also sends memcached's own hit ratio on the same sampled reads; the columns are scaled
by P's measured hit ratio over it (a ratio estimator: the ratios r and l below do not change).

Approximation (stated in every answer): at TTL X, P's curve is today's with its sizes stretched
by the live-bytes ratio l = L(X) / L(today) and its hit ratios scaled by r = v(X) / v(today):

    h_X(M) = c * r * h_P(M / l),    c = h0 / h_P(x0)  (the curve calibrated on P's measured hit
                                                       ratio at the memory it holds today)

Exact at both ends: with memory for every live item it gives v(X) (times c), and r and l come
from the same replay. In between it assumes expiry thins P's reuses evenly across reuse
distances. Measured (bench_ttlwhatif, P alone, TTL 3 s today): in a memcached that evicts (-m 4)
h' is +5.1 / +3.1 pp off at 1 s / 2 s and -1.7 / -3.3 pp at 6 s / 12 s; in one that had room
(-m 3, 100 B items) +0.9 / +1.5 and -9.7 / -19.4 pp. A longer TTL adds live items that are read
seldom, and LRU evicts those first (or fills free memory with them) instead of spreading the
loss evenly, so when X allows more hits than today (r > 1) h' is a lower bound and Y an upper
bound (`bound` in the answer); below today's TTL h' runs a few pp high.

Answers:
- P's hit ratio at TTL X in the memory it holds today, h' = h_X(x0), and the server's
  H' = H + s (h' - h0) (every other prefix unchanged in its memory);
- the memory P needs at TTL X for its hit ratio of today, Y = l * h_P^-1(h_P(x0) / r), or none
  when TTL X caps P below today's hit ratio (r * max h_P < h_P(x0));
- with no memory limit: v(X) and L(X), the replay's own figures.
Verified against real memcached re-run at the new TTL: profiler-agent/loadgen/bench_ttlwhatif.py
(profiler-agent/README.md, "TTL what-if").
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hitcurve.rules.curves import linear_hit_at, memory_for

MODEL = (
    "the prefix's reads and stores replayed at TTL X with unbounded memory (cache-aside: a miss is refilled) "
    "give the hit ratio TTL X allows and the bytes of its live items; its TTL-aware byte curve of today is "
    "stretched in size by the live-bytes ratio and scaled in hit ratio by the allowed-hit-ratio ratio, "
    "calibrated on its measured hit ratio at the memory it holds today (hitcurve/breakdown/ttlwhatif.py). "
    "Other prefixes keep their memory and hit ratio. Verified on real memcached: profiler-agent/README.md, "
    "'TTL what-if'"
)


def at_ttl(grid: Sequence[float], values: Sequence[float], ttl: float) -> float:
    """A column's value at a TTL of the grid, or linear in log TTL between two (the grid is
    log-spaced); ttl must lie within the grid."""
    if not grid[0] <= ttl <= grid[-1]:
        raise ValueError(f"ttl {ttl} outside the grid [{grid[0]}, {grid[-1]}]")
    for i in range(len(grid)):
        if grid[i] == ttl:
            return float(values[i])
        if grid[i] > ttl:
            a, b = math.log(grid[i - 1]), math.log(grid[i])
            f = (math.log(ttl) - a) / (b - a)
            return float(values[i - 1]) + f * (float(values[i]) - float(values[i - 1]))
    return float(values[-1])


@dataclass(frozen=True)
class TtlPoint:
    ttl_s: float
    allowed_hit_ratio: float  # v(X): no memory limit
    live_bytes: float  # L(X)


@dataclass(frozen=True)
class WhatIf:
    ttl_s: float
    allowed_today: float  # v(today)
    allowed: float  # v(X)
    live_bytes_today: float  # L(today)
    live_bytes: float  # L(X)
    hit_ratio_scale: float  # r
    size_scale: float  # l
    calibration: float  # c
    sample_correction: float  # the columns' scale: measured / sampled_measured
    prefix_hit_ratio: float  # h' at the memory P holds today
    server_hit_ratio: float | None  # H'
    memory_for_today_hit_ratio: float | None  # Y (None: unreachable at TTL X)
    bound: bool  # r > 1: h' is a lower bound and Y an upper bound (see the module's docstring)
    server_hit_ratio_unbounded: float | None  # H + s (v(X) - h0): P with memory for every live item
    grid: list[TtlPoint]


def what_if(
    grid: Sequence[float],
    allowed: Sequence[float],
    live_byte_s: Sequence[float],
    window_s: float,
    points: Sequence[Sequence[float]],
    measured: float,
    held_bytes: float,
    share: float,
    server_measured: float | None,
    ttl_s: float,
    sampled_measured: float | None = None,
) -> WhatIf:
    """The answer for TTL ttl_s (within the grid). allowed / live_byte_s: the agent's columns
    (column 0 today's TTLs, then one per grid TTL); points: P's TTL-aware byte curve of today;
    measured, held_bytes, share: P's measured hit ratio, resident bytes and share of reads;
    sampled_measured: memcached's hit ratio on the replay's sampled reads (the sample's bias)."""
    k = measured / sampled_measured if sampled_measured else 1.0
    allowed = [min(1.0, k * float(a)) for a in allowed]
    v0, L0 = float(allowed[0]), float(live_byte_s[0]) / window_s
    vx = at_ttl(grid, allowed[1:], ttl_s)
    lx = at_ttl(grid, live_byte_s[1:], ttl_s) / window_s
    r = vx / v0 if v0 > 0 else 1.0
    size_scale = lx / L0 if L0 > 0 else 1.0
    at_x0 = linear_hit_at(points, held_bytes) if points else 0.0
    c = measured / at_x0 if at_x0 > 0 else 1.0
    if points and size_scale > 0:
        h_new = min(1.0, c * r * linear_hit_at(points, held_bytes / size_scale))
    else:  # no curve (the agent did not know memcached's limit yet): TTL alone
        h_new = min(1.0, measured * r)

    def server_with(h: float) -> float | None:
        if server_measured is None:
            return None
        return min(1.0, max(0.0, server_measured + share * (h - measured)))

    need: float | None = None
    if measured <= 0:
        need = 0.0
    elif points and r > 0:
        m = memory_for(points, at_x0 / r)
        need = None if m is None else m * size_scale
    return WhatIf(
        ttl_s=ttl_s,
        allowed_today=v0,
        allowed=vx,
        live_bytes_today=L0,
        live_bytes=lx,
        hit_ratio_scale=r,
        size_scale=size_scale,
        calibration=c,
        sample_correction=k,
        prefix_hit_ratio=h_new,
        server_hit_ratio=server_with(h_new),
        memory_for_today_hit_ratio=need,
        bound=r > 1.0,
        server_hit_ratio_unbounded=server_with(vx),
        grid=[
            TtlPoint(float(t), float(a), float(b) / window_s)
            for t, a, b in zip(grid, allowed[1:], live_byte_s[1:], strict=True)
        ],
    )
