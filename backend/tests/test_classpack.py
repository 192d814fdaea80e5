"""The packed form of a snapshot's slab classes (hitcurve.ingest.classpack): lossless on what
agents send and on any other float, absent values kept absent, foreign bytes refused, and small
(the reason it exists: one value of a few KB instead of a 1.8 KB row per class). Pure."""

import zlib
from typing import Any

import numpy as np
import pytest

from hitcurve.ingest.classpack import ClassPackError, StoredClass, cost_totals, pack, unpack


def _columns(n: int, **over: list[Any]) -> dict[str, list[Any]]:
    cols: dict[str, list[Any]] = {
        "class_id": list(range(1, n + 1)),
        "chunk_size": [96 * (i + 1) for i in range(n)],
        "pages": [i + 1 for i in range(n)],
        "items": [10_000 * (i + 1) for i in range(n)],
        "evictions": [7 * i for i in range(n)],
        "requests": [2**40 + i for i in range(n)],  # counts past 32 bits
        "current_items": [9_000 * (i + 1) for i in range(n)],
        "cost_count": [None if i % 2 else 100 + i for i in range(n)],
        "cost_mean_us": [None if i % 2 else 3.25 + i for i in range(n)],
        "cost_p50_us": [None] * n,
        "cost_p90_us": [None if i % 2 else 9.5 for i in range(n)],
        "cost_p99_us": [None if i % 2 else 20.0 for i in range(n)],
        "ghost_reach_items": [None if i == 0 else 50_000 * i for i in range(n)],
        "ghost_filters": [None if i == 0 else 4 for i in range(n)],
        "has_ttl": [False] * n,
    }
    cols.update(over)
    return cols


def _agent_curves(n: int, p: int, seed: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Curves as the agent writes them: sizes integers (or thousandths below one item a point),
    hit ratios non-decreasing, rounded to millionths."""
    rng = np.random.default_rng(seed)
    xs, ys = [], []
    for i in range(n):
        step = 0.125 if i == 0 else float(37 * (i + 1))
        xs.append(np.round(step * np.arange(1, p + 1), 3))
        ys.append(np.round(np.minimum(1, np.cumsum(rng.exponential(0.004, p))), 6))
    return np.concatenate(xs), np.concatenate(ys)


def _flat(classes: list[StoredClass], field: str) -> list[float]:
    return [v for c in classes for v in getattr(c, field)]


def test_agent_curves_and_counters_come_back_exactly_and_small() -> None:
    n, p = 28, 100
    xs, ys = _agent_curves(n, p)
    cols = _columns(n)
    packed = pack(cols, xs, ys, p)
    back = unpack(packed)
    assert [c.class_id for c in back] == cols["class_id"]
    assert _flat(back, "sizes_items") == xs.tolist() and _flat(back, "hit_ratios") == ys.tolist()
    for name in cols:
        if name != "has_ttl":
            assert [getattr(c, name) for c in back] == cols[name], name
    assert all(c.ttl_sizes_items is None and c.ttl_hit_ratios is None for c in back)
    # the rows it replaces held two float8[100] per class: 1,648 bytes of curve alone
    assert len(packed) < 0.2 * n * 2 * p * 8, len(packed)


def test_any_float_is_kept_bit_for_bit() -> None:
    """Values off the decimal grids (another sender, a test) are stored as raw doubles."""
    rng = np.random.default_rng(5)
    n, p = 3, 7
    xs = np.sort(rng.random(n * p)) * 1e3 + np.pi
    ys = np.append(rng.random(n * p - 3), [0.1 + 0.2, 1e-300, 5e-324])
    back = unpack(pack(_columns(n), xs, ys, p))
    assert np.array_equal(np.array(_flat(back, "sizes_items")), xs)
    assert np.array_equal(np.array(_flat(back, "hit_ratios")), ys)
    with_nan = ys.copy()
    with_nan[4] = np.nan  # a poison curve the worker must see as it was stored
    again = np.array(_flat(unpack(pack(_columns(n), xs, with_nan, p)), "hit_ratios"))
    assert np.isnan(again[4]) and np.array_equal(np.delete(again, 4), np.delete(with_nan, 4))


def test_ttl_curves_belong_to_the_classes_that_sent_them() -> None:
    n, p = 4, 5
    xs, ys = _agent_curves(n, p)
    tx, ty = _agent_curves(2, p, seed=9)
    back = unpack(pack(_columns(n, has_ttl=[False, True, False, True]), xs, ys, p, tx, ty))
    assert [c.ttl_sizes_items is not None for c in back] == [False, True, False, True]
    assert back[1].ttl_sizes_items == tx[:p].tolist() and back[3].ttl_hit_ratios == ty[p:].tolist()
    with pytest.raises(ValueError, match="TTL-aware curves for 2 classes"):
        pack(_columns(n, has_ttl=[False, True, False, True]), xs, ys, p, tx[:p], ty[:p])


def test_no_classes_and_wrong_shapes() -> None:
    assert unpack(pack(_columns(0), np.zeros(0), np.zeros(0), 100)) == []
    with pytest.raises(ValueError, match="for 2 classes of 3 points"):
        pack(_columns(2), np.zeros(5), np.zeros(6), 3)
    with pytest.raises(ValueError, match="at most 32767 of 65535"):  # the header's u16 fields
        pack(_columns(1), np.zeros(1 << 16), np.zeros(1 << 16), 1 << 16)


def test_foreign_or_damaged_bytes_are_refused() -> None:
    xs, ys = _agent_curves(2, 4)
    good = pack(_columns(2), xs, ys, 4)
    raw = zlib.decompress(good)
    for bad, why in (
        (b"not zlib", "not a packed class set"),
        (zlib.compress(b"XXXX" + raw[4:]), "magic"),
        (zlib.compress(raw[:-3]), "truncated"),
        (zlib.compress(raw + b"\0"), "trailing"),
        (zlib.compress(raw[:2]), "truncated header"),
    ):
        with pytest.raises(ClassPackError, match=why):
            unpack(bad)


def test_cost_totals_count_only_timed_classes() -> None:
    xs, ys = _agent_curves(3, 2)
    cols = _columns(3, cost_count=[10, 0, 4], cost_mean_us=[2.0, 5.0, None])
    assert cost_totals(unpack(pack(cols, xs, ys, 2))) == (10, 20.0)
    assert cost_totals(unpack(pack(_columns(1, cost_count=[0], cost_mean_us=[1.0]), xs[:2], ys[:2], 2))) == (
        None,
        None,
    )
