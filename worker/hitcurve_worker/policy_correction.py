"""Policy correction: how much memcached's segmented LRU gains over plain LRU below today's memory,
and over the agent's ghost view above it, measured on the server's own sampled trace (pure
functions; the task lives in correction_tasks.py).

The agent's per-class curves are LRU stack-distance curves below today's size N (ROUNDER on the
resident items), and memcached's real hit ratio at N (resident hits are real hits); above N the
ghost is fed with memcached's own evictions (the lift, below, is what that misses). memcached
1.5+ is a segmented HOT/WARM/COLD LRU (research_memcached_watch.md §5), which beats LRU below N on skewed
or scan-heavy traffic (live, Zipf 0.9: by about 2 pp at N/4 and N/2). The size-rescaling
calibration cannot supply that: the model already passes through the measured point.

So the worker replays the server's sampled trace (spatial key sampling at rate R; miniature
simulation: a cache of S items is simulated at S*R items) through `lru` and `mcslru` at a grid of
sizes and stores the gap g(x) = mcslru(x) - lru(x). It is applied to the merged model curve
below today's memory C, where that curve is LRU-like (above C: the lift, below):

    corrected(x) = model(x) + W(x) * g(x),   W(x) = sum_i r_i w_i(x) / sum_i r_i,
    w_i(x) = clip((1 - x/C) / delta_i, 0, 1)

w_i is 1 up to the class's last curve point below N_i (at N_i (1 - delta_i)) and falls to 0 at
N_i: between those two points the agent's curve is a linear interpolation from the LRU value to
memcached's real value, i.e. it already holds the part of the gap the taper removes. Adding g at
C itself would count it twice. r_i are the classes' read counts, the proportional join's weights.

Above C the agent's curve is not LRU: its ghost is fed with memcached's own evictions, so it
reads memcached at C plus the keys memcached at C evicted last, in eviction order. That is not
memcached at x > C either: memcached at 2C keeps a key read twice in WARM, while a ghost hit is
stored again at C as a new item, and the ghost's order is memcached-at-C's eviction order. On
the benchmark's full seeded traces the ghost view read memcached's policy 1.16 pp low
at 2C on the scan mix and 0.99 pp low on Zipf 0.9 (mcslru itself within 0.01 pp of real
memcached there), the live curve's 2M errors (-1.06, -0.75). So the same replay also simulates
the agent's view (the simulator's mcslru with `mcslru.base` = today's simulated items: memcached
at C plus a ghost of the rest) at sizes above C, and adds the lift

    corrected(x) += T(x) * (mcslru(x) - ghost_view(x)),   x > C,

0 at C (both are memcached at C there). T(x) is 1 up to LIFT_FULL x C and falls to 0 at LIFT_END x
C: far above C the sample's mcslru swings with which keys the scan loop locks into WARM (one of
four 5 % samples of the scan mix read +4.5 pp at 4C where the full trace says +0.55), and
beyond LIFT_END the ghost view is left as the agent measured it. The lift is read on the
correction's own axis relative to its reference memory (x / C), and only while today's memory is
within LIFT_REFERENCE of that reference (the ghost view is the one of memcached at that size).
The ghost view is stored with the correction (policy_corrections.hit_ratio_ghost_view); a row
stored before it has none and gets no lift.

Measured on the product path (bench/accuracy/bench_accuracy.py, fresh agent runs against real
memcached 1.6.18, the correction stored and read back as the task does; 2026-11-27, zipf 0.9 and
1.1 01:32-01:50 UTC, load 6.5 at the start and up to 50 during it, the scan mix 01:50-01:57, load
5.8 -> 2.7), pp, today's code without the lift on the same agent runs -> with it: recommended -m
check scan mix +0.75 -> -0.06, Zipf 0.9 +0.80 -> +0.24, Zipf 1.1 -0.30 -> -0.23; 2M -0.58 ->
+0.15, -0.76 -> -0.08, +0.33 -> +0.29; M/4 .. M and 4M within 0.03 pp; changes of the
recommended limit over 30 stationary windows 0 -> 1, 0 -> 1, 0 -> 0 (memcached at 2C keeps
gaining after the measured phase and the sampled lift follows it; profiler-agent/README.md,
"Accuracy against real memcached"). On a scan-mix run disturbed by load (12 of 33 windows
loss-flagged) the changes went 1 -> 2.

The simulation runs in items (mcslru in items mode is one class; memcached's automover keeps
eviction ages roughly equal across classes, so a server behaves much like one global cache):
a simulated size of k items stands for k / R items, i.e. k / R * (C / N) bytes with N today's items.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from hitcurve_worker.calibrate import curve_at
from hitcurve_worker.merge import ClassCurve
from hitcurve_worker.trace_data import Trace, sim_module

FloatArray = NDArray[np.float64]

BASE_POLICY = "lru"
POLICY = "mcslru"
GHOST_VIEW = "ghost_view"  # key of the agent's view in compute's results (not a simulator policy)
# Sizes simulated, as fractions of today's memory: the gap below 1, the lift (the agent's ghost
# view against memcached's policy) above 1.
FACTORS = (1 / 16, 1 / 8, 3 / 16, 1 / 4, 3 / 8, 1 / 2, 5 / 8, 3 / 4, 7 / 8, 15 / 16, 1.0,
           1.25, 1.5, 2.0, 2.5, 3.0)
# The lift above today's memory: whole up to LIFT_FULL x C, tapered to 0 at LIFT_END x C (module
# docstring), applied while today's memory is within LIFT_REFERENCE (relative) of the reference.
LIFT_FULL = 3.0
LIFT_END = 4.0
LIFT_REFERENCE = 0.1
# Bounded CPU: the most recent sampled requests only. At 2M requests lru + mcslru at the 16 sizes
# plus the ghost view at the 5 above today take 3.4-3.5 s of one core, against 2.1-2.5 s for the
# 14 sizes before the ghost view (/tmp run of 2026-11-27 01:43, load 21-24; recomputed at most once
# per RECOMPUTE_SHARE of new trace, correction_tasks.py).
MAX_SAMPLED_REQUESTS = 2_000_000
# Below this many sampled reads (after the warm-up) the gap is not trusted. On a Zipf 0.9 trace
# the RMS error of g over eight key samples was 0.3-0.8 pp with 8.5k sampled reads and 0.2-0.4 pp
# with 21k-52k (worker/README.md).
MIN_SAMPLED_GETS = 20_000
# The first part of the trace fills the (empty) simulated caches and is not counted. The gap
# grows while memcached's WARM segment builds up: on Zipf 0.9 it settles only after ~20 x
# today's (simulated) items of requests (g at N: 1.7 pp after 1x, 2.0 after 5x, 2.3 after 18x).
# So the warm-up is WARMUP_TURNOVERS x the simulated items at today's size, as a fraction of the
# trace within [WARMUP_MIN, WARMUP_MAX]: a short trace then measures the gap over the same
# history memcached itself has had.
WARMUP_TURNOVERS = 20.0
WARMUP_MIN = 0.1
WARMUP_MAX = 0.5
# Simulated caches smaller than this many items are left out of the grid (too coarse).
MIN_SIM_ITEMS = 32
# The sample-size adjustment needs snapshot windows covering this share of the trace, and a
# ratio in this range (outside it the sample or the counters are broken: left unadjusted).
ADJUST_COVERAGE = 0.9
ADJUST_RANGE = (0.5, 2.0)
# Never shift the curve by more than this (hit-ratio units): a larger gap means something else
# is wrong (e.g. a trace from another workload), and the calibration is the safer tool then.
MAX_GAP = 0.15


class InsufficientTrace(ValueError):
    """Too little sampled trace to trust the correction (the message says what is missing)."""


@dataclass
class Correction:
    sizes_bytes: FloatArray  # memory the simulated sizes stand for, increasing
    lru: FloatArray  # hit ratio of plain LRU at those sizes (the sample)
    policy: FloatArray  # hit ratio of memcached's segmented LRU (mcslru) at those sizes
    sampled_gets: int  # reads counted (after the warm-up)
    sampled_requests: int  # requests replayed (reads, sets, deletes)
    sample_rate: float
    reference_bytes: float  # today's memory (C) when computed
    reference_items: float  # today's items (N) when computed
    warmup: float = 0.0  # share of the replayed requests not counted
    sample_adjust: float | None = None  # sampled / expected reads (read_ratio), applied to both
    notes: list[str] = field(default_factory=list)
    # the agent's view (memcached at the reference size plus its eviction-fed ghost) at the same
    # sizes; equal to `policy` up to the reference (None: a correction stored before it existed)
    ghost_view: FloatArray | None = None

    @property
    def gap(self) -> FloatArray:
        return np.asarray(self.policy - self.lru, dtype=np.float64)

    def gap_at(self, x: FloatArray | float) -> FloatArray:
        """g(x): linear between the sizes, 0 at 0 memory, held flat past the last size."""
        g = np.clip(self.gap, -MAX_GAP, MAX_GAP)
        return curve_at(self.sizes_bytes, g, np.asarray(x, dtype=np.float64))

    def lift_at(self, x: FloatArray | float, current_bytes: float) -> FloatArray:
        """T(x) (mcslru - ghost view) at memory x above today's memory (module docstring); 0 at
        and below it, without a ghost view, or when today's memory is not the reference's."""
        x = np.asarray(x, dtype=np.float64)
        ref = self.reference_bytes
        if (
            self.ghost_view is None
            or ref <= 0
            or current_bytes <= 0
            or abs(current_bytes / ref - 1.0) > LIFT_REFERENCE
        ):
            return np.zeros_like(x)
        rel_sizes = self.sizes_bytes / ref
        above = rel_sizes > 1.0 + 1e-9
        if not np.any(above):
            return np.zeros_like(x)
        lift = np.clip(self.policy[above] - self.ghost_view[above], -MAX_GAP, MAX_GAP)
        rel = x / current_bytes
        d = np.interp(rel, np.concatenate(([1.0], rel_sizes[above])), np.concatenate(([0.0], lift)))
        taper = np.clip((LIFT_END - rel) / (LIFT_END - LIFT_FULL), 0.0, 1.0)
        return np.where(rel > 1.0, d * taper, 0.0)

    def summary(self) -> dict[str, Any]:
        return {
            "policy": POLICY,
            "sampled_gets": self.sampled_gets,
            "sampled_requests": self.sampled_requests,
            "sample_rate": self.sample_rate,
            "warmup": self.warmup,
            "sample_adjust": self.sample_adjust,
        }


def compute(
    trace: Trace,
    current_bytes: float,
    current_items: float,
    *,
    factors: Sequence[float] = FACTORS,
    max_requests: int = MAX_SAMPLED_REQUESTS,
    min_gets: int = MIN_SAMPLED_GETS,
    warmup: float | None = None,
    sample_adjust: float | None = None,
    threads: int = 1,
) -> Correction:
    """Simulate lru and mcslru on the (already sampled) trace at factors x today's memory.
    `sample_adjust`: sampled reads / expected sampled reads (read_ratio); both hit ratios then
    get SHARDS_adj, h' = 1 - (1 - h) * ratio, so the gap is scaled by it. Raises
    InsufficientTrace when there is too little to trust."""
    if current_bytes <= 0 or current_items <= 0:
        raise InsufficientTrace("the server holds no items yet: no size to simulate around")
    rate = float(trace.sample_rate)
    if not (0 < rate <= 1):
        raise InsufficientTrace(f"sample rate {rate} outside (0, 1]")
    notes = list(trace.notes)
    keys, ops = trace.keys, trace.ops
    if len(keys) > max_requests:
        notes.append(f"the most recent {max_requests} of {len(keys)} sampled requests used")
        keys, ops = keys[-max_requests:], ops[-max_requests:]
    hs = sim_module()
    if warmup is None:
        warmup = warmup_fraction(len(keys), current_items * rate)
    gets = int(np.count_nonzero(ops[int(warmup * len(ops)) :] == hs.GET))
    if gets < min_gets:
        raise InsufficientTrace(f"{gets} sampled reads after the warm-up, {min_gets} needed")
    sim_items = sorted({round(f * current_items * rate) for f in factors})
    sim_items = [k for k in sim_items if k >= MIN_SIM_ITEMS]
    if not sim_items:
        raise InsufficientTrace(
            f"the simulated caches would hold fewer than {MIN_SIM_ITEMS} items "
            f"({current_items:.0f} items x rate {rate:g})"
        )
    out = hs.simulate(
        np.ascontiguousarray(keys, dtype=np.uint64),
        [BASE_POLICY, POLICY],
        sim_items,
        ops=np.ascontiguousarray(ops, dtype=np.uint8).tobytes(),
        unit="items",
        warmup=warmup,
        threads=threads,
    )
    got = {(r["policy"], int(r["size"])): float(r["hit_ratio"]) for r in out}
    # the agent's view above today's size: mcslru at today's simulated items plus the ghost of its
    # evictions (simulator mcslru.base); at and below today's size it is mcslru itself
    base = round(current_items * rate)
    beyond = [k for k in sim_items if k > base]
    if beyond:
        seen = hs.simulate(
            np.ascontiguousarray(keys, dtype=np.uint64),
            [POLICY],
            beyond,
            ops=np.ascontiguousarray(ops, dtype=np.uint8).tobytes(),
            unit="items",
            warmup=warmup,
            threads=threads,
            params={POLICY: {"base": base}},
        )
        got |= {(GHOST_VIEW, int(r["size"])): float(r["hit_ratio"]) for r in seen}
    for k in sim_items:
        got.setdefault((GHOST_VIEW, k), got[(POLICY, k)])
    if sample_adjust is not None:
        got = {k: min(max(1.0 - (1.0 - h) * sample_adjust, 0.0), 1.0) for k, h in got.items()}
    counted = max(int(r["requests"]) for r in out)
    bytes_per_item = current_bytes / current_items
    sizes = np.asarray([k / rate * bytes_per_item for k in sim_items], dtype=np.float64)
    if len(sim_items) < len(factors):
        notes.append(f"{len(factors) - len(sim_items)} sizes below {MIN_SIM_ITEMS} simulated items left out")
    return Correction(
        sizes_bytes=sizes,
        lru=np.asarray([got[(BASE_POLICY, k)] for k in sim_items], dtype=np.float64),
        policy=np.asarray([got[(POLICY, k)] for k in sim_items], dtype=np.float64),
        sampled_gets=counted,
        sampled_requests=len(keys),
        sample_rate=rate,
        reference_bytes=float(current_bytes),
        reference_items=float(current_items),
        warmup=float(warmup),
        sample_adjust=sample_adjust,
        notes=notes,
        ghost_view=np.asarray([got[(GHOST_VIEW, k)] for k in sim_items], dtype=np.float64),
    )


def read_ratio(
    chunks: Sequence[tuple[float, float, float, int]], windows: Sequence[tuple[float, float, float]]
) -> tuple[float | None, str]:
    """SHARDS_adj for the gap (Waldspurger et al., FAST'15). A spatial sample holds more or fewer
    reads than R x the reads memcached served mostly because a few very hot keys fell in or out
    of it; those hit under both policies, so they change the gap's denominator only. The ratio
    sampled / expected rescales the gap (on Zipf traces it was 0.83-1.18 here).

    chunks: (start, end, sample rate, sampled reads) of the chunks replayed; windows: (start,
    end, reads) of the server's snapshot windows (reads = cmd_get x (1 - stream loss)); times in
    seconds. Returns the ratio, or None and why when the windows do not cover the chunks or the
    ratio is implausible."""
    sampled = expected = covered = span = 0.0
    for c0, c1, rate, reads in chunks:
        if c1 <= c0:
            continue
        sampled += reads
        span += c1 - c0
        for w0, w1, wr in windows:
            if w1 <= w0:
                continue
            ov = min(c1, w1) - max(c0, w0)
            if ov > 0:
                expected += rate * wr * ov / (w1 - w0)
                covered += ov
    if span <= 0 or covered < ADJUST_COVERAGE * span or expected <= 0:
        return None, "no sample-size adjustment: the snapshot windows do not cover the trace"
    ratio = sampled / expected
    if not (ADJUST_RANGE[0] <= ratio <= ADJUST_RANGE[1]):
        return None, f"no sample-size adjustment: sampled/expected reads {ratio:.3g} is implausible"
    return ratio, ""


def warmup_fraction(requests: int, sim_items_now: float) -> float:
    """The share of the trace left uncounted while the simulated caches settle."""
    if requests <= 0:
        return WARMUP_MAX
    return float(min(max(WARMUP_TURNOVERS * sim_items_now / requests, WARMUP_MIN), WARMUP_MAX))


def taper(memory: FloatArray, current_bytes: float, classes: Sequence[ClassCurve]) -> FloatArray:
    """W(x): the read-weighted share of the classes whose curve is still LRU-like at memory x
    (see the module docstring). 0 from today's memory up.

    All classes at once (a loop of numpy calls per class was 0.16 ms of the worker's
    ~1.8 ms per snapshot); the same operations per element as that loop, and the classes' terms
    added in class order, so the same floats (worker/tests/test_compute_vectorised.py keeps the
    loop as the reference)."""
    memory = np.asarray(memory, dtype=np.float64)
    if current_bytes <= 0:
        return np.zeros_like(memory)
    rel = memory / current_bytes
    den = 0.0
    kept: list[ClassCurve] = []
    for c in classes:
        if c.requests <= 0:
            continue
        den += c.requests
        if c.current_items > 0:  # an empty class contributes 0 at every size: nothing to correct
            kept.append(c)
    if den <= 0 or not kept:
        return np.zeros_like(memory)
    n = np.array([float(c.current_items) for c in kept])
    deltas = _below_shares([c.sizes for c in kept], n)
    # (classes, grid): each class's weight r_i w_i(x); the sum over axis 0 adds the rows in order
    terms = np.array([c.requests for c in kept])[:, None] * np.clip(
        (1.0 - rel)[None, :] / np.maximum(deltas, 1e-9)[:, None], 0.0, 1.0
    )
    return np.add.reduce(terms, axis=0) / den


def _below_shares(sizes: list[FloatArray], n: FloatArray) -> FloatArray:
    """_below_share of every class; in one step when the curves have equal lengths (the usual
    case: every class has curve_points points)."""
    if len({len(s) for s in sizes}) != 1 or not len(sizes[0]):
        return np.array([_below_share(s, v) for s, v in zip(sizes, n.tolist(), strict=True)])
    s2 = np.stack(sizes)
    below = s2 < (n * (1 - 1e-9))[:, None]
    # each row's last point below N_i (wherever the points are, as the boolean index takes it)
    last = s2.shape[1] - 1 - np.argmax(below[:, ::-1], axis=1)
    return np.where(below.any(axis=1), 1.0 - s2[np.arange(len(n)), last] / n, 1.0)


def _below_share(sizes: FloatArray, n: float) -> float:
    """delta_i: 1 - (the class's last curve point below N_i) / N_i, 1 when it has none."""
    below = sizes[sizes < n * (1 - 1e-9)]
    return 1.0 - float(below[-1]) / n if len(below) else 1.0


# The sizes (x today's memory) at which apply reports the gap and the lift (info gap_pp, lift_pp).
GAP_PROBES = (0.25, 0.5, 0.75)
LIFT_PROBES = (1.5, 2.0, 3.0)


def _at_factors(factors: tuple[float, ...], current_bytes: float) -> FloatArray:
    """factors x today's memory, each product as Python computes it (f * current_bytes)."""
    return np.array([f * current_bytes for f in factors], dtype=np.float64)


@dataclass
class Applied:
    curve: FloatArray
    applied: bool
    info: dict[str, Any]


def apply(
    memory: FloatArray,
    model: FloatArray,
    current_bytes: float,
    classes: Sequence[ClassCurve],
    correction: Correction | None,
    reason_missing: str = "no policy correction for this server (it needs sampled trace chunks)",
) -> Applied:
    """The model curve with the gap added below today's memory and the lift above it. Without a
    usable correction the model is returned unchanged (the same array) with the reason."""
    memory = np.asarray(memory, dtype=np.float64)
    model = np.asarray(model, dtype=np.float64)
    if correction is None:
        return Applied(model, False, {"applied": False, "reason": reason_missing})
    base = correction.summary()
    if current_bytes <= 0:
        return Applied(model, False, base | {"applied": False, "reason": "no memory in use"})
    if correction.sizes_bytes[-1] < current_bytes * (1 - 1e-9):
        return Applied(
            model,
            False,
            base
            | {
                "applied": False,
                "reason": "the correction was simulated for less memory than the server has now; "
                "it is recomputed with the next trace",
            },
        )
    w = taper(memory, current_bytes, classes)
    g = correction.gap_at(memory)
    lift = correction.lift_at(memory, current_bytes)
    corrected = np.clip(model + w * g + lift, 0.0, 1.0)
    # Below today's memory the corrected curve stays at or under the model's value there (the
    # measured point), and the whole curve stays non-decreasing.
    at_now = float(curve_at(memory, model, current_bytes))
    below = memory < current_bytes
    corrected[below] = np.minimum(corrected[below], max(at_now, 0.0))
    corrected = np.maximum.accumulate(corrected)
    # the probes in one call each (the same values as one call per size: elementwise)
    gaps = correction.gap_at(_at_factors(GAP_PROBES, current_bytes)) * 100.0
    lifted = correction.lift_at(_at_factors(LIFT_PROBES, current_bytes), current_bytes) * 100.0
    probes = dict(zip(GAP_PROBES, gaps.tolist(), strict=True))
    lifts = dict(zip(LIFT_PROBES, lifted.tolist(), strict=True))
    info = base | {
        "applied": True,
        "gap_pp": {f"{f:g}": round(v, 3) for f, v in probes.items()},
        # above today's memory: memcached's policy over the agent's ghost view (None: not stored)
        "lift_pp": (
            {f"{f:g}": round(v, 3) for f, v in lifts.items()} if correction.ghost_view is not None else None
        ),
        "max_shift_pp": float(np.max(np.abs(corrected - model))) * 100.0 if len(model) else 0.0,
    }
    return Applied(corrected, True, info)


def describe(info: dict[str, Any]) -> str:
    """One line for people (sizing answers, reports)."""
    if info.get("applied"):
        n = int(info.get("sampled_gets") or 0)
        return f"corrected for memcached's segmented LRU from {n:,} sampled reads"
    return str(info.get("reason") or "no policy correction")


def as_floats(xs: Sequence[float] | None) -> FloatArray:
    return np.asarray([] if xs is None else list(xs), dtype=np.float64)


def from_row(
    sizes_bytes: Sequence[float],
    lru: Sequence[float],
    policy: Sequence[float],
    sampled_gets: int,
    sampled_requests: int,
    sample_rate: float,
    reference_bytes: float,
    reference_items: float,
    sample_adjust: float | None = None,
    ghost_view: Sequence[float] | None = None,
) -> Correction | None:
    """A stored correction, or None when its arrays are unusable (a ghost view that does not fit
    is left out: the correction then applies below today's memory only, as before it existed)."""
    x, a, b = as_floats(sizes_bytes), as_floats(lru), as_floats(policy)
    if len(x) == 0 or len(x) != len(a) or len(x) != len(b):
        return None
    gv = as_floats(ghost_view) if ghost_view is not None else None
    if gv is not None and (len(gv) != len(x) or not np.all(np.isfinite(gv))):
        gv = None
    if not (np.all(np.isfinite(x)) and np.all(np.isfinite(a)) and np.all(np.isfinite(b))):
        return None
    if np.any(np.diff(x) <= 0) or x[0] <= 0 or not math.isfinite(sample_rate):
        return None
    return Correction(
        x,
        a,
        b,
        int(sampled_gets),
        int(sampled_requests),
        float(sample_rate),
        reference_bytes,
        reference_items,
        sample_adjust=sample_adjust,
        ghost_view=gv,
    )
