"""The pool-split model (hitcurve/breakdown/poolsplit.py) against exact byte-weighted LRU on a seeded trace
of two prefixes with the same read share and popularity and items of 200 and 4000 bytes: every
curve here is computed exactly (stack distances in bytes), so the rest's curve the model derives
from the merged curve minus P's can be compared with the rest's own exact curve, and the split's
prediction with the exact split. No database."""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from hitcurve.breakdown.poolsplit import GRID, calibrate, pooled_prefix_curve, rest_curve, split
from hitcurve_testing.workloads import stack_distances, zipf_ranks

N = 60_000
SIZES = {"s": 200, "b": 4000}
KEYS = {"s": 3000, "b": 300}


def _trace() -> list[tuple[str, int]]:
    rng = np.random.default_rng(5)
    which = rng.random(N) < 0.5
    rs = zipf_ranks(KEYS["s"], N, 0.9, seed=6)
    rb = zipf_ranks(KEYS["b"], N, 0.9, seed=7)
    return [("s", int(rs[i])) if which[i] else ("b", int(rb[i])) for i in range(N)]


def _distances(trace: list[tuple[str, int]], keep: str | None) -> np.ndarray:
    """Byte stack distance of each read (inf for a first read), over the reads of `keep` alone
    (None: all)."""
    reqs = [t for t in trace if keep is None or t[0] == keep]
    return np.asarray(stack_distances(reqs, [SIZES[k[0]] for k in reqs]))


