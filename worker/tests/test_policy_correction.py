"""Policy correction (memcached's segmented LRU versus the LRU model below today's memory).

Pure parts first (the taper, the formula against a synthetic case with a known answer, the
trace requirements), then the database path with real PostgreSQL: trace chunks uploaded through
the agent API -> correction computed and stored -> a processed snapshot carries it, checked
against an independent reference (exact Mattson LRU and a full, unsampled mcslru simulation of
the same trace).
"""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select
from worker_helpers import Org, upload

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import PolicyCorrection, ServerCurve, Snapshot
from hitcurve_testing.snapshots import envelope
from hitcurve_testing.workloads import zipf_keys
from hitcurve_worker import policy_correction as pc
from hitcurve_worker.calibrate import calibrate, curve_at
from hitcurve_worker.merge import ClassCurve, merge
from hitcurve_worker.trace_data import Trace, sim_module

MIB = float(1 << 20)


def _class(cid: int, n: float, sizes: np.ndarray, hits: np.ndarray, requests: float) -> ClassCurve:
    return ClassCurve(cid, 4096, int(round(n / 256)), int(n), requests, sizes, hits)


# --- pure ------------------------------------------------------------------------------------


def test_taper_is_one_below_the_last_lru_point_and_zero_from_today() -> None:
    n = 10240.0
    sizes = np.arange(1, 101) * 2 * n / 100  # a point every 0.02 N: the last below N is 0.98 N
    c = _class(1, n, sizes, np.linspace(0.01, 0.9, 100), 1.0)
    cur = 40 * MIB
    mem = np.array([0.5, 0.97, 0.98, 0.99, 1.0, 1.5]) * cur
    assert pc.taper(mem, cur, [c]) == pytest.approx([1, 1, 1, 0.5, 0, 0])
    # two classes weighted by reads: one with points every 0.1 N (taper from 0.9 N), one idle
    coarse = _class(2, n, np.arange(1, 21) * 0.1 * n, np.linspace(0.05, 0.9, 20), 3.0)
    idle = _class(3, 0, np.array([1.0, 2.0]), np.array([0.1, 0.2]), 1.0)  # reads, but no items
    w = pc.taper(np.array([0.5, 0.95, 0.99]) * cur, cur, [c, coarse, idle])
    # 0.95 C: class 1 full (1), class 2 half way (0.5); class 3 contributes 0 with weight 1
    assert w == pytest.approx([(1 + 3) / 5, (1 + 3 * 0.5) / 5, (0.5 + 3 * 0.1) / 5])


def test_formula_recovers_a_known_policy_curve() -> None:
    """Synthetic case with a known answer: memcached's true curve T = L + G (L an LRU curve, G a
    known gap); the agent reports L below N and T from N up (resident hits and a ghost fed by
    memcached's evictions). Corrected with a correction holding G, the curve is T below N."""
    n = 10240.0
    cur = 40 * MIB  # 40 pages of 256 items
    x_items = np.arange(1, 101) * 2 * n / 100

    def lru(x: np.ndarray) -> np.ndarray:
        return 0.85 * (1 - (1 + x / n) ** -1.5)

    def gap(x: np.ndarray) -> np.ndarray:  # + 3 pp at small sizes, falling to 1 pp at N
        return 0.01 + 0.02 * np.exp(-3 * x / n)

    def true(x: np.ndarray) -> np.ndarray:
        return lru(x) + gap(x)

    agent = np.where(x_items < n - 1e-6, lru(x_items), true(x_items))
    cls = _class(1, n, x_items, agent, 1000.0)
    res = merge([cls])
    assert res.current_bytes == cur
    grid_items = res.memory_bytes / cur * n
    sim = np.linspace(0.05, 2.0, 40) * cur  # the simulated sizes (bytes)
    corr = pc.Correction(
        sim, lru(sim / cur * n), true(sim / cur * n), 50_000, 90_000, 0.01, cur, n, warmup=0.5
    )
    out = pc.apply(res.memory_bytes, res.proportional, res.current_bytes, [cls], corr)
    assert out.applied and out.info["sampled_gets"] == 50_000
    below = (res.memory_bytes >= sim[0]) & (res.memory_bytes <= 0.98 * cur)
    # linear interpolation of G between the simulated sizes is the only approximation (below the
    # smallest simulated size G is interpolated from 0, as both policies hit nothing at 0 memory)
    assert np.max(np.abs(out.curve[below] - true(grid_items[below]))) < 2e-4
    at_or_above = res.memory_bytes >= cur
    assert np.array_equal(out.curve[at_or_above], res.proportional[at_or_above])
    # the uncorrected model was off by the whole gap there
    assert np.max(np.abs(res.proportional[below] - true(grid_items[below]))) > 0.02
    # calibrating through T(N) then changes nothing (the model already passes through it)
    cal = calibrate(res.memory_bytes, out.curve, cur, float(true(np.array([n]))[0]), res.valid_max_bytes)
    assert cal.calibrated is not None and cal.scale == pytest.approx(1.0, abs=1e-9)
    assert np.max(np.abs(cal.calibrated - out.curve)) < 1e-9


