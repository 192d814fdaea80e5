"""Merge of slab-class curves: proportional join and optimal page allocation (pure, no database).

References are independent of the code under test: closed-form curves, brute-force enumeration
of every page allocation, and a marginal-gain greedy with a heap (exact for concave curves)."""

from __future__ import annotations

import heapq
import itertools
import math

import numpy as np
import pytest

from hitcurve_worker.merge import (
    PAGE_SIZE,
    ClassCurve,
    MergeInputError,
    class_from_protocol,
    merge,
    rebalancing_moves,
)


def make_class(
    cid: int,
    chunk: int,
    pages: int,
    items: int,
    requests: float,
    sizes: list[float] | np.ndarray,
    hits: list[float] | np.ndarray,
) -> ClassCurve:
    return ClassCurve(
        cid,
        chunk,
        pages,
        items,
        float(requests),
        np.asarray(sizes, dtype=float),
        np.asarray(hits, dtype=float),
    )


def page_value(c: ClassCurve, k: int) -> float:
    """Hits of class c with k pages, straight from the definition (independent interpolation)."""
    ipp = PAGE_SIZE // c.chunk_size if c.chunk_size <= PAGE_SIZE else None
    items = k * ipp if ipp is not None else k // math.ceil(c.chunk_size / PAGE_SIZE)
    xs = [0.0, *c.sizes.tolist()]
    ys = [0.0, *c.hits.tolist()]
    if items >= xs[-1]:
        return c.requests * ys[-1]
    for j in range(1, len(xs)):
        if items <= xs[j]:
            t = (items - xs[j - 1]) / (xs[j] - xs[j - 1])
            return c.requests * (ys[j - 1] + t * (ys[j] - ys[j - 1]))
    raise AssertionError


def brute_force(classes: list[ClassCurve], totals: list[int], kmax: list[int]) -> dict[int, float]:
    best = dict.fromkeys(totals, 0.0)
    for alloc in itertools.product(*[range(k + 1) for k in kmax]):
        v = sum(page_value(c, k) for c, k in zip(classes, alloc, strict=True))
        s = sum(alloc)
        for t in totals:
            if s <= t and v > best[t]:
                best[t] = v
    return best


def random_classes(rng: np.random.Generator, n: int, concave: bool) -> list[ClassCurve]:
    chunks = [262144, 349525, 524288, 2 * PAGE_SIZE, 209715]  # 4, 3, 2, 0.5, 5 items per page
    out = []
    for i in range(n):
        chunk = int(rng.choice(chunks[:3] + chunks[4:] if concave else chunks))  # 2-page items step
        ipp = PAGE_SIZE // chunk if chunk <= PAGE_SIZE else 0.5
        npts = int(rng.integers(3, 8))
        cur = int(rng.integers(1, 5))
        n_items = max(1, int(cur * ipp))
        sizes = np.cumsum(rng.uniform(0.3, 1.5, npts))
        sizes = sizes / sizes[-1] * n_items * rng.uniform(1.0, 2.0)
        if concave:
            inc = np.sort(rng.uniform(0, 1, npts))[::-1] * np.diff(np.concatenate(([0], sizes)))
        else:
            inc = rng.uniform(0, 1, npts) ** 3  # spiky increments: cliffs and plateaus
        hits = np.cumsum(inc)
        hits = hits / hits[-1] * rng.uniform(0.3, 1.0)
        out.append(make_class(i + 1, chunk, cur, n_items, float(rng.integers(1, 1000)), sizes, hits))
    return out


def kmax_of(c: ClassCurve) -> int:
    ipp = c.items_per_page
    return int(math.ceil(c.sizes[-1] / ipp - 1e-9))


def grid_pages(res) -> list[int]:  # type: ignore[no-untyped-def]
    return [int(round(m / PAGE_SIZE)) for m in res.memory_bytes]


