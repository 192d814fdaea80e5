"""Pool-split what-if: "give prefix P its own pool of X bytes and the rest Y: what hit
rate, against today's pooled hit rate at the same total memory", and the best split.

Inputs, all from one agent window and all from the same estimator (the agent's SHARDS++ byte
curves, TTL-aware, over the same sizes): the merged curve H(M) (`ttl_points`), P's own curve
h_P(X) (`prefixes[].points`: P's sampled requests alone in an LRU pool of X bytes), P's share of
reads s and of resident bytes phi (measured and estimated in the pooled cache).

The rest (every other prefix, "other" included) has no curve of its own; it is the merged curve
minus P's at the pool's natural partition. A shared LRU behaves as if each part had its own pool
of the size it occupies (Che's approximation; footprint composition, Xiang et al., ASPLOS'13,
Brock et al., ICPP'15): in a pool of M bytes P holds x(M), the rest y(M) = M - x(M), and

    H(M) = s * h_P(x(M)) + (1 - s) * h_rest(y(M)).

The occupancy grows as each part inserts bytes, i.e. in proportion to its byte miss rate: with
the pool grown by dM, dx : dy = c_P (1 - h_P(x)) : c_rest (1 - h_rest(y)), where c is the part's
read bytes per unit time. Marching M from 0 gives x(M), y(M) and, by the equation above, the
rest's curve h_rest(y). One number is unknown, kappa = c_rest / c_P (mean item size times read
rate, not in the protocol); it is fitted so that P's occupancy at today's memory is the one the
agent measured (phi x M0). With kappa fitted, the split at today's memory in the measured
proportions gives back H(M0) by construction; the independent checks are P's own curve at its
measured occupancy against P's measured hit ratio (`check_pp`), and real memcached
(profiler-agent/loadgen/bench_split.py: two instances for the split, one for the pool).

Before the march the merged curve is calibrated in size through memcached's measured hit ratio
at today's memory (`calibrate`). Known limit (backend/tests/test_poolsplit.py, exact byte LRU):
from half of today's memory up the derived rest curve is the rest's own within 2.2 pp; below it,
when the rest is a few large items, Che's approximation gives it up to 10.7 pp too many hits.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

STEPS = 1000  # the march over the merged curve's range
KAPPA_ITERATIONS = 24  # bisection on log2 kappa in [-12, 12]: 2^-20 relative
GRID = 100  # splits X evaluated over (0, total)
MISS_FLOOR = 1e-3  # a part with ~no misses still grows (a curve at 1.0 would freeze it)


def _interp(points: Sequence[Sequence[float]]):
    xs = np.concatenate([[0.0], np.asarray([p[0] for p in points], dtype=float)])
    ys = np.concatenate([[0.0], np.asarray([p[1] for p in points], dtype=float)])
    return lambda x: np.interp(x, xs, ys)  # flat past the range's end


@dataclass(frozen=True)
class RestCurve:
    sizes: np.ndarray  # y, bytes
    hit_ratio: np.ndarray
    kappa: float
    occupancy_at_today: float  # x(M0)/M0 with the fitted kappa


def _lin(points: Sequence[Sequence[float]]):
    """The same line as _interp, for one size at a time (the march calls it 10^5 times)."""
    xs = [0.0] + [float(p[0]) for p in points]
    ys = [0.0] + [float(p[1]) for p in points]
    last = len(xs) - 1

    def f(x: float) -> float:
        i = bisect.bisect_left(xs, x)
        if i > last:
            return ys[last]
        if i == 0:
            return ys[0]
        return ys[i - 1] + (ys[i] - ys[i - 1]) * (x - xs[i - 1]) / (xs[i] - xs[i - 1])

    return f


def _march(Hm: list[float], hP, s: float, kappa: float, dm: float) -> tuple[list, list, list]:
    """Grow the pool by dm per step (Hm: the merged curve at each step's size); each part takes
    its share of dm in proportion to its byte miss rate. Returns x, y and h_rest per step."""
    xs, ys, hr = [0.0], [0.0], [0.0]
    x = y = h_rest = 0.0
    for i in range(1, len(Hm)):
        a = max(1.0 - hP(x), MISS_FLOOR)
        b = kappa * max(1.0 - h_rest, MISS_FLOOR)
        x += dm * a / (a + b)
        y += dm * b / (a + b)
        h_rest = min(max((Hm[i] - s * hP(x)) / (1.0 - s), 0.0), 1.0)
        xs.append(x)
        ys.append(y)
        hr.append(h_rest)
    return xs, ys, hr


def _fitted(
    merged: Sequence[Sequence[float]],
    prefix: Sequence[Sequence[float]],
    share: float,
    occupancy: float,
    today: float,
) -> tuple[float, float, float, tuple[list, list, list]]:
    """The march with kappa fitted so that P holds `occupancy` (its measured share of resident
    bytes) of a pool of `today` bytes: (kappa, the share it got, the step dm, the march)."""
    hP = _lin(prefix)
    m_max = float(merged[-1][0])
    dm = m_max / STEPS
    Hm = [float(v) for v in _interp(merged)(np.arange(STEPS + 1) * dm)]
    k = min(int(round(today / dm)), STEPS)
    occupancy = min(max(occupancy, 1e-4), 1 - 1e-4)

    def held(kappa: float) -> tuple[float, tuple[list, list, list]]:
        m = _march(Hm, hP, share, kappa, dm)
        return m[0][k] / max(m[0][k] + m[1][k], 1e-9), m

    lo, hi = -12.0, 12.0  # log2 kappa; more kappa -> the rest grows faster -> P holds less
    for _ in range(KAPPA_ITERATIONS):
        mid = (lo + hi) / 2
        if held(2.0**mid)[0] > occupancy:
            lo = mid
        else:
            hi = mid
    kappa = 2.0 ** ((lo + hi) / 2)
    got, m = held(kappa)
    return kappa, got, dm, m


def rest_curve(
    merged: Sequence[Sequence[float]],
    prefix: Sequence[Sequence[float]],
    share: float,
    occupancy: float,
    today: float,
) -> RestCurve:
    """The rest's curve alone: merged minus P at the natural partition, kappa fitted so that P
    holds `occupancy` (its measured share of resident bytes) of a pool of `today` bytes."""
    kappa, got, _, (_, ys, hr) = _fitted(merged, prefix, share, occupancy, today)
    # a curve is non-decreasing; the subtraction's noise is not
    return RestCurve(np.asarray(ys), np.maximum.accumulate(np.asarray(hr)), kappa, got)


def pooled_prefix_curve(
    merged: Sequence[Sequence[float]],
    prefix: Sequence[Sequence[float]],
    share: float,
    occupancy: float,
    today: float,
    measured_hit_ratio: float | None = None,
) -> tuple[list[float], list[float]]:
    """P's hit ratio inside the shared pool as the pool grows: at pool size M, P's own curve at
    the bytes x(M) it holds there (the march above, kappa fitted to its measured occupancy; the
    merged curve calibrated as for a split). Returns sizes M (from 0) and P's hit ratios; a
    read-weighted sum over every part gives the merged curve back. For a miss cost per prefix
    (hitcurve.cost.prefixes): which part's misses a byte of the pool saves."""
    merged, _ = calibrate(merged, today, measured_hit_ratio)
    _, _, dm, (xs, _, _) = _fitted(merged, prefix, share, occupancy, today)
    hP = _lin(prefix)
    sizes = [i * dm for i in range(len(xs))]
    return sizes, [float(v) for v in np.maximum.accumulate(np.asarray([hP(x) for x in xs]))]


@dataclass(frozen=True)
class SplitPoint:
    prefix_bytes: float
    rest_bytes: float
    hit_ratio: float
    prefix_hit_ratio: float
    rest_hit_ratio: float


@dataclass(frozen=True)
class Split:
    total: float
    pooled_hit_ratio: float  # the merged curve at `total`
    today: SplitPoint  # `total` split in today's measured proportions
    best: SplitPoint
    chosen: SplitPoint | None
    points: list[SplitPoint]  # over X in (0, total)
    rest_range_end: float  # the rest's curve is known up to here; past it, "at least"
    kappa: float
    scale: float  # the merged curve's calibration (sizes x scale)
    check_pp: float | None  # P's curve at its measured occupancy minus its measured hit ratio


def calibrate(merged: Sequence[Sequence[float]], today: float, measured: float | None) -> tuple[list, float]:
    """The merged curve scaled in size so it passes through memcached's measured hit ratio at
    today's memory: H_cal(M) = H(a M). memcached is not one global LRU (slab classes each with a
    segmented LRU, pages moved by the automover); on bench_split's two-prefix workload it kept
    4-5 pp more hits than the LRU estimate at M, as an LRU of 1.18-1.20 M would, while each
    prefix's own curve matched its own measured hit ratio within 0.6 pp. Scaling sizes (not hit
    ratios) keeps the curve's plateau, which is the cold misses and does not depend on the
    policy. Returns the curve and a (1 when there is nothing to calibrate on)."""
    if measured is None or not merged:
        return [list(p) for p in merged], 1.0
    H = _lin(merged)
    lo, hi = 1e-3, float(merged[-1][0]) / today
    if H(lo * today) >= measured or H(hi * today) < measured:
        return [list(p) for p in merged], 1.0  # out of the curve's reach: left as measured
    for _ in range(50):
        mid = (lo + hi) / 2
        if H(mid * today) < measured:
            lo = mid
        else:
            hi = mid
    a = (lo + hi) / 2
    return [[float(x), H(float(x) * a)] for x, _ in merged], a


def split(
    merged: Sequence[Sequence[float]],
    prefix: Sequence[Sequence[float]],
    share: float,
    occupancy: float,
    today: float,
    total: float,
    chosen: float | None = None,
    measured_hit_ratio: float | None = None,
    measured_prefix_hit_ratio: float | None = None,
) -> Split:
    """Hit ratio of P alone in X plus the rest alone in total - X, read-weighted, for X over
    (0, total), with the best X, the measured proportions and an optional chosen X. The merged
    curve is first calibrated on memcached's measured hit ratio at today's memory. The rest must
    carry some reads: share < 1 (the caller refuses a prefix that is the whole server)."""
    if not 0.0 < share < 1.0:
        raise ValueError(f"share {share} is not in (0, 1): a split needs the prefix and some rest")
    merged, scale = calibrate(merged, today, measured_hit_ratio)
    rest = rest_curve(merged, prefix, share, occupancy, today)
    hP = _interp(prefix)
    hR = _interp(list(zip(rest.sizes[1:], rest.hit_ratio[1:], strict=True)))

    def at(x: float) -> SplitPoint:
        x = min(max(x, 0.0), total)
        p, r = float(hP(x)), float(hR(total - x))
        return SplitPoint(x, total - x, share * p + (1 - share) * r, p, r)

    pts = [at(total * (i + 0.5) / GRID) for i in range(GRID)]
    best = max(pts, key=lambda q: q.hit_ratio)
    check = None
    if measured_prefix_hit_ratio is not None:
        check = float(hP(occupancy * today)) - measured_prefix_hit_ratio
    return Split(
        total=total,
        pooled_hit_ratio=float(_interp(merged)(total)),
        today=at(occupancy * total),
        best=best,
        chosen=at(chosen) if chosen is not None else None,
        points=pts,
        rest_range_end=float(rest.sizes[-1]),
        kappa=rest.kappa,
        scale=scale,
        check_pp=None if check is None else 100 * check,
    )