def test_without_a_usable_correction_the_model_is_returned_unchanged() -> None:
    n = 10240.0
    cur = 40 * MIB
    x = np.arange(1, 101) * 2 * n / 100
    cls = _class(1, n, x, np.linspace(0.01, 0.9, 100), 10.0)
    res = merge([cls])
    none = pc.apply(res.memory_bytes, res.proportional, cur, [cls], None, "no trace")
    assert none.curve is res.proportional and not none.applied and none.info["reason"] == "no trace"
    small = pc.Correction(
        np.array([0.25, 0.5]) * cur,
        np.array([0.2, 0.3]),
        np.array([0.25, 0.33]),
        30_000,
        60_000,
        0.01,
        cur,
        n,
    )
    short = pc.apply(res.memory_bytes, res.proportional, cur, [cls], small)
    assert short.curve is res.proportional and not short.applied
    assert "less memory" in short.info["reason"]


def test_compute_needs_enough_sampled_reads_and_keeps_the_newest_requests() -> None:
    hs = sim_module()
    keys = zipf_keys(20_000, 30_000, 0.9, seed=3)
    ops = np.full(len(keys), hs.GET, dtype=np.uint8)
    trace = Trace(keys, ops, np.full(len(keys), 100, np.uint32), np.ones(len(keys)), 0.1, 1)
    with pytest.raises(pc.InsufficientTrace, match="20000 needed"):
        pc.compute(trace, 40 * MIB, 10240)
    with pytest.raises(pc.InsufficientTrace, match="no items"):
        pc.compute(trace, 40 * MIB, 0)
    got = pc.compute(trace, 40 * MIB, 10240, min_gets=1000, max_requests=20_000)
    assert got.sampled_requests == 20_000 and any("most recent 20000" in n for n in got.notes)
    # a simulated cache of k items stands for k / R items of C / N bytes each
    k = np.round(np.asarray(pc.FACTORS) * 10240 * 0.1)
    assert got.sizes_bytes == pytest.approx(k / 0.1 * (40 * MIB / 10240))
    assert np.all(np.diff(got.sizes_bytes) > 0) and len(got.lru) == len(got.sizes_bytes)


def test_read_ratio_prorates_snapshot_windows_and_refuses_gaps() -> None:
    # two 60 s snapshot windows with 60k and 120k reads; chunks at R = 0.01 over [30 s, 90 s)
    windows = [(0.0, 60.0, 60_000.0), (60.0, 120.0, 120_000.0)]
    expected = 0.01 * (60_000 / 2 + 120_000 / 2)  # half of each window
    r, why = pc.read_ratio([(30.0, 60.0, 0.01, 300), (60.0, 90.0, 0.01, 750)], windows)
    assert why == "" and r == pytest.approx(1050 / expected)
    r, why = pc.read_ratio([(30.0, 200.0, 0.01, 900)], windows)  # 80 of 170 s not covered
    assert r is None and "do not cover" in why
    r, why = pc.read_ratio([(0.0, 120.0, 0.01, 9000)], windows)  # 5 x the expected sample
    assert r is None and "implausible" in why