@pytest.mark.parametrize("seed", range(40))
def test_dp_equals_brute_force_on_non_concave_curves(seed: int) -> None:
    rng = np.random.default_rng(seed)
    classes = random_classes(rng, int(rng.integers(2, 4)), concave=False)
    res = merge(classes, method="dp")
    totals = grid_pages(res)
    ref = brute_force(classes, [*totals, res.current_pages], [kmax_of(c) for c in classes])
    r = sum(c.requests for c in classes)
    assert res.optimal_method == "dp-exact"
    for t, v in zip(totals, res.optimal, strict=True):
        assert v == pytest.approx(ref[t] / r, abs=1e-12)
    assert res.optimal_at_current == pytest.approx(ref[res.current_pages] / r, abs=1e-12)
    # the allocation behind the advice is feasible and reaches the optimum
    alloc = res.allocation
    assert sum(alloc.values()) <= res.current_pages
    value = sum(page_value(c, alloc[c.class_id]) for c in classes) / r
    # ... except that a class holding items keeps a page (then it may fall short of the optimum)
    assert all(alloc[c.class_id] >= 1 for c in classes if c.current_items > 0)
    assert value == pytest.approx(max(res.advised_at_current, res.current_allocation_hit_ratio), abs=1e-12)
    assert value <= ref[res.current_pages] / r + 1e-12
    if all(k >= 1 for k in alloc.values()) and res.advised_at_current < res.optimal_at_current - 1e-12:
        # the constraint bit: some class the optimum would have emptied holds items
        assert any(c.current_items > 0 for c in classes)


@pytest.mark.parametrize("seed", range(40))
def test_hull_brackets_the_optimum_and_auto_is_within_tolerance(seed: int) -> None:
    rng = np.random.default_rng(1000 + seed)
    classes = random_classes(rng, int(rng.integers(2, 4)), concave=False)
    res = merge(classes, method="hull")
    ref = brute_force(classes, grid_pages(res), [kmax_of(c) for c in classes])
    r = sum(c.requests for c in classes)
    for t, lo, hi in zip(grid_pages(res), res.optimal, res.optimal_upper, strict=True):
        assert lo <= ref[t] / r + 1e-12  # feasible: never above the true optimum
        assert hi >= ref[t] / r - 1e-12  # bound: never below it
        assert hi - lo <= res.optimal_gap + 1e-12
    auto = merge(classes, method="auto")
    for t, v in zip(grid_pages(auto), auto.optimal, strict=True):
        assert ref[t] / r - 1e-3 - 1e-12 <= v <= ref[t] / r + 1e-12


@pytest.mark.parametrize("seed", range(30))
def test_hull_is_exact_on_concave_curves(seed: int) -> None:
    rng = np.random.default_rng(2000 + seed)
    classes = random_classes(rng, int(rng.integers(2, 5)), concave=True)
    res = merge(classes, method="auto")
    assert res.optimal_method == "hull-exact"
    ref = brute_force(classes, grid_pages(res), [kmax_of(c) for c in classes]) if len(classes) <= 3 else None
    r = sum(c.requests for c in classes)
    if ref is not None:
        for t, v in zip(grid_pages(res), res.optimal, strict=True):
            assert v == pytest.approx(ref[t] / r, abs=1e-12)


def heap_greedy(classes: list[ClassCurve], total: int) -> float:
    """Marginal-gain greedy one page at a time: the textbook exact method for concave values."""
    alloc = [0] * len(classes)
    heap = [(-(page_value(c, 1) - page_value(c, 0)), i) for i, c in enumerate(classes)]
    heapq.heapify(heap)
    for _ in range(total):
        gain, i = heapq.heappop(heap)
        if -gain <= 0:
            break
        alloc[i] += 1
        c = classes[i]
        heapq.heappush(heap, (-(page_value(c, alloc[i] + 1) - page_value(c, alloc[i])), i))
    return sum(page_value(c, k) for c, k in zip(classes, alloc, strict=True))


def test_known_exponential_curves_match_marginal_greedy_exactly() -> None:
    # h_i(x) = 1 - exp(-x / a_i), sampled exactly at page boundaries, so the class value at whole
    # pages is known in closed form and concave; 6 classes, 40 to 120 pages each.
    classes = []
    for i, (chunk, a, r) in enumerate(
        [
            (96, 90_000, 5e5),
            (240, 20_000, 3e5),
            (1184, 9_000, 1e5),
            (4704, 1_500, 4e4),
            (23_168, 400, 1e4),
            (90_000, 60, 2e3),
        ]
    ):
        ipp = PAGE_SIZE // chunk
        npages = 40 + 16 * i
        sizes = ipp * np.arange(1, npages + 1, dtype=float)
        classes.append(
            make_class(
                i + 1, chunk, npages // 2, int(sizes[npages // 2 - 1]), r, sizes, 1 - np.exp(-sizes / a)
            )
        )
    res = merge(classes)
    assert res.optimal_method == "hull-exact"
    r = sum(c.requests for c in classes)
    for t, v in list(zip(grid_pages(res), res.optimal, strict=True))[::7]:
        assert v == pytest.approx(heap_greedy(classes, t) / r, abs=1e-12)
    for c in classes:  # the closed form itself at a few page counts
        k = c.pages
        a = {96: 90_000, 240: 20_000, 1184: 9_000, 4704: 1_500, 23_168: 400, 90_000: 60}[c.chunk_size]
        assert page_value(c, k) == pytest.approx(c.requests * (1 - math.exp(-k * c.items_per_page / a)))


