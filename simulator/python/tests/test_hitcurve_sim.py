"""Tests of the hitcurve_sim extension: the binding, not the policies (the C tests cover
those). Expected values come from the exact LRU reference, from hand-worked sequences, or
from equivalences (the same requests given in different container types)."""
import array
import random
import threading
import time

import hitcurve_sim as hs
import numpy as np
import pytest

from hitcurve_testing import workloads

ALL = ["lru", "fifo", "clock", "gclock", "nbq-clock", "baglru", "gdwheel", "mcslru",
       "clockpro", "arc", "s3fifo", "sieve", "twoq", "lfu", "gdsf", "opt",
       "lirs", "wtinylfu", "lhd", "mlclock", "extstore"]


def zipf_keys(n, nkeys, alpha, seed):
    # the one Zipf workload of the Python tests (hitcurve_testing), as an array of 64-bit keys
    return array.array("Q", workloads.zipf_keys(nkeys, n, alpha, seed).tolist())


@pytest.fixture(scope="module")
def keys():
    return zipf_keys(120_000, 20_000, 0.9, 1)


def test_policies_listed():
    names = [n for n, _ in hs.policies()]
    assert names == ALL


def test_lru_equals_exact_curve(keys):
    sizes = [10, 100, 1000, 5000, 20000]
    exact = {r["size"]: r["hits"] for r in hs.exact_lru(keys, sizes)}
    for r in hs.simulate(keys, ["lru"], sizes):
        assert r["hits"] == exact[r["size"]]
        assert r["requests"] == len(keys)


def test_result_fields_match_cli_contract(keys):
    res = hs.simulate(keys, "lru,arc", [100, 200])
    assert [(r["policy"], r["size"]) for r in res] == [
        ("lru", 100), ("lru", 200), ("arc", 100), ("arc", 200)]
    for r in res:
        for f in ("policy", "size", "hit_ratio", "byte_hit_ratio", "requests", "seconds",
                  "miss_cost_total", "miss_cost_p99", "evictions", "sample_rate"):
            assert f in r
        assert 0.0 <= r["hit_ratio"] <= 1.0
        assert r["hits"] == round(r["hit_ratio"] * r["requests"])


def test_input_container_types_agree(keys):
    small = keys[:20000]
    want = hs.simulate(small, ["clock"], [500])[0]["hits"]
    assert hs.simulate(small.tobytes(), ["clock"], [500])[0]["hits"] == want
    assert hs.simulate(memoryview(small), ["clock"], [500])[0]["hits"] == want
    assert hs.simulate(list(small), ["clock"], [500])[0]["hits"] == want
    assert hs.simulate(array.array("q", small.tobytes()), ["clock"], [500])[0]["hits"] == want
    sizes32 = array.array("I", [100] * len(small))
    sizes64 = array.array("Q", [100] * len(small))
    a = hs.simulate(small, ["lru"], [50_000], object_sizes=sizes32, unit="bytes")[0]
    b = hs.simulate(small, ["lru"], [50_000], object_sizes=sizes64, unit="bytes")[0]
    c = hs.simulate(small, ["lru"], [500], unit="items")[0]
    assert a["hits"] == b["hits"] == c["hits"]


def test_all_policies_run_in_bytes_and_slab_mode(keys):
    sizes = array.array("I", (50 + (k % 3000) for k in keys))
    res = hs.simulate(keys, ALL, [1 << 20, 4 << 20], object_sizes=sizes, unit="bytes", slab=True)
    assert len(res) == 2 * len(ALL)
    for r in res:
        assert 0.0 < r["hit_ratio"] < 1.0, r
        assert 0.0 < r["byte_hit_ratio"] < 1.0, r


def test_costs_and_byte_hit_ratio_hand_worked():
    keys = array.array("Q", [1, 2, 1, 2, 1])
    res = hs.simulate(keys, ["lru"], [10_000], unit="bytes",
                      object_sizes=array.array("I", [100, 900, 100, 900, 100]),
                      costs=array.array("d", [5, 50, 5, 50, 5]))[0]
    assert res["hits"] == 3
    assert res["byte_hit_ratio"] == pytest.approx(1100 / 2100)
    assert res["miss_cost_total"] == 55
    assert res["miss_cost_p99_misses"] == 50