def _reads(n_keys: int, n: int, seed: int) -> Trace:
    """A Zipf 0.9 read stream as a sampled trace at rate 0.1."""
    keys = zipf_keys(n_keys, n, 0.9, seed=seed)
    ones = np.ones(len(keys))
    return Trace(keys, np.full(len(keys), sim_module().GET, np.uint8), ones.astype(np.uint32), ones, 0.1, 1)


def test_sample_adjust_scales_the_gap() -> None:
    trace = _reads(20_000, 60_000, 5)
    plain = pc.compute(trace, 40 * MIB, 10240, min_gets=1000)
    adj = pc.compute(trace, 40 * MIB, 10240, min_gets=1000, sample_adjust=0.8)
    assert adj.gap == pytest.approx(0.8 * plain.gap, abs=1e-12)
    assert adj.lru == pytest.approx(1 - 0.8 * (1 - plain.lru)) and adj.sample_adjust == 0.8


def _lifted(cur: float, n: float) -> pc.Correction:
    """A correction whose ghost view reads memcached's policy 1 pp low at 1.5 C, 2 pp at 2 C and
    above (equal to it up to C, as compute stores it)."""
    f = np.array([0.5, 1.0, 1.5, 2.0, 3.0])
    policy = np.array([0.40, 0.50, 0.56, 0.60, 0.64])
    ghost = policy - np.array([0.0, 0.0, 0.01, 0.02, 0.02])
    return pc.Correction(f * cur, policy - 0.01, policy, 50_000, 90_000, 0.01, cur, n, ghost_view=ghost)


def test_lift_is_zero_at_today_full_to_lift_full_and_tapered_to_lift_end() -> None:
    cur, n = 40 * MIB, 10240.0
    corr = _lifted(cur, n)
    # (the grid: 1.5 C, 2 C and 3 C on the simulated sizes, 1.25 C half way from C's 0 to 1 pp)
    assert (pc.LIFT_FULL, pc.LIFT_END) == (3.0, 4.0)
    rel = np.array([0.5, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 3.5, 4.0, 6.0])
    want = [0, 0, 0.005, 0.01, 0.02, 0.02, 0.02, 0.01, 0, 0]
    assert corr.lift_at(rel * cur, cur) == pytest.approx(want, abs=1e-12)
    # today's memory within LIFT_REFERENCE of the reference: read relative to today's memory
    assert corr.lift_at(2 * 1.05 * cur, 1.05 * cur) == pytest.approx(0.02, abs=1e-12)
    # moved further (the ghost view was memcached's at another size), or none stored: no lift
    for moved in (1 + pc.LIFT_REFERENCE * 1.5, 1 - pc.LIFT_REFERENCE * 1.5):
        assert not np.any(corr.lift_at(rel * cur * moved, cur * moved))
    corr.ghost_view = None
    assert not np.any(corr.lift_at(rel * cur, cur))


def test_apply_adds_the_lift_above_today_and_says_so() -> None:
    n = 10240.0
    cur = 40 * MIB
    x = np.arange(1, 101) * 4 * n / 100  # the agent's curve up to 4 N
    cls = _class(1, n, x, 0.7 * (1 - (1 + x / n) ** -1.5), 1000.0)
    res = merge([cls])
    corr = _lifted(cur, n)
    out = pc.apply(res.memory_bytes, res.proportional, cur, [cls], corr)
    lift = corr.lift_at(res.memory_bytes, cur)
    above = res.memory_bytes >= cur
    assert out.applied and lift.max() == pytest.approx(0.02)
    # the sum, held non-decreasing where the taper (3 C - 4 C) falls faster than the model rises
    summed = res.proportional[above] + lift[above]
    assert out.curve[above] == pytest.approx(np.maximum.accumulate(summed), abs=1e-12)
    assert out.curve[res.memory_bytes <= 3 * cur][-1] - res.proportional[res.memory_bytes <= 3 * cur][-1] == (
        pytest.approx(0.02, abs=1e-12)
    )
    assert out.info["lift_pp"] == pytest.approx({"1.5": 1.0, "2": 2.0, "3": 2.0})
    assert out.info["max_shift_pp"] >= 2.0 - 1e-9
    # a correction stored before the ghost view: the gap below, nothing above
    corr.ghost_view = None
    old = pc.apply(res.memory_bytes, res.proportional, cur, [cls], corr)
    assert old.applied and old.info["lift_pp"] is None
    assert np.array_equal(old.curve[above], res.proportional[above])