def test_proportional_join_is_exact_on_piecewise_linear_classes() -> None:
    # Class i: h_i(x) = min(x / s_i, 1) * top_i, exactly linear between its points, so the
    # proportional join at fraction f is sum r_i * min(f * N_i / s_i, 1) * top_i / sum r_i.
    specs = [
        (1, 96, 10, 80_000, 120_000, 0.9, 600.0),
        (2, 480, 20, 30_000, 50_000, 0.7, 300.0),
        (3, 9_000, 30, 3_000, 2_500, 0.5, 100.0),
    ]
    classes = []
    for cid, chunk, pages, n, s, top, r in specs:
        # 100 points, one of them exactly at the kink s
        sizes = np.unique(np.sort(np.append(np.linspace(1, 2 * n, 99), s)))
        hits = np.minimum(sizes / s, 1.0) * top
        classes.append(make_class(cid, chunk, pages, n, r, sizes, hits))
    res = merge(classes)
    total_r = sum(x[6] for x in specs)
    cur = sum(x[2] for x in specs)
    assert res.current_pages == cur and res.current_bytes == cur * PAGE_SIZE
    for m, v in zip(res.memory_bytes, res.proportional, strict=True):
        f = m / (cur * PAGE_SIZE)
        want = sum(r * min(f * n / s, 1.0) * top for _, _, _, n, s, top, r in specs) / total_r
        assert v == pytest.approx(want, abs=1e-12)
    want_cur = sum(r * min(n / s, 1.0) * top for _, _, _, n, s, top, r in specs) / total_r
    assert res.model_at_current == pytest.approx(want_cur, abs=1e-12)
    assert res.memory_bytes[-1] == pytest.approx(2 * cur * PAGE_SIZE)


def test_rebalancing_advice_moves_pages_to_the_class_that_gains() -> None:
    # Class 1 saturates after 2 pages but holds 8; class 2 gains steadily up to 10 pages and has 2.
    ipp1 = PAGE_SIZE // 1000
    ipp2 = PAGE_SIZE // 2000
    c1 = make_class(1, 1000, 8, 8 * ipp1, 1000.0, ipp1 * np.array([1.0, 2, 16]), [0.5, 0.9, 0.9])
    c2 = make_class(2, 2000, 2, 2 * ipp2, 1000.0, ipp2 * np.arange(1.0, 21), np.linspace(0.05, 1.0, 20))
    res = merge([c1, c2])
    assert res.allocation == {1: 2, 2: 8}
    assert [(m.from_class, m.to_class, m.pages) for m in res.moves] == [(1, 2, 6)]
    assert res.current_allocation_hit_ratio == pytest.approx((0.9 + 0.1) / 2)
    assert res.optimal_at_current == pytest.approx((0.9 + 0.4) / 2)
    assert res.rebalance_gain == pytest.approx(0.15)


def test_no_advice_when_today_is_already_optimal() -> None:
    ipp = PAGE_SIZE // 1000
    c1 = make_class(1, 1000, 4, 4 * ipp, 10.0, ipp * np.arange(1.0, 9), np.linspace(0.1, 0.8, 8))
    c2 = make_class(2, 1000, 4, 4 * ipp, 10.0, ipp * np.arange(1.0, 9), np.linspace(0.1, 0.8, 8))
    res = merge([c1, c2])
    assert res.moves == []
    assert res.rebalance_gain == pytest.approx(0.0, abs=1e-12)


