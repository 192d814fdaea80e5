"""User policy simulations on the agent's sampled trace report what the full trace would give.

The agent samples keys spatially at rate R; the worker simulates a cache of S bytes at S*R on the
sample (presampled: pages shrink too) and applies SHARDS_adj with the read ratio. Reference: the
same policy simulated on the whole, unsampled trace. Before the presampled option, mcslru on a
sample gave every slab class a whole 1 MiB page and answered the same at every size."""

from __future__ import annotations

import numpy as np
import pytest

from hitcurve_testing.workloads import zipf_keys
from hitcurve_worker.simulation_period import SIM_WARMUP
from hitcurve_worker.simulation_tasks import adjust, simulate
from hitcurve_worker.trace_data import Trace, sim_module

KEYS = 200_000
REQUESTS = 1_200_000
VALUE = 200
R = 0.05


def _zipf_keys(seed: int) -> np.ndarray:
    return zipf_keys(KEYS, REQUESTS, 0.9, seed)


def _sampled(keys: np.ndarray, rate: float) -> np.ndarray:
    h = (keys * np.uint64(0xBF58476D1CE4E5B9)) >> np.uint64(40)
    return (h.astype(np.float64) / float(1 << 24)) < rate


@pytest.mark.parametrize("policy", ["mcslru", "lru"])
def test_sampled_simulation_matches_the_full_trace(policy: str) -> None:
    keys = _zipf_keys(7)
    sizes_b = [2 << 20, 4 << 20, 8 << 20, 16 << 20]
    # the reference counts the same requests: the first SIM_WARMUP of them only warm the caches
    full = sim_module().simulate(
        keys,
        [policy],
        sizes_b,
        object_sizes=np.full(len(keys), VALUE, dtype=np.uint32),
        unit="bytes",
        warmup=SIM_WARMUP,
    )
    take = _sampled(keys, R)
    n = int(take.sum())
    trace = Trace(
        keys=keys[take],
        ops=np.zeros(n, dtype=np.uint8),  # all GETs (demand fill)
        sizes=np.full(n, VALUE, dtype=np.uint32),
        costs=np.ones(n),
        sample_rate=R,
        chunks=1,
        read_ratio=n / (R * len(keys)),
    )
    got = simulate(trace, policy, sizes_b)
    want = [r["hit_ratio"] for r in full]
    assert [r["size_bytes"] for r in got] == sizes_b
    err = [abs(g["hit_ratio"] - w) * 100 for g, w in zip(got, want, strict=True)]
    assert max(err) < 1.0, f"{policy}: sampled {[round(g['hit_ratio'], 4) for g in got]} vs full {want}"
    # and the answer moves with the size, as the full trace's does
    assert got[-1]["hit_ratio"] - got[0]["hit_ratio"] > 0.5 * (want[-1] - want[0])


def test_adjust_is_shards_adj() -> None:
    # 1000 sampled reads, 100 misses; the sample should have held 1250 reads: hit ratio 1 - 100/1250
    assert adjust(0.9, 1000 / 1250) == pytest.approx(1 - 100 / 1250)
    assert adjust(0.9, None) == 0.9
    assert adjust(0.1, 5.0) == 0.0  # clipped


def _look_aside_columns(keys: np.ndarray, cache_items: int) -> dict[str, np.ndarray]:
    """What the agent records for a look-aside client of an LRU memcached of `cache_items`: each
    read a hit (1) or a miss (2), each miss followed by the client's refill SET (3)."""
    from collections import OrderedDict

    lru: OrderedDict[int, None] = OrderedDict()
    ks: list[int] = []
    ops: list[int] = []
    for k in keys.tolist():
        if k in lru:
            lru.move_to_end(k)
            ks.append(k)
            ops.append(1)
            continue
        ks += [k, k]
        ops += [2, 3]
        lru[k] = None
        if len(lru) > cache_items:
            lru.popitem(last=False)
    n = len(ks)
    return {
        "ts_us": np.arange(n, dtype=np.int64),
        "key": np.asarray(ks, dtype=np.uint64),
        "op": np.asarray(ops, dtype=np.uint8),
        "size": np.where(np.asarray(ops) == 3, VALUE, 0).astype(np.int64),
        "cost_us": np.full(n, np.nan),
    }


def test_refills_replay_as_the_demand_stream_above_today() -> None:
    """A refill SET follows a miss at today's size; replayed at a larger size where that read hit,
    it would replace a resident item and reset memcached's segmented-LRU state (mcslru then read
    like LRU above today's memory: scan mix at 4x, 0.679 against LRU's 0.678 and real memcached's
    0.696). assemble leaves them out, so the agent's trace replays as the reads themselves."""
    from hitcurve_worker.trace_data import assemble, refills

    rng = np.random.default_rng(3)
    zipf = zipf_keys(20_000, 60_000, 0.9, 5)
    loop = np.uint64(1 << 40) + np.arange(60_000, dtype=np.uint64) % np.uint64(3_000)
    keys = np.where(rng.random(60_000) < 0.2, loop, zipf).astype(np.uint64)
    cols = _look_aside_columns(keys, 1_500)
    trace = assemble([cols], [1.0])
    assert trace.refills_dropped == int(np.count_nonzero(cols["op"] == 3))
    assert np.array_equal(trace.keys, keys) and not trace.ops.any()
    # a SET that is not a refill (a blind update, a store after a hit) stays
    assert refills(np.asarray([5, 5, 5, 6], dtype=np.uint64), np.asarray([1, 3, 2, 3])).tolist() == [
        False,
        False,
        False,
        False,
    ]
    hs = sim_module()
    demand = hs.simulate(keys, ["mcslru"], [6_000], unit="items")
    replay = hs.simulate(trace.keys, ["mcslru"], [6_000], ops=trace.ops.tobytes(), unit="items")
    assert replay[0]["hit_ratio"] == demand[0]["hit_ratio"]