def test_compute_stores_the_ghost_view_equal_to_the_policy_up_to_today() -> None:
    trace = _reads(20_000, 60_000, 5)
    got = pc.compute(trace, 40 * MIB, 10240, min_gets=1000)
    assert got.ghost_view is not None and len(got.ghost_view) == len(got.sizes_bytes)
    upto = got.sizes_bytes <= got.reference_bytes * (1 + 1e-9)
    assert np.array_equal(got.ghost_view[upto], got.policy[upto])
    # above: memcached at C plus a ghost of its evictions, simulated apart (mcslru.base), not mcslru
    above = ~upto
    assert above.sum() == sum(f > 1 for f in pc.FACTORS)
    assert not np.array_equal(got.ghost_view[above], got.policy[above])
    assert np.all(got.ghost_view[above] >= got.policy[upto][-1] - 1e-12)


# --- with the database -------------------------------------------------------------------------

N_PAGES = 40
CHUNK = 4096  # 256 items per page: 40 pages hold 10240 items and the memory grid is fine enough
N_ITEMS = N_PAGES * (1 << 20) // CHUNK
RATE = 0.2
WARM = 0.5


def db() -> Any:
    return get_sessionmaker()()


@pytest.fixture(scope="module")
def workload() -> dict[str, Any]:
    """A Zipf 0.9 read stream and its independent references at the agent's curve sizes:
    exact LRU (Mattson, second half after the first) and full (unsampled) mcslru."""
    hs = sim_module()
    keys = zipf_keys(50_000, 300_000, 0.9, seed=11)
    x_items = np.arange(1, 101) * 2 * N_ITEMS / 100
    sizes = [int(round(x)) for x in x_items]
    half = len(keys) // 2
    full = {int(r["size"]): int(r["hits"]) for r in hs.exact_lru(keys, sizes)}
    first = {int(r["size"]): int(r["hits"]) for r in hs.exact_lru(keys[:half], sizes)}
    lru = np.array([(full[s] - first[s]) / (len(keys) - half) for s in sizes])
    probes = [int(round(f * N_ITEMS)) for f in (0.25, 0.5, 0.75, 1.0)]
    full_sim = hs.simulate(keys, ["mcslru", "lru"], probes, unit="items", warmup=WARM)
    mcs = {int(r["size"]): float(r["hit_ratio"]) for r in full_sim if r["policy"] == "mcslru"}
    lru_at = {int(r["size"]): float(r["hit_ratio"]) for r in full_sim if r["policy"] == "lru"}
    # the ideal agent: LRU below N, memcached's own ratio at N and (ghost) above it; the snapshot
    # counts the stream's reads, and its measured ratio is exactly the curve's point at N
    hits = int(round(mcs[N_ITEMS] * len(keys)))
    at_n = hits / len(keys)
    pts = np.where(x_items < N_ITEMS - 1e-6, lru, at_n + (lru - lru[49]))
    pts = np.maximum.accumulate(np.clip(pts, 0, 1))
    pts[49] = at_n
    return {
        "keys": keys,
        "x": x_items,
        "points": pts,
        "measured": at_n,
        "hits": hits,
        "mcslru": mcs,
        "lru_at": lru_at,
        "probes": probes,
    }