def test_rebalancing_moves_pair_donors_and_takers() -> None:
    moves = rebalancing_moves({1: 10, 2: 5, 3: 1, 4: 0}, {1: 4, 2: 3, 3: 5, 4: 4})
    got: dict[int, int] = {1: 10, 2: 5, 3: 1, 4: 0}
    for m in moves:
        got[m.from_class] -= m.pages
        got[m.to_class] += m.pages
    assert got == {1: 4, 2: 3, 3: 5, 4: 4}
    assert all(m.pages > 0 for m in moves)


def test_granule_dp_on_a_large_server_is_feasible_and_bounded() -> None:
    rng = np.random.default_rng(7)
    classes = []
    for i in range(20):
        chunk = int(96 * 1.25**i)
        ipp = PAGE_SIZE // chunk
        pages = int(rng.integers(50, 400))
        sizes = np.linspace(1, 2, 100) * pages * ipp
        hits = np.cumsum(rng.uniform(0, 1, 100) ** 4)  # non-concave
        hits = hits / hits[-1] * 0.9
        classes.append(
            make_class(i + 1, chunk, pages, pages * ipp, float(rng.integers(10, 10_000)), sizes, hits)
        )
    res = merge(classes, method="dp", dp_budget=200_000)
    assert res.optimal_method.startswith("dp-granule-")
    assert np.all(res.optimal <= res.optimal_upper + 1e-12)
    assert np.all(np.diff(res.optimal) >= -1e-12)
    assert sum(res.allocation.values()) == res.current_pages
    assert res.optimal_at_current >= res.current_allocation_hit_ratio - 1e-12


def test_class_from_protocol_and_poison_inputs() -> None:
    good = {
        "id": 5,
        "chunk_size": 240,
        "pages": 4,
        "items": 100,
        "requests": 300,
        "curve": {"unit": "items", "current_items": 100, "points": [[50, 0.2], [100, 0.3], [200, 0.4]]},
    }
    c = class_from_protocol(good)
    assert (c.class_id, c.chunk_size, c.pages, c.current_items, c.requests) == (5, 240, 4, 100, 300.0)
    bad_points = dict(good, curve={"current_items": 100, "points": [[50, 0.2], [40, 0.3]]})
    with pytest.raises(MergeInputError, match="strictly increasing"):
        class_from_protocol(bad_points)
    with pytest.raises(MergeInputError, match="non-decreasing"):
        class_from_protocol(dict(good, curve={"current_items": 1, "points": [[1, 0.5], [2, 0.4]]}))
    with pytest.raises(MergeInputError):
        class_from_protocol({"id": 1})
    with pytest.raises(MergeInputError, match="chunk_size"):
        class_from_protocol(dict(good, chunk_size=0))
    with pytest.raises(MergeInputError, match="duplicate"):
        merge([c, c])


def test_no_requests_and_empty_server_do_not_crash() -> None:
    c = make_class(1, 96, 0, 0, 0.0, [10.0, 20.0], [0.0, 0.0])
    res = merge([c])
    assert np.all(res.proportional == 0) and np.all(res.optimal == 0)
    assert res.moves == []


def test_advice_never_empties_a_class_that_holds_items_and_values_each_move() -> None:
    # Class 3 holds a few items on its only page but is never read: the optimum would give its page
    # away, and memcached could then store none of its items.
    ipp1 = PAGE_SIZE // 1000
    ipp2 = PAGE_SIZE // 2000
    ipp3 = PAGE_SIZE // 500_000
    c1 = make_class(1, 1000, 8, 8 * ipp1, 1000.0, ipp1 * np.array([1.0, 2, 16]), [0.5, 0.9, 0.9])
    c2 = make_class(2, 2000, 2, 2 * ipp2, 1000.0, ipp2 * np.arange(1.0, 21), np.linspace(0.05, 1.0, 20))
    c3 = make_class(3, 500_000, 1, 2, 0.0, ipp3 * np.array([1.0, 2.0]), [0.0, 0.0])
    res = merge([c1, c2, c3])
    assert res.allocation[3] == 1
    assert sum(res.allocation.values()) == 11
    assert all(m.from_class != 3 for m in res.moves)
    assert res.moves and all(m.hit_gain is not None and m.hit_gain > 0 for m in res.moves)
    assert sum(m.hit_gain or 0 for m in res.moves) == pytest.approx(res.rebalance_gain, abs=1e-9)
