"""Merge per-slab-class hit-rate curves into one server curve over memory (pure, no database).

Inputs are the agent's per-class curves (docs/agent-protocol.md): for each slab class, 100 points
(items -> hit ratio of that class's reads), its chunk size, current pages and items, and its read
count (`requests`, the merge weight). Memory is counted the way memcached spends it: in 1 MiB
pages, each holding `PAGE_SIZE // chunk_size` chunks. Two merges are produced on the same memory
grid:

* proportional join (MIMIR: Sæmundsson, "Performance Profiling of Cache Systems at Scale", MSc
  thesis 2014, Fig. 4.3): every class keeps the same fraction of its
  current size, globalHRC(M) = sum_i r_i * h_i(N_i * M / C) / sum_i r_i, with C today's memory;
* optimal allocation: the split of whole pages between classes that maximises hits at each total,
  max sum_i r_i * h_i(k_i * items_per_page_i) s.t. sum_i k_i <= P.

The optimum is found on the upper concave hulls of the per-class page-value functions (greedy on
marginal hits per page, merged over all classes). That is exact when every class is concave, and
at hull breakpoints in general; elsewhere it yields a feasible allocation and a certified upper
bound. When that certified gap is material, an exact dynamic program (max-plus convolution over
pages) replaces it; for very large servers the program runs on page granules and the result says so.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from itertools import chain
from typing import Any

import numpy as np
from numpy.typing import NDArray

PAGE_SIZE = 1 << 20
GRID_POINTS = 100
# Certified gaps below this (hit-ratio units: 1e-3 = 0.1 pp) are not worth a dynamic program: the
# curves themselves are only good to about 1-2 pp (ROUNDER's MAE, Sæmundsson 2014
# Table 5.1).
GAP_TOLERANCE = 1e-3
# Work budget (cells of the max-plus convolution) above which the program runs on page granules.
DP_BUDGET = 2_000_000
# Slab advice (the page moves toward the best allocation of today's pages). A window's class
# curves are sampled estimates, so on a stationary workload the optimum moves by a page or two
# between windows with gains of a few hundredths of a pp. The advice therefore holds still:
# - below ADVICE_MIN_GAIN (hit ratio at today's memory) there is no advice (nothing worth a move);
# - the previous window's advised allocation is kept while it is within ADVICE_HOLD of the new
#   optimum on this window's curves (a hysteresis band: the advice changes only for a clearly
#   better one, as hitcurve/rules/hysteresis.py does for the recommended -m).
ADVICE_MIN_GAIN = 0.002
ADVICE_HOLD = 0.005
# Largest memory the grid extends to, as a multiple of today's (the agent covers (0, 2N] by default).
MAX_SCALE = 8.0

FloatArray = NDArray[np.float64]
IntArray = NDArray[np.int64]


class MergeInputError(ValueError):
    """The snapshot's classes cannot be merged (a poison input: retrying will not help)."""