def _snapshot(address: str, w: dict[str, Any], end: datetime) -> dict[str, Any]:
    gets, hits = len(w["keys"]), w["hits"]
    points = [[round(float(x), 3), float(y)] for x, y in zip(w["x"], w["points"], strict=True)]
    cls = {
        "id": 20,
        "chunk_size": CHUNK,
        "pages": N_PAGES,
        "items": N_ITEMS,
        "evictions": 0,
        "requests": gets,
        "curve": {"unit": "items", "current_items": N_ITEMS, "points": points},
    }
    measured = {
        "cmd_get": gets,
        "get_hits": hits,
        "get_misses": gets - hits,
        "cmd_set": gets - hits,
        "evictions": 0,
        "bytes": N_PAGES << 20,
        "curr_items": N_ITEMS,
        "hit_ratio": hits / gets,
    }
    return envelope(
        address,
        end,
        N_PAGES << 20,
        [cls],
        measured=measured,
        events_seen=gets,
        hostname="t",
        settings={},
        instance_id="1795349000-1",
    )


def _chunks(address: str, keys: np.ndarray, end: datetime, parts: int) -> list[dict[str, Any]]:
    """The agent's sampled trace of the read stream (keys whose hash falls below RATE, all
    reads), in `parts` chunks whose windows split the snapshot window ending at `end`."""
    t0 = int((end - timedelta(seconds=60)).timestamp() * 1e6)
    ts_all = t0 + np.arange(len(keys), dtype=np.int64) * (60_000_000 // len(keys))
    chosen = keys < np.uint64(int(RATE * 2**64))
    sample, ts = keys[chosen], ts_all[chosen]
    bounds = np.linspace(t0, t0 + 60_000_000, parts + 1).astype(np.int64)
    out = []
    for i in range(parts):
        idx = np.flatnonzero((ts >= bounds[i]) & (ts < bounds[i + 1]))
        k = sample[idx]
        start = datetime.fromtimestamp(int(bounds[i]) / 1e6, UTC)
        stop = datetime.fromtimestamp(int(bounds[i + 1]) / 1e6, UTC)
        out.append(
            {
                "schema_version": 1,
                "chunk_id": str(uuid.uuid4()),
                "server": {"address": address, "instance_id": "1795349000-1"},
                "sample_rate": RATE,
                "seq": i + 1,
                "start": start.isoformat().replace("+00:00", "Z"),
                "end": stop.isoformat().replace("+00:00", "Z"),
                "records": {
                    "ts_us": ts[idx].tolist(),
                    "key": [f"{int(v):016x}" for v in k],
                    "op": [1] * len(k),
                    "size": [3000] * len(k),
                    "clsid": [20] * len(k),
                    "ttl": [-1] * len(k),
                    "cost_us": [None] * len(k),
                },
            }
        )
    return out


@pytest.fixture
def sent(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, list[str]]]:
    """Work the trace processing queues (on the organization's fair queue), recorded instead of
    queued: these tests run the work in-process, and no other test's worker must pick it up."""
    from hitcurve_worker import correction_tasks

    out: list[tuple[str, list[str]]] = []
    monkeypatch.setattr(
        correction_tasks, "fair_queue", lambda org_id, name, *args: out.append((name, [str(a) for a in args]))
    )
    return out


def _process_snapshot(client: Any, org: Org, doc: dict[str, Any]) -> ServerCurve:
    from hitcurve_worker.snapshot_tasks import process

    r = upload(client, org, doc)
    assert r.status_code == 202, r.text
    sid = uuid.UUID(doc["snapshot_id"])
    assert process(sid)["status"] == "processed"
    with db() as s:
        return s.execute(select(ServerCurve).where(ServerCurve.snapshot_id == sid)).scalar_one()


def _upload_chunks(client: Any, org: Org, chunks: list[dict[str, Any]]) -> list[dict[str, Any]]:
    from hitcurve_worker.trace_tasks import process

    done = []
    for ch in chunks:
        r = upload(client, org, ch, kind="traces")
        assert r.status_code == 202, r.text
        done.append(process(uuid.UUID(ch["chunk_id"])))
    return done


def _server_of(snapshot_id: str) -> uuid.UUID:
    with db() as s:
        return s.execute(select(Snapshot.server_id).where(Snapshot.id == uuid.UUID(snapshot_id))).scalar_one()


