"""The pipeline's vectorised steps against the straightforward forms they
replaced, on random snapshots: bit for bit where the operations per element are the same, and
against an independent evaluation of the class curves within 1e-12 (pure, no database)."""

from __future__ import annotations

import random
from typing import Any

import numpy as np
import pytest

from hitcurve_testing.snapshots import synthetic_classes
from hitcurve_worker import policy_correction as pc
from hitcurve_worker.merge import PAGE_SIZE, ClassCurve, _PageFns, classes_from_rows, merge, row_from_protocol


def _classes(seed: int) -> list[ClassCurve]:
    r = random.Random(seed)
    pages = r.choice((64, 256, 1024, 4096))
    protocol = synthetic_classes(
        r.randint(1, 40 if pages > 64 else 20), pages, seed=seed, concave=r.random() < 0.3
    )
    for c in protocol:
        if r.random() < 0.1:
            c["requests"] = 0  # a class without reads
        if r.random() < 0.1:
            c["curve"]["current_items"] = 0  # ... or without items
    if r.random() < 0.2:  # curves of different lengths (an unusual snapshot)
        pts = protocol[0]["curve"]["points"]
        protocol[0]["curve"]["points"] = pts[: r.randint(1, len(pts))]
    return classes_from_rows([row_from_protocol(c) for c in protocol])


# The edit loop (make check) runs the first EDIT_LOOP_SEEDS of each sweep: between them they draw
# every case _classes() makes (each page size, a class without reads or items, a short curve, concave
# curves, a single class, a merge without moves, one without a join); the other seeds are `slow`.
EDIT_LOOP_SEEDS = 20


def seeds(n: int) -> list[int | Any]:
    return [s if s < EDIT_LOOP_SEEDS else pytest.param(s, marks=pytest.mark.slow) for s in range(n)]


def taper_reference(memory: np.ndarray, current_bytes: float, classes: list[ClassCurve]) -> np.ndarray:
    """policy_correction.taper as it was before the vectorised rewrite, one class at a time."""
    memory = np.asarray(memory, dtype=np.float64)
    if current_bytes <= 0:
        return np.zeros_like(memory)
    rel = memory / current_bytes
    num = np.zeros_like(memory)
    den = 0.0
    for c in classes:
        if c.requests <= 0:
            continue
        den += c.requests
        n = float(c.current_items)
        if n <= 0:
            continue
        below = c.sizes[c.sizes < n * (1 - 1e-9)]
        delta = 1.0 - float(below[-1]) / n if len(below) else 1.0
        num += c.requests * np.clip((1.0 - rel) / max(delta, 1e-9), 0.0, 1.0)
    return num / den if den > 0 else np.zeros_like(memory)


@pytest.mark.parametrize("seed", seeds(200))
def test_taper_equals_its_per_class_reference(seed: int) -> None:
    classes = _classes(seed)
    res = merge(classes)
    r = random.Random(seed)
    memory = np.concatenate((res.memory_bytes, [0.0, r.uniform(0, 4 * res.current_bytes + 1)]))
    for current in (float(res.current_bytes), r.uniform(1.0, 1e10), 0.0):
        got = pc.taper(memory, current, classes)
        want = taper_reference(memory, current, classes)
        assert got.dtype == want.dtype and np.array_equal(got, want)


def _g_independent(c: ClassCurve, pages: int) -> float:
    """r_i h_i(items in k pages), from the class alone (ClassCurve's own interpolation)."""
    max_pages = int(np.ceil(c.sizes[-1] / c.items_per_page - 1e-9)) if c.requests > 0 else 0
    items = c.items_for_pages(min(pages, max_pages))
    return c.requests * float(c.hit_ratio_at(items))


@pytest.mark.parametrize("seed", seeds(150))
def test_each_moves_gain_is_its_two_classes_after_the_moves_above_it(seed: int) -> None:
    classes = _classes(seed)
    res = merge(classes)
    if not res.moves:
        return
    by_id = {c.class_id: c for c in classes}
    state = {c.class_id: c.pages for c in classes}
    norm = res.total_requests if res.total_requests > 0 else 1.0
    for mv in res.moves:
        a, b = state[mv.from_class], state[mv.to_class]
        # from the two classes' curves alone, at the pages the moves above left them
        fc, tc = by_id[mv.from_class], by_id[mv.to_class]
        want = (
            _g_independent(fc, a - mv.pages)
            + _g_independent(tc, b + mv.pages)
            - _g_independent(fc, a)
            - _g_independent(tc, b)
        ) / norm
        assert mv.hit_gain == pytest.approx(want, abs=1e-12)
        state[mv.from_class] -= mv.pages
        state[mv.to_class] += mv.pages
    # the moves lead to the advised allocation, and their gains add up to the advice's gain
    assert {c: p for c, p in state.items()} == res.allocation
    assert sum(m.hit_gain or 0 for m in res.moves) == pytest.approx(res.rebalance_gain, abs=1e-12)


@pytest.mark.parametrize("seed", seeds(50))
def test_page_values_of_all_classes_at_once_equal_each_class_alone(seed: int) -> None:
    """_PageFns' items per page (all classes at once) and g (rows bounded by arithmetic when every
    curve has one width) against each ClassCurve on its own, chunks above a page included."""
    r = random.Random(seed)
    classes = _classes(seed)
    big = [
        ClassCurve(
            1000 + i,
            r.choice((PAGE_SIZE, PAGE_SIZE + 1, 3 * PAGE_SIZE - 7, 5 * PAGE_SIZE)),
            r.randint(1, 40),
            r.randint(1, 10),
            float(r.randint(1, 1000)),
            np.linspace(0.2, 20.0, len(classes[-1].sizes)),
            np.linspace(0.1, 0.9, len(classes[-1].sizes)),
        )
        for i in range(r.randint(0, 3))
    ]
    classes = classes + big
    fns = _PageFns(classes)
    assert fns.ipp.tolist() == [c.items_per_page for c in classes]
    cls = np.array([r.randrange(len(classes)) for _ in range(500)], dtype=np.int64)
    pages = np.array([r.randint(0, 5000) for _ in range(500)], dtype=np.int64)
    got = fns.g(cls, pages)
    want = [_g_independent(classes[c], int(k)) for c, k in zip(cls.tolist(), pages.tolist(), strict=True)]
    assert got.tolist() == pytest.approx(want, abs=1e-9, rel=1e-12)


@pytest.mark.parametrize("seed", seeds(100))
def test_proportional_join_equals_every_class_and_point_spelled_out(seed: int) -> None:
    """The join evaluated class by grid point (broadcast) against every (class, point) pair in
    one flat evaluation, as before: the same floats."""
    classes = _classes(seed)
    res = merge(classes)
    if res.total_requests <= 0 or res.current_pages == 0:
        return  # no join: merge leaves it 0
    fns = _PageFns(classes)
    n, pages = len(classes), res.current_pages
    frac = (res.memory_bytes / PAGE_SIZE).astype(np.int64) / pages
    items = np.array([c.current_items for c in classes], dtype=np.float64)
    flat = fns.hits_at_items(np.repeat(np.arange(n), len(frac)), np.outer(items, frac).ravel())
    assert np.array_equal(res.proportional, (fns.requests @ flat.reshape(n, len(frac))) / res.total_requests)
    now = fns.hits_at_items(np.arange(n), items)
    assert res.model_at_current == float(fns.requests @ now) / res.total_requests