@dataclass(frozen=True)
class ClassCurve:
    """One slab class's curve: `sizes` in items (strictly increasing, > 0), `hits` in [0, 1]."""

    class_id: int
    chunk_size: int
    pages: int
    current_items: int
    requests: float
    sizes: FloatArray
    hits: FloatArray
    # how far the agent's ghost sees now, in items (N + the evicted keys it holds; None: an older
    # agent that does not say): past it the points are held flat, not measured
    ghost_reach_items: float | None = None
    # the agent's ghost filters (None: an older agent): its resolution past N, (reach - N) / F
    ghost_filters: int | None = None

    @property
    def items_per_page(self) -> float:
        """Chunks in one page; below 1 for items larger than a page (chunked items)."""
        if self.chunk_size <= PAGE_SIZE:
            return float(PAGE_SIZE // self.chunk_size)
        return 1.0 / math.ceil(self.chunk_size / PAGE_SIZE)

    def hit_ratio_at(self, items: FloatArray | float) -> FloatArray:
        """Linear between points, 0 at 0 items, held flat beyond the last point."""
        xp, fp = np.concatenate(([0.0], self.sizes)), np.concatenate(([0.0], self.hits))
        return np.asarray(np.interp(items, xp, fp), dtype=np.float64)

    def items_for_pages(self, pages: FloatArray | IntArray | int) -> FloatArray:
        return np.floor(np.asarray(pages, dtype=np.float64) * self.items_per_page + 1e-9)


# One class as the worker reads it from snapshots.classes (snapshot_loads.class_rows) and as
# row_from_protocol makes it from a snapshot's JSON: (id, chunk_size, pages, current_items,
# requests, sizes, hit ratios, ghost_reach_items, ghost_filters). Both paths go through
# classes_from_rows, so the bench (the JSON) and production (the rows) merge the same input.
ClassRow = tuple[int, int, int, int, float, Sequence[float], Sequence[float], float | None, int | None]


def row_from_protocol(cls: Mapping[str, Any]) -> ClassRow:
    """One element of a snapshot's `classes` (agent protocol v1) as the row ingest stores."""
    try:
        curve = cls["curve"]
        pts = np.asarray(curve["points"], dtype=np.float64)
        if pts.ndim != 2 or pts.shape[1] != 2 or pts.shape[0] < 1:
            raise MergeInputError(f"class {cls.get('id')}: points must be [[items, hit_ratio], ...]")
        reach, filters = curve.get("ghost_reach_items"), curve.get("ghost_filters")
        return (
            int(cls["id"]),
            int(cls["chunk_size"]),
            int(cls.get("pages") or 0),
            int(curve.get("current_items", cls.get("items", 0)) or 0),
            float(cls.get("requests") or 0.0),
            pts[:, 0].tolist(),
            pts[:, 1].tolist(),
            None if reach is None else float(reach),
            None if filters is None else int(filters),
        )
    except (KeyError, TypeError) as exc:
        raise MergeInputError(f"class {cls.get('id') if isinstance(cls, Mapping) else '?'}: {exc!r}") from exc


def class_from_protocol(cls: Mapping[str, Any]) -> ClassCurve:
    """Build a ClassCurve from one element of a snapshot's `classes` (agent protocol v1)."""
    out = classes_from_rows([row_from_protocol(cls)])[0]
    validate_class(out)
    return out


def ghost_filters(classes: Sequence[ClassCurve]) -> int | None:
    """The coarsest ghost over the classes that carry reads (fewest filters: the widest span past
    N); None when one of them does not say (an older agent) or none carries reads."""
    fs = [c.ghost_filters for c in classes if c.requests > 0 and c.current_items > 0]
    if not fs or any(f is None for f in fs):
        return None
    return min(f for f in fs if f is not None)


def ghost_reach_bytes(classes: Sequence[ClassCurve], current_bytes: float) -> float | None:
    """How far the server's curve is measured now, in its memory: the smallest reach / today's
    items over the classes that carry reads (a class's ghost still filling leaves the joined curve
    flat past that factor of today's memory, as merge's valid_max does for the points' span).
    None when a weighted class does not report its reach (an older agent) or nothing is cached."""
    factors = []
    for c in classes:
        if c.requests <= 0 or c.current_items <= 0:
            continue
        if c.ghost_reach_items is None:
            return None
        factors.append(max(c.ghost_reach_items, float(c.current_items)) / float(c.current_items))
    if not factors or current_bytes <= 0:
        return None
    return min(factors) * current_bytes


def _class_curve(
    class_id: int,
    chunk_size: int,
    pages: int,
    current_items: int,
    requests: float,
    sizes: FloatArray,
    hits: FloatArray,
    ghost_reach_items: float | None,
    ghost_filters: int | None,
) -> ClassCurve:
    """ClassCurve(...) without the frozen dataclass's per-field __setattr__ (a third of the cost;
    the object is the same and stays frozen)."""
    c = object.__new__(ClassCurve)
    c.__dict__.update(
        class_id=class_id,
        chunk_size=chunk_size,
        pages=pages,
        current_items=current_items,
        requests=requests,
        sizes=sizes,
        hits=hits,
        ghost_reach_items=ghost_reach_items,
        ghost_filters=ghost_filters,
    )
    return c


def _ghost(r: ClassRow) -> tuple[float | None, int | None]:
    """The row's ghost reach (items) and filters; None each when the agent did not send it."""
    return (None if r[7] is None else float(r[7]), None if r[8] is None else int(r[8]))


def classes_from_rows(rows: Sequence[ClassRow]) -> list[ClassCurve]:
    """ClassCurves from ClassRow rows (snapshot_loads.class_rows, row_from_protocol), converting
    all curves with one array construction when they have equal lengths (the usual case: every
    class has curve_points points)."""
    if not rows:
        return []
    lens = {len(r[5]) for r in rows} | {len(r[6]) for r in rows}
    if len(lens) == 1:
        # One fromiter over every row's sizes then hit ratios: cheaper than nested-list arrays.
        width = lens.pop()
        both = np.fromiter(
            chain.from_iterable(chain.from_iterable((r[5], r[6]) for r in rows)),
            np.float64,
            2 * width * len(rows),
        ).reshape(len(rows), 2, width)
        return [
            _class_curve(int(r[0]), int(r[1]), int(r[2]), int(r[3]), float(r[4]), b[0], b[1], *_ghost(r))
            for r, b in zip(rows, both, strict=True)
        ]
    return [
        ClassCurve(
            int(r[0]),
            int(r[1]),
            int(r[2]),
            int(r[3]),
            float(r[4]),
            np.asarray(r[5], dtype=np.float64),
            np.asarray(r[6], dtype=np.float64),
            *_ghost(r),
        )
        for r in rows
    ]


def validate_class(c: ClassCurve) -> None:
    where = f"class {c.class_id}"
    if c.chunk_size <= 0:
        raise MergeInputError(f"{where}: chunk_size must be > 0")
    if c.pages < 0 or c.current_items < 0 or not math.isfinite(c.requests) or c.requests < 0:
        raise MergeInputError(f"{where}: pages, items and requests must be finite and >= 0")
    if not (np.all(np.isfinite(c.sizes)) and np.all(np.isfinite(c.hits))):
        raise MergeInputError(f"{where}: curve has non-finite values")
    if c.sizes[0] <= 0 or np.any(np.diff(c.sizes) <= 0):
        raise MergeInputError(f"{where}: curve sizes must be > 0 and strictly increasing")
    if np.any(c.hits < 0) or np.any(c.hits > 1) or np.any(np.diff(c.hits) < -1e-12):
        raise MergeInputError(f"{where}: hit ratios must be in [0, 1] and non-decreasing")


@dataclass(frozen=True)
class PageMove:
    from_class: int
    to_class: int
    pages: int
    # hit ratio this move adds after the moves listed before it (model; None if not valued): the
    # moves' gains add up to the advice's whole gain (MergeResult.rebalance_gain)
    hit_gain: float | None = None


@dataclass
class MergeResult:
    memory_bytes: FloatArray  # grid, bytes of slab memory (pages x 1 MiB)
    proportional: FloatArray  # MIMIR proportional join, hit ratio on the grid
    optimal: FloatArray  # best page allocation (feasible; exact unless optimal_method says granule)
    optimal_upper: FloatArray  # concave-hull bound: no allocation can do better
    optimal_method: str  # "hull-exact" | "hull-certified" | "dp-exact" | "dp-granule-<G>"
    optimal_gap: float  # max(optimal_upper - optimal) over the grid
    current_bytes: int
    current_pages: int
    total_requests: float
    model_at_current: float  # proportional join at today's memory (the LRU model's prediction)
    current_allocation_hit_ratio: float  # today's pages per class, valued on the curves
    optimal_at_current: float  # best allocation of today's pages
    allocation: dict[int, int] = field(default_factory=dict)  # class -> pages, best at today's total
    moves: list[PageMove] = field(default_factory=list)  # slab rebalancing advice
    valid_max_bytes: float = 0.0  # beyond this some class's curve is extrapolated (held flat)
    # the allocation the advice leads to: the optimum, except that a class holding items keeps a page
    advised_at_current: float = 0.0

    @property
    def rebalance_gain(self) -> float:
        return max(self.advised_at_current - self.current_allocation_hit_ratio, 0.0)


# ---------------------------------------------------------------------------------------------
# Page-value functions g_i(k) = r_i * h_i(items(k)) and their upper concave hulls


class _PageFns:
    """All classes packed into flat arrays, so that any batch of (class, pages) evaluations is a
    single vectorised interpolation; plus the candidate pages where each g_i can bend."""

    def __init__(self, classes: Sequence[ClassCurve]) -> None:
        n = len(classes)
        self.classes = list(classes)
        self.requests = np.array([c.requests for c in classes], dtype=np.float64)
        chunk = np.array([c.chunk_size for c in classes], dtype=np.int64)
        if n and chunk.min() > 0:  # items_per_page of every class at once (the same floats)
            self.ipp = np.where(
                chunk <= PAGE_SIZE, PAGE_SIZE // np.maximum(chunk, 1), 1.0 / np.ceil(chunk / PAGE_SIZE)
            ).astype(np.float64)
        else:  # (merge refuses such classes before; items_per_page says why it cannot)
            self.ipp = np.array([c.items_per_page for c in classes], dtype=np.float64)
        lens_l = [len(c.sizes) + 1 for c in classes]
        uniform = n > 0 and lens_l.count(lens_l[0]) == n
        active = self.requests > 0
        if uniform:  # the usual case (every class has curve_points points): 2-D, no Python loop
            width = lens_l[0]
            self.row_start = np.arange(0, n * width, width, dtype=np.int64)
            self.row_end = self.row_start + (width - 1)  # index of each row's last point
            xs2 = np.zeros((n, width))
            xs2[:, 1:] = np.concatenate([c.sizes for c in classes]).reshape(n, width - 1)
            sizes2 = xs2[:, 1:]
            self.last = xs2[:, -1].copy()
            fp2 = np.zeros((n, width))
            fp2[:, 1:] = np.concatenate([c.hits for c in classes]).reshape(n, width - 1)
            xs = xs2.ravel()
            self.fp = fp2.ravel()
            # Each row's sizes normalised to [0, 1] and shifted by 2 x row: one sorted key for all rows.
            self.key = (xs2 / self.last[:, None] + 2.0 * np.arange(n)[:, None]).ravel()
            self.xs2: FloatArray | None = xs2
            self.fp2: FloatArray | None = fp2
        else:
            self.last = np.array([c.sizes[-1] for c in classes], dtype=np.float64)
            lens = np.array(lens_l, dtype=np.int64)
            self.row_start = np.concatenate(([0], np.cumsum(lens)[:-1])).astype(np.int64)
            self.row_end = self.row_start + lens - 1
            row = np.repeat(np.arange(n), lens)
            xs = np.concatenate([np.concatenate(([0.0], c.sizes)) for c in classes]) if n else np.zeros(0)
            self.fp = np.concatenate([np.concatenate(([0.0], c.hits)) for c in classes]) if n else np.zeros(0)
            self.key = xs / self.last[row] + 2.0 * row
            self.xs2 = None
            self.fp2 = None
        self.uniform = uniform
        self.width = lens_l[0] if uniform else 0  # points per row, the prepended (0, 0) included
        self.xs = xs
        self.max_pages = np.where(active, np.ceil(self.last / self.ipp - 1e-9), 0).astype(np.int64)
        # g_i is linear in pages between the pages straddling each curve point, so its hull
        # vertices (and any non-concavity) can only sit on these candidates.
        parts_c: list[IntArray] = []
        parts_k: list[IntArray] = []
        big_mask = active & (self.ipp >= 1.0)
        big = np.flatnonzero(big_mask)
        if len(big):
            kcol = self.max_pages[big][:, None].astype(np.float64)
            if uniform:
                b = (sizes2 if len(big) == n else sizes2[big]) / self.ipp[big][:, None]
                m = b.shape[1]
                cand = np.empty((len(big), 2 * m + 2))
                cand[:, 0] = 0.0
                cand[:, 1:2] = kcol
                np.floor(b, out=cand[:, 2 : m + 2])
                np.ceil(b, out=cand[:, m + 2 :])
            else:
                mm = lens[big] - 1
                cand = np.repeat(kcol, 2 * int(mm.max()) + 2, axis=1)
                for j, i in enumerate(big):  # rows differ in length only in unusual snapshots
                    b1 = classes[int(i)].sizes / self.ipp[i]
                    cand[j, : 2 * mm[j] + 2] = np.concatenate(([0.0, kcol[j, 0]], np.floor(b1), np.ceil(b1)))
            cand.sort(axis=1)
            cand = np.minimum(cand, kcol).astype(np.int64)
            keep = np.ones(cand.shape, dtype=bool)
            np.not_equal(cand[:, 1:], cand[:, :-1], out=keep[:, 1:])
            flat = np.flatnonzero(keep)
            parts_c.append(big[flat // cand.shape[1]])
            parts_k.append(cand.ravel()[flat])
        if n and len(big) == n:
            # Every class in order, each row sorted and deduplicated: already in (class, page) order.
            self.cand_class, self.cand_k = parts_c[0], parts_k[0]
        else:
            for i in np.flatnonzero(active & (self.ipp < 1.0)):
                # Items larger than a page: the value only steps up when a whole item fits, at
                # multiples of the item's pages, and is flat in between.
                per_item = int(round(1.0 / self.ipp[i]))
                steps = per_item * np.arange(int(math.ceil(self.last[i])) + 1)
                ks = np.unique(
                    np.clip(np.concatenate(([self.max_pages[i]], steps, steps - 1)), 0, self.max_pages[i])
                ).astype(np.int64)
                parts_c.append(np.full(len(ks), i, dtype=np.int64))
                parts_k.append(ks)
            for i in np.flatnonzero(~active):
                parts_c.append(np.array([i], dtype=np.int64))
                parts_k.append(np.zeros(1, dtype=np.int64))
            cc = np.concatenate(parts_c) if parts_c else np.zeros(0, dtype=np.int64)
            kk = np.concatenate(parts_k) if parts_k else np.zeros(0, dtype=np.int64)
            order = np.lexsort((kk, cc))
            self.cand_class = cc[order]
            self.cand_k = kk[order]
        self.cand_g = self.g(self.cand_class, self.cand_k)

    def hits_at_items(self, cls: IntArray, items: FloatArray) -> FloatArray:
        """h_cls(items), vectorised over both arrays, broadcast together (linear, 0 at 0, flat beyond
        the last point)."""
        cls = np.asarray(cls, dtype=np.int64)
        last = self.last[cls]
        t = np.minimum(np.asarray(items, dtype=np.float64) / last, 1.0)
        j = np.searchsorted(self.key, t + 2.0 * cls, side="right") - 1
        if self.uniform:  # rows of one width: their bounds by arithmetic rather than two gathers
            start = cls * self.width
            j = np.minimum(np.maximum(j, start), start + (self.width - 2))
        else:
            j = np.minimum(np.maximum(j, self.row_start[cls]), self.row_end[cls] - 1)
        xs, fp = self.xs, self.fp
        x0 = xs[j]
        j1 = j + 1
        f0 = fp[j]
        w = np.minimum(np.maximum((t * last - x0) / (xs[j1] - x0), 0.0), 1.0)
        return np.asarray(f0 + w * (fp[j1] - f0), dtype=np.float64)

    def g(self, cls: IntArray | int, k: IntArray | int) -> FloatArray:
        """Hits of class `cls` holding `k` pages."""
        cls_a = np.asarray(cls, dtype=np.int64)
        kk = np.minimum(np.asarray(k, dtype=np.int64), self.max_pages[cls_a])
        items = np.floor(kk * self.ipp[cls_a] + 1e-9)
        return np.asarray(self.requests[cls_a] * self.hits_at_items(cls_a, items), dtype=np.float64)


def _upper_hull_all(fns: _PageFns) -> tuple[IntArray, IntArray, FloatArray, bool]:
    """Upper concave hulls of every class at once (vectorised point removal).

    Returns the hull vertices flattened (class index, page, value) and whether every class was
    already concave (no candidate removed except collinear ones)."""
    # class, page and value in one (3, n) array, so that each round compacts them in one step
    # (class ids and pages are small integers: exact as floats)
    pack = np.vstack((fns.cand_class.astype(np.float64), fns.cand_k.astype(np.float64), fns.cand_g))
    concave = True
    while True:
        cls, k, g = pack[0], pack[1], pack[2]
        n = len(k)
        if n < 3:
            break
        same = cls[1:] == cls[:-1]
        # Across a class boundary the slope is meaningless (masked out below by `interior`);
        # a unit step there keeps the division finite.
        slope = (g[1:] - g[:-1]) / np.where(same, k[1:] - k[:-1], 1.0)
        interior = same[:-1] & same[1:]  # point j+1 has neighbours j and j+2 in its class
        s_in, s_out = slope[:-1], slope[1:]
        scale = 1e-12 * np.maximum(1.0, np.abs(g[1:-1]))
        bend = interior & (s_in <= s_out + scale / np.maximum(k[2:] - k[:-2], 1.0))
        if not bend.any():
            break
        if concave:  # once a class is known not concave, the check is skipped
            tol = 1e-9 * np.maximum(np.abs(s_in), np.abs(s_out))
            concave = not np.any(interior & (s_in < s_out - tol - 1e-15))
        pack = pack[:, np.concatenate(([True], ~bend, [True]))]
    return pack[0].astype(np.int64), pack[1].astype(np.int64), pack[2].copy(), concave


@dataclass
class _Hull:
    seg_class: IntArray
    seg_k0: IntArray  # start page of the segment in its class
    seg_dk: IntArray
    seg_dg: FloatArray
    cum_k: FloatArray  # total pages after taking segments 0..s (prefix, leading 0)
    cum_g: FloatArray
    concave: bool


def _merged_hull(fns: _PageFns) -> _Hull:
    cls, k, g, concave = _upper_hull_all(fns)
    same = cls[1:] == cls[:-1]
    seg_class = cls[1:][same]
    seg_k0 = k[:-1][same]
    seg_dk = (k[1:] - k[:-1])[same]
    seg_dg = (g[1:] - g[:-1])[same]
    slope = seg_dg / seg_dk
    # Hull slopes fall within each class, so a stable sort by slope keeps each class's segments in
    # order: taking them in this order is the greedy on marginal hits per page.
    # The segments come in (class, start page) order, so a stable sort on -slope alone gives the
    # (slope, class, page) order.
    order = np.argsort(-slope, kind="stable")
    seg_class, seg_k0, seg_dk, seg_dg = seg_class[order], seg_k0[order], seg_dk[order], seg_dg[order]
    cum_k = np.concatenate(([0.0], np.cumsum(seg_dk, dtype=np.float64)))
    cum_g = np.concatenate(([0.0], np.cumsum(seg_dg)))
    return _Hull(seg_class, seg_k0, seg_dk, seg_dg, cum_k, cum_g, concave)


def _hull_values(fns: _PageFns, hull: _Hull, pages: IntArray) -> tuple[FloatArray, FloatArray]:
    """At each total `pages`: the hull bound and the value of the greedy's feasible allocation."""
    upper = np.interp(pages, hull.cum_k, hull.cum_g)
    s = np.searchsorted(hull.cum_k, pages, side="right") - 1  # segments 0..s-1 fully taken
    s = np.minimum(np.maximum(s, 0), len(hull.seg_class))
    feasible = hull.cum_g[s]
    if hull.concave:
        # On a concave class a hull segment is the function itself: every integer split is exact.
        return upper, upper
    rem = pages - hull.cum_k[np.minimum(s, len(hull.cum_k) - 1)]
    partial = (s < len(hull.seg_class)) & (rem > 0)
    if partial.any():
        idx = s[partial]
        seg_cls = hull.seg_class[idx]
        k0 = hull.seg_k0[idx]
        # at most one partial segment per requested total
        both = fns.g(
            np.concatenate((seg_cls, seg_cls)), np.concatenate((k0 + rem[partial].astype(np.int64), k0))
        )
        feasible[partial] += both[: len(idx)] - both[len(idx) :]
    return upper, np.minimum(feasible, upper)


def _hull_allocation(fns: _PageFns, hull: _Hull, total: int) -> IntArray:
    alloc = np.zeros(len(fns.classes), dtype=np.int64)
    s = int(np.searchsorted(hull.cum_k, total, side="right") - 1)
    s = min(max(s, 0), len(hull.seg_class))
    alloc += np.bincount(hull.seg_class[:s], weights=hull.seg_dk[:s], minlength=len(alloc)).astype(np.int64)
    if s < len(hull.seg_class):
        alloc[hull.seg_class[s]] += int(total - hull.cum_k[s])
    return alloc


# ---------------------------------------------------------------------------------------------
# Exact dynamic program (max-plus convolution over pages)


def _dp(fns: _PageFns, max_total: int, granule: int) -> tuple[FloatArray, list[IntArray]]:
    """best[u] = max sum_i g_i(k_i * granule) with sum k_i <= u (u in granules); argmax per class."""
    units = max_total // granule
    best = np.zeros(units + 1)
    choices: list[IntArray] = []
    for i in range(len(fns.classes)):
        kmax = min(int(math.ceil(fns.max_pages[i] / granule)), units)
        if kmax == 0:
            choices.append(np.zeros(units + 1, dtype=np.int64))
            continue
        gi = fns.g(i, np.arange(kmax + 1, dtype=np.int64) * granule)
        padded = np.concatenate((np.full(kmax, -np.inf), best))
        win = np.lib.stride_tricks.sliding_window_view(padded, kmax + 1)  # win[u, j] = best[u+j-kmax]
        total = win + gi[::-1]
        j = np.argmax(total, axis=1)
        best = total[np.arange(units + 1), j]
        choices.append((kmax - j).astype(np.int64))
    # best is non-decreasing already (k_i = 0 is always allowed), sum k_i <= u holds by construction
    return best, choices


def _dp_backtrack(choices: list[IntArray], units: int) -> IntArray:
    alloc = np.zeros(len(choices), dtype=np.int64)
    u = units
    for i in range(len(choices) - 1, -1, -1):
        alloc[i] = choices[i][u]
        u -= int(alloc[i])
    return alloc


# ---------------------------------------------------------------------------------------------


def current_pages_of(c: ClassCurve) -> int:
    """Today's pages of a class: as reported, or enough for its items when the agent sent none."""
    if c.pages > 0:
        return c.pages
    return int(math.ceil(c.current_items / c.items_per_page - 1e-9)) if c.current_items > 0 else 0


def rebalancing_moves(current: Mapping[int, int], target: Mapping[int, int]) -> list[PageMove]:
    """Pair classes that should give pages with classes that should get them, largest first."""
    return [PageMove(from_class=f, to_class=t, pages=n) for f, t, n in _move_pairs(current, target)]


def _move_pairs(current: Mapping[int, int], target: Mapping[int, int]) -> list[tuple[int, int, int]]:
    """rebalancing_moves as (from class, to class, pages): merge values them before it makes the
    PageMoves (one object per move instead of two)."""
    tget, cget = target.get, current.get
    donors = sorted(((x, c) for c, v in current.items() if (x := v - tget(c, 0)) > 0), reverse=True)
    takers = sorted(((x, c) for c, v in target.items() if (x := v - cget(c, 0)) > 0), reverse=True)
    pairs: list[tuple[int, int, int]] = []
    if not donors or not takers:
        return pairs
    di = ti = 0
    (dn, dc), (tn, tc) = donors[0], takers[0]
    while True:
        n = min(dn, tn)
        pairs.append((dc, tc, n))
        dn -= n
        tn -= n
        if dn == 0:
            di += 1
            if di == len(donors):
                break
            dn, dc = donors[di]
        if tn == 0:
            ti += 1
            if ti == len(takers):
                break
            tn, tc = takers[ti]
    return pairs


def _valued(
    pairs: list[tuple[int, int, int]], ids: list[int], current: Mapping[int, int], fns: _PageFns, norm: float
) -> list[PageMove]:
    """The moves with the hit ratio each adds when made in the listed order, after the ones before
    it (from today's pages, the model's curves), so that the gains add up to the advice's whole
    gain. All the moves' page-values in one evaluation: a snapshot has ~20-30 moves, and one `g`
    call each was a third of merge's time (bench/worker/bench_compute.py)."""
    if not pairs:
        return []
    pos = {cid: i for i, cid in enumerate(ids)}
    state = dict(current)
    before: list[int] = []
    after: list[int] = []
    for f, t, n in pairs:
        before += [state[f], state[t]]
        state[f] -= n
        state[t] += n
        after += [state[f], state[t]]
    cls = np.array([pos[c] for f, t, _ in pairs for c in (f, t)], dtype=np.int64)
    v = fns.g(np.concatenate((cls, cls)), np.array(after + before, dtype=np.int64))
    m = len(cls)
    gains = ((v[:m:2] + v[1:m:2] - v[m::2] - v[m + 1 :: 2]) / norm).tolist()
    return [PageMove(f, t, n, gain) for (f, t, n), gain in zip(pairs, gains, strict=True)]


def _kept(
    keep: Mapping[int, int] | None, current: Mapping[int, int], holding: set[int]
) -> dict[int, int] | None:
    """The previous window's advised allocation, when it still applies to today's classes: the
    same classes and total pages, and a page for every class that holds items."""
    if not keep or set(keep) != set(current) or sum(keep.values()) != sum(current.values()):
        return None
    if any(keep[c] < 1 for c in holding) or any(v < 0 for v in keep.values()):
        return None
    return dict(keep)


def _validate_packed(
    fns: _PageFns, classes: Sequence[ClassCurve], pages: IntArray | None = None, items: IntArray | None = None
) -> None:
    """The checks of validate_class, for every class at once; names the first bad class.
    `pages` and `items`: the classes' pages and current_items, from a caller (merge) that has them
    and has checked chunk sizes and curve lengths already."""
    if pages is None or items is None:
        pages = np.array([c.pages for c in classes], dtype=np.int64)
        items = np.array([c.current_items for c in classes], dtype=np.int64)
        lengths_checked = False
    else:
        lengths_checked = True
    bad = (pages < 0) | (items < 0)
    for c_i, c in enumerate(() if lengths_checked else classes):
        if c.chunk_size <= 0 or len(c.sizes) == 0 or len(c.sizes) != len(c.hits):
            bad[c_i] = True
    if not bad.any() and fns.xs2 is not None and fns.fp2 is not None:
        # Uniform rows: the same checks on the 2-D arrays (column 0 is the prepended (0, 0)).
        x2, f2 = fns.xs2, fns.fp2
        bad_pt = (
            ~np.isfinite(x2[:, 1:])
            | ~np.isfinite(f2[:, 1:])
            | (x2[:, 1:] - x2[:, :-1] <= 0)
            | (f2[:, 1:] - f2[:, :-1] < -1e-12)
            | (f2[:, 1:] > 1)
        )
        bad |= bad_pt.any(axis=1)
        bad |= ~np.isfinite(fns.requests) | (fns.requests < 0)
    elif not bad.any() and len(classes):
        row = np.repeat(np.arange(len(classes)), fns.row_end - fns.row_start + 1)
        same = row[1:] == row[:-1]
        dx = np.diff(fns.xs)[same]
        dy = np.diff(fns.fp)[same]
        bad_pt = (
            ~np.isfinite(fns.xs[1:][same])
            | ~np.isfinite(fns.fp[1:][same])
            | (dx <= 0)
            | (dy < -1e-12)
            | (fns.fp[1:][same] > 1)
        )
        bad |= np.bincount(row[1:][same][bad_pt], minlength=len(classes)) > 0
        bad |= ~np.isfinite(fns.requests) | (fns.requests < 0)
    if bad.any():
        validate_class(classes[int(np.argmax(bad))])  # raises with the precise reason
        raise MergeInputError(f"class {classes[int(np.argmax(bad))].class_id}: invalid curve")


def merge(
    classes: Sequence[ClassCurve],
    grid_points: int = GRID_POINTS,
    method: str = "auto",
    dp_budget: int = DP_BUDGET,
    keep: Mapping[int, int] | None = None,
) -> MergeResult:
    """Merge class curves into a server curve. `method`: "auto" (hull, DP when the certified gap
    is above GAP_TOLERANCE), "hull" (never DP) or "dp" (always DP). `keep`: the previous window's
    advised allocation (class -> pages), kept while it is within ADVICE_HOLD of this window's."""
    if method not in ("auto", "hull", "dp"):
        raise ValueError(f"unknown method {method!r}")
    ids = [c.class_id for c in classes]
    if len(set(ids)) != len(ids):
        raise MergeInputError("duplicate class ids in one snapshot")
    if not classes:
        raise MergeInputError("a snapshot needs at least one class")
    for c in classes:
        if c.chunk_size <= 0 or len(c.sizes) == 0:
            validate_class(c)
        if len(c.hits) != len(c.sizes):
            raise MergeInputError(f"class {c.class_id}: sizes and hit ratios differ in length")
    fns = _PageFns(classes)
    pages_in = np.array([c.pages for c in classes], dtype=np.int64)
    items_in = np.array([c.current_items for c in classes], dtype=np.int64)
    _validate_packed(fns, classes, pages_in, items_in)
    n = len(classes)
    requests = fns.requests
    total_requests = float(requests.sum())
    items_now = items_in.astype(np.float64)
    # current_pages_of for every class at once
    cur_pages = np.where(
        pages_in > 0,
        pages_in,
        np.where(items_in > 0, np.ceil(items_now / fns.ipp - 1e-9), 0.0).astype(np.int64),
    ).astype(np.int64)
    current_pages = int(cur_pages.sum())
    current_bytes = current_pages * PAGE_SIZE

    # Grid: up to the smallest factor by which every weighted class's curve extends past today's
    # items (2 with the agent's default ghost factor), never below today's memory.
    weighted = (requests > 0) & (items_now > 0)
    scale_valid = float(np.min(fns.last[weighted] / items_now[weighted])) if weighted.any() else 1.0
    scale_max = min(max(scale_valid, 1.0), MAX_SCALE)
    if current_pages == 0:
        # An empty server: the grid spans what the curves cover when every class is filled.
        max_pages = max(int(fns.max_pages.sum()), 1)
    else:
        max_pages = max(int(math.ceil(current_pages * scale_max - 1e-9)), current_pages, 1)
    # linspace is increasing, so the distinct values are the ones that differ from their predecessor
    grid_raw = np.maximum(np.round(np.linspace(0, max_pages, grid_points + 1)[1:]), 1)
    grid_pages = grid_raw[np.concatenate(([True], grid_raw[1:] != grid_raw[:-1]))].astype(np.int64)
    memory = grid_pages.astype(np.float64) * PAGE_SIZE
    norm = total_requests if total_requests > 0 else 1.0
    idx = np.arange(n, dtype=np.int64)

    # Proportional join: each class at the same fraction of today's items.
    prop = np.zeros(len(grid_pages))
    model_at_current = 0.0
    if total_requests > 0 and current_pages > 0:
        frac = grid_pages / current_pages
        m = len(frac)
        # the grid and today's items (x 1.0: the same floats) in one evaluation, class by grid
        # point broadcast rather than every pair spelled out (a class's own values are gathered
        # once per class, not once per pair)
        h = fns.hits_at_items(idx[:, None], np.outer(items_now, np.append(frac, 1.0)))
        # contiguous copies: the same products and sums as before the broadcast
        prop = (requests @ np.ascontiguousarray(h[:, :m])) / total_requests
        model_at_current = float(requests @ h[:, m].copy()) / total_requests

    # Optimal allocation.
    hull = _merged_hull(fns)
    eval_pages = np.append(grid_pages, current_pages)
    upper, feasible = _hull_values(fns, hull, eval_pages)
    gap = float(np.max(upper - feasible)) / norm
    opt_method = "hull-exact" if hull.concave else "hull-certified"
    alloc_cur = _hull_allocation(fns, hull, current_pages)
    run_dp = method == "dp" or (method == "auto" and not hull.concave and gap > GAP_TOLERANCE)
    if run_dp and total_requests > 0:
        top = int(eval_pages.max())
        work = float(np.minimum(fns.max_pages, top).sum() + n) * (top + 1)
        granule = max(1, int(math.ceil(math.sqrt(work / dp_budget))))
        best, choices = _dp(fns, top, granule)
        dp_vals = best[eval_pages // granule]
        dp_alloc = _dp_backtrack(choices, current_pages // granule) * granule
        if granule > 1:
            # Leftover pages below one granule go, one by one, where they add the most hits.
            for _ in range(current_pages - int(dp_alloc.sum())):
                gains = fns.g(idx, dp_alloc + 1) - fns.g(idx, dp_alloc)
                dp_alloc[int(np.argmax(gains))] += 1
            opt_method = f"dp-granule-{granule}"
            feasible = np.maximum(feasible, dp_vals)  # both are feasible; keep the better
            if fns.g(idx, dp_alloc).sum() > fns.g(idx, alloc_cur).sum():
                alloc_cur = dp_alloc
        else:
            opt_method = "dp-exact"
            feasible = dp_vals
            alloc_cur = dp_alloc
        gap = float(np.max(upper - feasible)) / norm
    both = fns.g(np.concatenate((idx, idx)), np.concatenate((alloc_cur, cur_pages)))
    value_cur_alloc = float(both[:n].copy().sum())
    value_today = float(both[n:].copy().sum())

    # Pages the optimum leaves unused (every curve saturated) stay where they are.
    target = dict(zip(ids, alloc_cur.tolist(), strict=True))
    current = dict(zip(ids, cur_pages.tolist(), strict=True))
    spare = current_pages - sum(target.values())
    for cid in sorted(current, key=lambda x: current[x] - target[x], reverse=True) if spare > 0 else ():
        if spare <= 0:
            break
        give = min(spare, max(current[cid] - target[cid], 0))
        target[cid] += give
        spare -= give

    # A class that holds items keeps at least one page: with none, memcached could store none of
    # its items any more (every SET of that size would fail), whatever the model says it is worth.
    holding = {cid for cid, k in zip(ids, items_in.tolist(), strict=True) if k > 0}
    for cid in sorted(holding):
        if target[cid] > 0:
            continue
        donor = max(
            (c for c in target if target[c] > 1 or (target[c] == 1 and c not in holding)),
            key=lambda c: (target[c] - current[c], target[c]),
            default=None,
        )
        if donor is None:
            break
        target[donor] -= 1
        target[cid] = 1
    kept = np.array([target[c] for c in ids], dtype=np.int64)
    value_advised = float(fns.g(idx, kept).sum())
    held = _kept(keep, current, holding)
    if held is not None:
        value_held = float(fns.g(idx, np.array([held[c] for c in ids], dtype=np.int64)).sum())
        if value_held >= value_advised - ADVICE_HOLD * norm:
            target, value_advised = held, value_held
    worth = value_advised > value_today + ADVICE_MIN_GAIN * norm
    pairs = _move_pairs(current, target) if worth else []
    if not pairs:  # nothing worth moving: the advice is today's allocation
        target, value_advised = dict(current), value_today
    moves = _valued(pairs, ids, current, fns, norm)

    valid_max = (scale_valid * current_bytes) if current_pages > 0 else float(memory[-1])
    return MergeResult(
        memory_bytes=memory,
        proportional=prop,
        optimal=feasible[:-1] / norm,
        optimal_upper=upper[:-1] / norm,
        optimal_method=opt_method,
        optimal_gap=max(gap, 0.0),
        current_bytes=current_bytes,
        current_pages=current_pages,
        total_requests=total_requests,
        model_at_current=model_at_current,
        current_allocation_hit_ratio=min(value_today / norm, 1.0),
        optimal_at_current=max(min(value_cur_alloc / norm, 1.0), min(value_today / norm, 1.0)),
        allocation=target,
        moves=moves,
        valid_max_bytes=float(valid_max),
        advised_at_current=max(min(value_advised / norm, 1.0), min(value_today / norm, 1.0)),
    )
