"""Slab advice that an operator can act on (pure, no database): on a stationary workload it holds
still from window to window, although each window's class curves carry sampling noise; it moves
when the workload does; its moves' gains add up to its headline gain."""

from __future__ import annotations

import copy
from collections.abc import Iterator
from dataclasses import replace

import numpy as np
import pytest

from hitcurve_testing.snapshots import synthetic_classes
from hitcurve_worker.merge import (
    ADVICE_HOLD,
    ClassCurve,
    MergeResult,
    classes_from_rows,
    merge,
    row_from_protocol,
)

WINDOWS = 30
NOISE = 0.004  # per-point noise of a window's class curves (the agent's sampled estimate)


def _windows(seed: int, n: int = WINDOWS, base_seed: int | None = None) -> Iterator[list[ClassCurve]]:
    """n windows of one stationary workload: the same class curves with fresh noise each window."""
    base = synthetic_classes(6, 32, seed=seed if base_seed is None else base_seed, concave=True)
    rng = np.random.default_rng(seed + 1000)
    for _ in range(n):
        cl = copy.deepcopy(base)
        for c in cl:
            pts = c["curve"]["points"]
            noisy = np.array([p[1] for p in pts]) + rng.normal(0, NOISE, len(pts))
            ys = np.clip(np.maximum.accumulate(noisy), 0, 1)
            c["curve"]["points"] = [[p[0], float(y)] for p, y in zip(pts, ys, strict=True)]
            c["requests"] = int(c["requests"] * rng.uniform(0.97, 1.03))
        yield classes_from_rows([row_from_protocol(c) for c in cl])


def _moves(res: MergeResult) -> tuple[tuple[int, int, int], ...]:
    return tuple(sorted((m.from_class, m.to_class, m.pages) for m in res.moves))


def _advice(windows: Iterator[list[ClassCurve]]) -> list[tuple[tuple[int, int, int], ...]]:
    """Each window's advice (its moves), each window keeping the previous one's allocation as the
    worker does (pipeline.Previous.advised)."""
    keep: dict[int, int] | None = None
    out = []
    for classes in windows:
        res = merge(classes, keep=keep)
        keep = res.allocation
        out.append(_moves(res))
        assert sum(m.hit_gain or 0 for m in res.moves) == pytest.approx(res.rebalance_gain, abs=1e-12)
    return out


@pytest.mark.parametrize("seed", range(8))
def test_advice_holds_still_on_a_stationary_workload(seed: int) -> None:
    advice = _advice(_windows(seed))
    assert advice[0], "the workload's allocation is far from its best: there is advice to give"
    changes = sum(a != b for a, b in zip(advice, advice[1:], strict=False))
    assert changes == 0, advice
    # without the previous window's allocation each window's optimum is its own, and it flips
    alone = [_moves(merge(c)) for c in _windows(seed)]
    assert sum(a != b for a, b in zip(alone, alone[1:], strict=False)) > WINDOWS // 3


def test_advice_follows_a_workload_that_changes() -> None:
    """Ten windows of one workload, then the class the advice gives the most pages is read 100x
    less: the advice changes in that first window (the new optimum is better by far more than
    the hold) and takes pages from that class."""
    keep: dict[int, int] | None = None
    for classes in _windows(1, 10):
        keep = merge(classes, keep=keep).allocation
    assert keep is not None
    big = max(keep, key=lambda c: keep[c])
    changed = [replace(c, requests=c.requests / 100 if c.class_id == big else c.requests) for c in classes]
    res = merge(changed, keep=keep)
    assert res.allocation != keep and res.allocation[big] < keep[big]
    assert res.rebalance_gain >= merge(changed).rebalance_gain - ADVICE_HOLD


def test_no_advice_below_the_smallest_gain_worth_a_move() -> None:
    classes = next(_windows(3, 1))
    res = merge(classes)
    at_best = [replace(c, pages=res.allocation[c.class_id]) for c in classes]
    again = merge(at_best)
    assert again.moves == [] and again.rebalance_gain == 0.0