@pytest.mark.slow
def test_trace_chunks_give_a_stored_correction_that_the_next_curve_carries(
    client: Any, org: Org, workload: dict[str, Any], sent: list[tuple[str, list[str]]]
) -> None:
    from hitcurve_worker.correction_tasks import compute_for_server, needs_update

    address = f"10.77.0.1:{uuid.uuid4().int % 60000}"
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=3)
    doc1 = _snapshot(address, workload, end)
    before = _process_snapshot(client, org, doc1)
    server_id = _server_of(doc1["snapshot_id"])
    # no trace yet: the curve is the size-rescaling calibration of the model, as before
    assert before.calibration["policy_correction"]["applied"] is False
    assert "no policy correction" in before.calibration["policy_correction"]["reason"]
    res_x = np.asarray(before.sizes_bytes)
    ref = calibrate(
        res_x, np.asarray(before.hit_ratio_proportional), before.current_bytes, doc1["measured"]["hit_ratio"]
    )
    assert ref.calibrated is not None
    assert np.array_equal(np.asarray(before.hit_ratio_calibrated), ref.calibrated)

    # the sampled trace arrives in five chunks; the correction falls due once there is enough
    chunks = _chunks(address, workload["keys"], end, 5)
    dues = [d["correction_due"] for d in _upload_chunks(client, org, chunks)]
    assert dues[0] is False and dues[-1] is True
    assert sent[-1] == ("hitcurve.compute_policy_correction", [str(server_id)])
    out = compute_for_server(server_id)
    assert out["status"] == "ok", out
    with db() as s:
        row = s.execute(select(PolicyCorrection).where(PolicyCorrection.server_id == server_id)).scalar_one()
        assert row.org_id == org.id and row.status == "ok" and row.policy == "mcslru" and row.chunks == 5
        assert row.sample_rate == pytest.approx(RATE) and row.sampled_gets >= pc.MIN_SAMPLED_GETS
        assert row.reference_bytes == N_PAGES << 20 and row.reference_items == N_ITEMS
        sizes, lru, pol = (np.asarray(v) for v in (row.sizes_bytes, row.hit_ratio_lru, row.hit_ratio_policy))
        assert len(sizes) == len(lru) == len(pol) and np.all(np.diff(sizes) > 0)
        assert sizes[-1] >= pc.FACTORS[-1] * (N_PAGES << 20) * 0.99
        # the agent's view, stored with it: memcached's policy up to today's memory, apart above
        ghost = np.asarray(row.hit_ratio_ghost_view)
        upto = sizes <= (N_PAGES << 20) * (1 + 1e-9)
        assert len(ghost) == len(sizes) and np.array_equal(ghost[upto], pol[upto])
        assert not np.array_equal(ghost[~upto], pol[~upto])
        needs = needs_update(s, server_id)
    assert not needs  # nothing new since
    assert compute_for_server(server_id)["status"] == "up-to-date"
    # the stored gap against full, unsampled simulations of the whole stream, same warm-up: the
    # spatial sample (~60k requests) is the only difference
    gap = pc.from_row(sizes, lru, pol, 1, 1, RATE, N_PAGES << 20, N_ITEMS, ghost_view=ghost)
    assert gap is not None and row.warmup == pytest.approx(WARM)
    # the sample holds more reads than R x the snapshot's reads (a hot key fell in): SHARDS_adj
    n_sampled = sum(len(c["records"]["op"]) for c in chunks)
    assert row.sample_adjust == pytest.approx(n_sampled / (RATE * len(workload["keys"])), rel=1e-6)
    mcs, probes = workload["mcslru"], workload["probes"]
    for items in probes[:3]:
        true_gap = mcs[items] - workload["lru_at"][items]
        assert float(gap.gap_at(items / N_ITEMS * (N_PAGES << 20))) == pytest.approx(true_gap, abs=0.006)

    # the next window: the corrected curve
    doc2 = _snapshot(address, workload, end + timedelta(minutes=1))
    after = _process_snapshot(client, org, doc2)
    info = after.calibration["policy_correction"]
    assert info["applied"] is True and info["sampled_gets"] == row.sampled_gets and info["policy"] == "mcslru"
    x = np.asarray(after.sizes_bytes)
    assert np.array_equal(x, res_x)
    cal_before, cal_after = np.asarray(before.hit_ratio_calibrated), np.asarray(after.hit_ratio_calibrated)
    cur = float(after.current_bytes)
    # it passes through the measured point ...
    assert float(curve_at(x, cal_after, cur)) == pytest.approx(doc2["measured"]["hit_ratio"], abs=1e-9)
    # ... and differs from the uncorrected curve by g below today's memory (the taper is 1 up to
    # the class's last point below N, at 0.98 N), by the stored lift from there up (held
    # non-decreasing), nothing at today's memory itself
    lo = x <= 0.9 * cur
    assert cal_after[lo] - cal_before[lo] == pytest.approx(gap.gap_at(x[lo]), abs=1e-9)
    up = x >= cur
    lift = gap.lift_at(x[up], cur)
    assert lift[0] == 0 and np.any(lift != 0)
    assert info["lift_pp"]["2"] == pytest.approx(lift[-1] * 100, abs=1e-3)
    assert cal_after[up] == pytest.approx(np.maximum.accumulate(cal_before[up] + lift), abs=1e-9)
    # (just below N the corrected curve is held at or under the measured point, never above)
    near = (x > 0.9 * cur) & (x < cur)
    assert np.all(cal_after[near] <= doc2["measured"]["hit_ratio"] + 1e-12)
    assert np.all(np.abs(cal_after[near] - cal_before[near]) <= np.abs(gap.gap_at(x[near])) + 1e-12)
    # and it is closer to memcached's policy (full mcslru) than the LRU model was
    for items in probes[:3]:
        m = items / N_ITEMS * cur
        err_after = abs(float(curve_at(x, cal_after, m)) - mcs[items])
        err_before = abs(float(curve_at(x, cal_before, m)) - mcs[items])
        assert err_after < 0.006 and err_after < err_before / 5

    # a correction stored before revision 0014 (no ghost view): the gap below, no lift above
    with db() as s:
        s.execute(
            PolicyCorrection.__table__.update()
            .where(PolicyCorrection.server_id == server_id)
            .values(hit_ratio_ghost_view=None)
        )
        s.commit()
    old = _process_snapshot(client, org, _snapshot(address, workload, end + timedelta(minutes=2)))
    assert old.calibration["policy_correction"]["applied"] is True
    assert old.calibration["policy_correction"]["lift_pp"] is None
    cal_old = np.asarray(old.hit_ratio_calibrated)
    assert np.array_equal(cal_old[up], cal_before[up]) and np.array_equal(cal_old[lo], cal_after[lo])