def _curve(d: np.ndarray, sizes: np.ndarray) -> list[list[float]]:
    d = np.sort(d[N // 10 :] if len(d) == N else d[len(d) // 10 :])
    return [[float(x), float(np.searchsorted(d, x, side="right") / len(d))] for x in sizes]


def _pool_occupancy(trace: list[tuple[str, int]], cap: int) -> tuple[float, dict[str, float]]:
    """Exact LRU of cap bytes: the time-averaged share of bytes `s` holds, and hit ratios."""
    lru: OrderedDict[tuple[str, int], int] = OrderedDict()
    used = {"s": 0, "b": 0}
    occ = 0.0
    hits = {"s": 0, "b": 0}
    reads = {"s": 0, "b": 0}
    for i, key in enumerate(trace):
        w = SIZES[key[0]]
        hit = key in lru
        if hit:
            lru.move_to_end(key)
        else:
            lru[key] = w
            used[key[0]] += w
            while used["s"] + used["b"] > cap:
                k, v = lru.popitem(last=False)
                used[k[0]] -= v
        if i >= N // 10:
            hits[key[0]] += hit
            reads[key[0]] += 1
            occ += used["s"] / (used["s"] + used["b"])
    return occ / (N - N // 10), {k: hits[k] / reads[k] for k in hits}


@pytest.fixture(scope="module")
def exact() -> dict:
    trace = _trace()
    ws = sum(KEYS[k] * SIZES[k] for k in KEYS)
    sizes = np.linspace(ws * 1.5 / 100, ws * 1.5, 100)
    m0 = ws / 3
    occ, hit = _pool_occupancy(trace, int(m0))
    share = sum(1 for t in trace[N // 10 :] if t[0] == "s") / (N - N // 10)
    return {
        "merged": _curve(_distances(trace, None), sizes),
        "s": _curve(_distances(trace, "s"), sizes),
        "b": _curve(_distances(trace, "b"), sizes),
        "m0": m0,
        "occ": occ,
        "hit": hit,
        "share": share,
    }


def _at(points: list[list[float]], x: float) -> float:
    return float(np.interp(x, [0.0] + [p[0] for p in points], [0.0] + [p[1] for p in points]))


@pytest.mark.parametrize("p, q", [("s", "b"), ("b", "s")])
def test_rest_curve_is_the_rest_alone(exact: dict, p: str, q: str) -> None:
    """The merged curve minus P's, at the natural partition fitted to P's occupancy in the exact
    pool, against the rest's own exact curve, over the sizes a split of today's memory uses."""
    share = exact["share"] if p == "s" else 1 - exact["share"]
    occ = exact["occ"] if p == "s" else 1 - exact["occ"]
    rc = rest_curve(exact["merged"], exact[p], share, occ, exact["m0"])
    got = list(zip(rc.sizes[1:], rc.hit_ratio[1:], strict=True))
    ys = np.linspace(0.1, 1.0, 10) * exact["m0"]
    errs = {round(y / exact["m0"], 1): _at(got, y) - _at(exact[q], y) for y in ys}
    # from half of today's memory on the derived curve is the rest's own within 2.5 pp (measured:
    # +2.2 at half, at most 0.8 above); below it the partition law (Che's approximation) gives a
    # small pool too many hits when it holds few large items: up to +10.7 pp at 0.1-0.4 of today's
    # memory (the API says so in rest_hit_ratio's description)
    assert all(abs(v) < 0.025 for y, v in errs.items() if y >= 0.5), errs
    assert all(-0.02 < v < 0.11 for v in errs.values()), errs
    # P's own curve at its occupancy is P's hit ratio in the pool (the API's `check`)
    assert abs(_at(exact[p], occ * exact["m0"]) - exact["hit"][p]) < 0.02


def test_split_predicts_the_exact_split_and_finds_the_best(exact: dict) -> None:
    s = exact["share"]
    sp = split(exact["merged"], exact["s"], s, exact["occ"], exact["m0"], exact["m0"])
    assert len(sp.points) == GRID
    truth = [s * _at(exact["s"], q.prefix_bytes) + (1 - s) * _at(exact["b"], q.rest_bytes) for q in sp.points]
    errs = [abs(q.hit_ratio - t) for q, t in zip(sp.points, truth, strict=True)]
    # the rest's pool from half of today's memory: within 1.5 pp (see the test above for below)
    inner = [e for q, e in zip(sp.points, errs, strict=True) if q.rest_bytes >= exact["m0"] / 2]
    assert max(inner) < 0.015, max(inner)
    # today's proportions give back the pooled hit ratio (the model's consistency, by its
    # construction) and the pooled curve is the exact pool's hit ratio
    assert abs(sp.today.hit_ratio - sp.pooled_hit_ratio) < 0.005
    pooled = s * exact["hit"]["s"] + (1 - s) * exact["hit"]["b"]
    assert abs(sp.pooled_hit_ratio - pooled) < 0.02
    # sizes differ: the split the model calls best beats the pool in truth (arXiv 1708.01673) and
    # is within 1.5 pp of the truly best split (its own figure runs high: the small rest pool)
    at_best = truth[sp.points.index(sp.best)]
    assert at_best > pooled + 0.05
    assert max(truth) - at_best < 0.015, (max(truth), at_best)


def test_calibration_scales_sizes_and_keeps_the_plateau() -> None:
    curve = [[float(i), min(1.0, i / 50) * 0.8] for i in range(1, 101)]
    cal, a = calibrate(curve, 20.0, 0.4)  # the curve gives 0.32 at 20: memcached did better
    assert abs(a - 1.25) < 1e-6 and abs(_at(cal, 20.0) - 0.4) < 1e-6
    assert cal[-1][1] == 0.8  # the plateau (cold misses) is not scaled
    same, a = calibrate(curve, 20.0, None)
    assert a == 1.0 and same == curve
    same, a = calibrate(curve, 20.0, 0.95)  # beyond the curve: nothing to calibrate on
    assert a == 1.0


@pytest.mark.parametrize("p", ["s", "b"])
def test_a_prefixs_hit_ratio_inside_the_pool_as_it_grows(exact: dict, p: str) -> None:
    """P's hit ratio in the shared pool at other sizes than today's (the miss cost per prefix,
    hitcurve/cost/prefixes.py): the march's x(M) fitted at today's memory only, against P's hit
    ratio in an exact LRU pool of each size."""
    share = exact["share"] if p == "s" else 1 - exact["share"]
    occ = exact["occ"] if p == "s" else 1 - exact["occ"]
    sizes, hit = pooled_prefix_curve(exact["merged"], exact[p], share, occ, exact["m0"])
    trace = _trace()
    errs = {}
    for f in (0.25, 0.5, 1.0, 2.0, 3.0):
        _, truth = _pool_occupancy(trace, int(f * exact["m0"]))
        errs[f] = float(np.interp(f * exact["m0"], sizes, hit)) - truth[p]
    # measured: b (the large items) within 0.16 pp at every size; s within 0.62 pp from today's
    # memory up, -3.5 pp at half of it and -10.4 at a quarter: the partition law's known limit in a
    # small pool (the module docstring's 10.7 pp), here the small items' part given too few hits
    assert all(abs(v) < 0.01 for f, v in errs.items() if f >= 1.0), errs
    assert abs(errs[0.5]) < (0.04 if p == "s" else 0.01), errs
    assert abs(errs[0.25]) < (0.11 if p == "s" else 0.01), errs