def test_ops_semantics():
    # SET 1, GET 1 (hit), DELETE 1, GET 1 (miss, refilled), GET 1 (hit)
    keys = array.array("Q", [1, 1, 1, 1, 1])
    ops = bytes([hs.SET, hs.GET, hs.DELETE, hs.GET, hs.GET])
    r = hs.simulate(keys, ["lru"], [10], ops=ops)[0]
    assert (r["requests"], r["hits"]) == (3, 2)
    r = hs.simulate(keys[:2], ["lru"], [10], fill_on_miss=False)[0]
    assert r["hits"] == 0   # nothing is ever inserted


def test_params_dict_and_string_agree(keys):
    a = hs.simulate(keys, ["gclock"], [1000], params="gclock.k=4")[0]
    b = hs.simulate(keys, ["gclock"], [1000], params={"gclock": {"k": 4}})[0]
    c = hs.simulate(keys, ["gclock"], [1000], params={"gclock.k": 4})[0]
    d = hs.simulate(keys, ["gclock"], [1000])[0]
    assert a["hits"] == b["hits"] == c["hits"]
    assert a["hits"] != d["hits"]


def test_gdwheel_saves_recompute_cost():
    rng = random.Random(3)
    nkeys = 5000
    kc = [rng.choice([rng.uniform(10, 30)] * 16 + [rng.uniform(120, 180)] * 3 + [rng.uniform(350, 450)])
          for _ in range(nkeys)]
    keys = zipf_keys(100_000, nkeys, 0.99, 4)
    rank = {int(k): r for r, k in enumerate(workloads.key_of_rank(np.arange(nkeys)))}
    costs = array.array("d", (kc[rank[k]] for k in keys))
    lru, gd = hs.simulate(keys, ["lru", "gdwheel"], [3000], costs=costs)
    assert gd["miss_cost_total"] < 0.8 * lru["miss_cost_total"]
    assert abs(gd["hit_ratio"] - lru["hit_ratio"]) < 0.03


def test_miniature_simulation(keys):
    full = hs.simulate(keys, ["lru"], [4000])[0]
    mini = hs.simulate(keys, ["lru"], [4000], sample_rate=0.25)[0]
    assert mini["simulated_size"] == 1000
    assert mini["requests"] < full["requests"]
    # one sample of a skewed 20K-key workload is noisy (the hottest keys are in or out);
    # over independent salts the miniature estimate is unbiased
    runs = [hs.simulate(keys, ["lru"], [4000], sample_rate=0.25, salt=s)[0]["hit_ratio"]
            for s in range(8)]
    assert abs(sum(runs) / len(runs) - full["hit_ratio"]) < 0.01
    assert len(set(runs)) > 1   # the salt really changes the sample
    raw = hs.simulate(keys, ["lru"], [4000], sample_rate=0.25, sample_adjust=False)[0]
    assert raw["hit_ratio"] == raw["hit_ratio_unadjusted"]
    assert mini["expected_requests"] == pytest.approx(0.25 * len(keys))
    assert hs.sampled(12345, 1.0) is True


def test_errors_are_clear(keys):
    with pytest.raises(ValueError, match="unknown policy"):
        hs.simulate(keys, ["nosuch"], [10])
    with pytest.raises(ValueError, match="as many entries"):
        hs.simulate(keys, ["lru"], [10], costs=array.array("d", [1.0]))
    with pytest.raises(ValueError, match="unit"):
        hs.simulate(keys, ["lru"], [10], unit="pages")
    with pytest.raises(ValueError, match="sample_rate"):
        hs.simulate(keys, ["lru"], [10], sample_rate=0)
    with pytest.raises(ValueError, match="sizes"):
        hs.simulate(keys, ["lru"], [0])
    with pytest.raises(ValueError, match="multiple of 8"):
        hs.simulate(b"abc", ["lru"], [10])
    with pytest.raises(ValueError):
        hs.simulate(keys[:3], ["lru"], [10], ops=bytes([0, 1, 9]))
    with pytest.raises(ValueError, match="slab"):
        hs.simulate(keys, ["lru"], [10], slab=True)


def test_gil_released_during_simulation():
    big = zipf_keys(400_000, 100_000, 0.8, 9)
    window = {}

    def work():
        window["start"] = time.monotonic()
        hs.simulate(big, ["lru", "arc", "clockpro", "mcslru"], [1000, 10000, 50000], threads=1)
        window["end"] = time.monotonic()

    t = threading.Thread(target=work)
    ticks = []
    t.start()
    while t.is_alive():
        ticks.append(time.monotonic())
        time.sleep(0.001)
    t.join()
    inside = [x for x in ticks if window["start"] < x < window["end"]]
    # with the GIL held the main thread could not tick at all while the C code ran
    assert window["end"] - window["start"] > 0.05
    assert len(inside) >= 3