@pytest.mark.slow
def test_too_little_trace_is_recorded_and_changes_nothing(
    client: Any, org: Org, workload: dict[str, Any], sent: list[tuple[str, list[str]]]
) -> None:
    from hitcurve_worker.correction_tasks import compute_for_server

    address = f"10.77.0.2:{uuid.uuid4().int % 60000}"
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=3)
    doc1 = _snapshot(address, workload, end)
    before = _process_snapshot(client, org, doc1)
    server_id = _server_of(doc1["snapshot_id"])
    dues = _upload_chunks(client, org, _chunks(address, workload["keys"][:40_000], end, 1))
    assert dues[0]["correction_due"] is False and not sent  # ~8k sampled records: not worth a simulation
    out = compute_for_server(server_id, force=True)
    assert out["status"] == "insufficient" and "needed" in out["reason"]
    with db() as s:
        row = s.execute(select(PolicyCorrection).where(PolicyCorrection.server_id == server_id)).scalar_one()
        assert row.status == "insufficient" and row.sizes_bytes is None and "needed" in (row.reason or "")
    after = _process_snapshot(client, org, _snapshot(address, workload, end + timedelta(minutes=1)))
    info = after.calibration["policy_correction"]
    assert info["applied"] is False and "needed" in info["reason"]
    assert np.array_equal(np.asarray(after.hit_ratio_calibrated), np.asarray(before.hit_ratio_calibrated))
    assert after.calibration["method"] == before.calibration["method"]
    assert after.calibration["scale"] == before.calibration["scale"]
