"""The merged curve against an exact simulation of a slab-partitioned LRU cache.

The workload: 5 slab classes with Zipf key popularity. Per-class curves come from exact LRU
stack distances (Mattson, via a Fenwick tree), computed on each class's own requests, the way the
agent's ROUNDER estimates them. The cache: memcached without automove, each class an LRU of
whole-page capacity, pages handed out on demand until memory is full (an OrderedDict per class).

* With a fixed page allocation, per-class LRU hits are exactly the stack-distance curve, so the
  optimal allocation's predicted hit ratio must equal the simulated one exactly.
* With on-demand page assignment at other sizes, the proportional join is a model; its error is
  printed (run pytest with -s to see the table) and must stay moderate.
"""

from __future__ import annotations

from collections import OrderedDict

import numpy as np
import pytest

from hitcurve_testing.workloads import exact_lru_hits, stack_distances
from hitcurve_worker.merge import PAGE_SIZE, ClassCurve, merge

CHUNKS = [8192, 16384, 32768, 65536, 131072]  # 128, 64, 32, 16, 8 items per page
UNIVERSE = [6000, 3000, 1500, 800, 400]
WEIGHTS = [0.35, 0.25, 0.2, 0.12, 0.08]
N_REQUESTS = 60_000


def workload(seed: int = 3) -> list[tuple[int, int]]:
    rng = np.random.default_rng(seed)
    cls = rng.choice(len(CHUNKS), size=N_REQUESTS, p=WEIGHTS)
    out = []
    for c in cls:
        u = UNIVERSE[c]
        rank = min(int(rng.zipf(1.3)), u) - 1  # heavy head, capped tail
        key = int(rng.integers(0, u)) if rng.random() < 0.3 else rank  # plus a uniform background
        out.append((int(c), key))
    return out


def simulate(
    trace: list[tuple[int, int]], total_pages: int | None = None, fixed_pages: list[int] | None = None
) -> tuple[float, list[int]]:
    """Slab-partitioned LRU: hit ratio, and the pages each class ended with."""
    ipp = [PAGE_SIZE // c for c in CHUNKS]
    pages = list(fixed_pages) if fixed_pages is not None else [0] * len(CHUNKS)
    free = 0 if fixed_pages is not None else int(total_pages or 0)
    lrus: list[OrderedDict[int, None]] = [OrderedDict() for _ in CHUNKS]
    hits = 0
    for c, k in trace:
        lru = lrus[c]
        if k in lru:
            hits += 1
            lru.move_to_end(k)
            continue
        if len(lru) >= pages[c] * ipp[c]:
            if free > 0:
                free -= 1
                pages[c] += 1
            elif pages[c] == 0:
                continue  # no memory for this class at all: the set fails
            else:
                lru.popitem(last=False)
        lru[k] = None
    return hits / len(trace), pages


def class_curves(trace: list[tuple[int, int]], pages_now: list[int], at_pages: bool) -> list[ClassCurve]:
    out = []
    for c, chunk in enumerate(CHUNKS):
        ipp = PAGE_SIZE // chunk
        d = np.array(stack_distances([k for cc, k in trace if cc == c]))
        n_now = pages_now[c] * ipp
        if at_pages:  # points exactly at whole pages: 1..kmax pages
            kmax = min(100, max(2 * pages_now[c], int(np.ceil(UNIVERSE[c] / ipp))))
            sizes = ipp * np.arange(1, kmax + 1, dtype=float)
        else:  # the agent's way: 100 points over (0, 2N]
            sizes = np.linspace(2 * n_now / 100, 2 * n_now, 100)
        hits = np.array([(d <= s).sum() for s in sizes]) / len(d)
        out.append(ClassCurve(c + 1, chunk, pages_now[c], n_now, float(len(d)), sizes, hits.astype(float)))
    return out


@pytest.fixture(scope="module")
def trace() -> list[tuple[int, int]]:
    return workload()


def test_stack_distance_reference_agrees_with_lru_simulation(trace: list[tuple[int, int]]) -> None:
    keys = [k for c, k in trace if c == 0][:5000]
    d = np.array(stack_distances(keys))
    for cap in (10, 100, 1000):
        hits, _ = exact_lru_hits(keys, cap)
        assert hits == int((d <= cap).sum())


def test_optimal_allocation_equals_simulated_partitioned_lru_exactly(trace: list[tuple[int, int]]) -> None:
    _, pages_now = simulate(trace, total_pages=60)
    classes = class_curves(trace, pages_now, at_pages=True)
    res = merge(classes, method="dp")
    alloc = [res.allocation[c + 1] for c in range(len(CHUNKS))]
    assert sum(alloc) == sum(pages_now) == 60
    sim_opt, _ = simulate(trace, fixed_pages=alloc)
    sim_today, _ = simulate(trace, fixed_pages=pages_now)
    assert res.optimal_at_current == pytest.approx(sim_opt, abs=1e-12)
    assert res.current_allocation_hit_ratio == pytest.approx(sim_today, abs=1e-12)
    assert sim_opt >= sim_today
    # and the optimum at other totals, replayed with their own allocations, is what was predicted
    print(
        f"\noptimal allocation at 60 pages: {alloc} (on-demand gave {pages_now}); "
        f"hit ratio {sim_opt:.4f} vs {sim_today:.4f} (+{(sim_opt - sim_today) * 100:.2f} pp)"
    )


def test_proportional_merge_error_against_on_demand_slab_cache(trace: list[tuple[int, int]]) -> None:
    p0 = 60
    sim_now, pages_now = simulate(trace, total_pages=p0)
    classes = class_curves(trace, pages_now, at_pages=False)
    res = merge(classes)
    rows = []
    for frac in (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 2.0):
        p = int(round(p0 * frac))
        sim, _ = simulate(trace, total_pages=p)
        prop = float(np.interp(p * PAGE_SIZE, res.memory_bytes, res.proportional))
        opt = float(np.interp(p * PAGE_SIZE, res.memory_bytes, res.optimal))
        rows.append((p, sim, prop, opt))
    print("\npages  simulated  proportional  (err pp)  optimal")
    for p, sim, prop, opt in rows:
        print(f"{p:5d}  {sim:9.4f}  {prop:12.4f}  {100 * (prop - sim):+8.2f}  {opt:7.4f}")
    errs = [abs(prop - sim) for _, sim, prop, _ in rows]
    mae = 100 * float(np.mean(errs))
    print(f"proportional join MAE vs on-demand slab LRU: {mae:.2f} pp (max {100 * max(errs):.2f} pp)")
    # at today's size the join is the stack-distance curve at today's capacities: exact
    assert rows[3][2] == pytest.approx(sim_now, abs=0.005)
    assert mae < 3.0
    # the optimum is an upper envelope of what the same memory can do, inside the curves' domain
    # (each class's curve ends at 2N; at 2x today the optimum cannot place pages beyond it)
    assert all(opt >= sim - 0.005 for p, sim, _, opt in rows if p < 2 * p0)
