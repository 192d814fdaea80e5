"""The worker with real PostgreSQL, real Redis and a real worker process: uploads through the
backend's agent API become merged, calibrated curves, accuracy records, cluster curves, alerts;
re-running changes nothing; poison is parked; trace chunks and simulation runs complete."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import func, select, update
from worker_helpers import Org, WorkerProc, start_worker, upload, wait_for

from hitcurve.core.db import get_sessionmaker
from hitcurve.ingest.classpack import pack
from hitcurve.models import (
    AccuracyRecord,
    Alert,
    Cluster,
    ClusterCurve,
    Server,
    ServerCurve,
    SimulationResult,
    SimulationRun,
    Snapshot,
    TraceChunk,
)
from hitcurve.rules import band
from hitcurve_testing.snapshots import synthetic_snapshot
from hitcurve_testing.waiting import DEADLINE_S
from hitcurve_testing.workloads import zipf_keys
from hitcurve_worker.calibrate import curve_at

pytestmark = [pytest.mark.live, pytest.mark.slow]


@pytest.fixture(scope="module")
def worker(private_env: dict[str, str]) -> Iterator[WorkerProc]:
    w = start_worker(private_env, "pipeline")
    yield w
    w.stop()


def db() -> Any:
    return get_sessionmaker()()


def status_of(model: Any, obj_id: Any) -> str | None:
    with db() as s:
        return s.execute(select(model.status).where(model.id == obj_id)).scalar_one_or_none()  # type: ignore[no-any-return]


def count(model: Any, *where: Any) -> int:
    with db() as s:
        return int(s.execute(select(func.count()).select_from(model).where(*where)).scalar_one())


_client: list[Any] = []


@pytest.fixture(autouse=True)
def _sender(celery_client: Any) -> None:
    _client[:] = [celery_client]


def send(task: str, *args: str) -> Any:
    return _client[0].send_task(task, args=list(args))


def test_upload_becomes_a_merged_calibrated_curve(worker: WorkerProc, client: Any, org: Org) -> None:
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=5)
    snap = synthetic_snapshot(
        address=f"10.1.0.1:{uuid.uuid4().int % 60000}", n_classes=40, total_pages=256, end=end, hit_ratio=0.62
    )
    t0 = time.monotonic()
    r = upload(client, org, snap)
    assert r.status_code == 202, r.text
    sid = uuid.UUID(snap["snapshot_id"])
    wait_for(lambda: status_of(Snapshot, sid) == "processed", what="the snapshot to be processed")
    latency = time.monotonic() - t0
    print(f"\nupload -> processed curve: {latency * 1000:.0f} ms")
    with db() as s:
        c = s.execute(select(ServerCurve).where(ServerCurve.snapshot_id == sid)).scalar_one()
        x = np.asarray(c.sizes_bytes)
        assert np.all(np.diff(x) > 0) and len(x) == len(c.hit_ratio_proportional) == len(
            c.hit_ratio_calibrated
        )
        assert c.current_bytes == 256 << 20
        # the calibrated curve passes through the measured point; the band holds the curve
        assert float(curve_at(x, np.asarray(c.hit_ratio_calibrated), c.current_bytes)) == pytest.approx(
            0.62, abs=1e-6
        )
        assert np.all(np.asarray(c.band_low) <= np.asarray(c.hit_ratio_calibrated) + 1e-12)
        assert np.all(np.asarray(c.band_high) >= np.asarray(c.hit_ratio_calibrated) - 1e-12)
        # the answers' one band (hitcurve.rules.band): no graded prediction yet, the benchmark's prior
        assert c.calibration["drift_pp"] == pytest.approx(band.PRIOR_DRIFT_PP)
        assert np.all(np.asarray(c.hit_ratio_optimal) >= np.asarray(c.hit_ratio_proportional) - 1e-9)
        assert c.calibration["method"].startswith("size-scale")
        assert c.advice["optimal_hit_ratio"] >= c.advice["current_allocation_hit_ratio"]
        moved = sum(m["pages"] for m in c.advice["moves"])
        assert moved >= 0 and sum(c.advice["allocation"].values()) == 256
        # every move is valued (the dashboard's gain column)
        assert all(isinstance(m["hit_gain"], float) for m in c.advice["moves"])
        if c.advice["moves"]:
            assert c.advice["gain_pp"] > 0 and max(m["hit_gain"] for m in c.advice["moves"]) > 0
        acc = s.execute(select(AccuracyRecord).where(AccuracyRecord.snapshot_id == sid)).scalar_one()
        assert acc.basis == "model" and acc.measured_hit_ratio == pytest.approx(0.62)
        assert acc.error_pp == pytest.approx((c.predicted_hit_ratio - 0.62) * 100)

    def next_window(minutes: int) -> uuid.UUID:
        """The same server's window `minutes` later (measured 0.60), uploaded and processed."""
        nxt = synthetic_snapshot(
            address=snap["server"]["address"],
            n_classes=40,
            total_pages=256,
            end=end + timedelta(minutes=minutes),
            hit_ratio=0.60,
            seed=1 + minutes,
        )
        assert upload(client, org, nxt).status_code == 202
        nid = uuid.UUID(nxt["snapshot_id"])
        wait_for(lambda: status_of(Snapshot, nid) == "processed", what=f"the window at +{minutes} min")
        return nid

    # The next window is predicted from this window's calibrated curve.
    sid2 = next_window(1)
    with db() as s:
        acc2 = s.execute(select(AccuracyRecord).where(AccuracyRecord.snapshot_id == sid2)).scalar_one()
        assert acc2.basis == "calibrated" and acc2.predicted_from_snapshot_id == sid
        assert acc2.predicted_hit_ratio == pytest.approx(0.62, abs=1e-6)  # same memory as the last window
        assert acc2.error_pp == pytest.approx(2.0, abs=1e-4)

    # The third window's band reads that graded prediction (hitcurve.rules.band: shrunk toward the prior).
    sid3 = next_window(2)
    with db() as s:
        c3 = s.execute(select(ServerCurve).where(ServerCurve.snapshot_id == sid3)).scalar_one()
        assert c3.calibration["history_windows"] == 1
        assert c3.calibration["drift_pp"] == pytest.approx(band.drift_estimate([2.0]).pp, abs=1e-3)


def test_rerunning_a_processed_snapshot_changes_nothing(worker: WorkerProc, client: Any, org: Org) -> None:
    snap = synthetic_snapshot(address=f"10.1.0.2:{uuid.uuid4().int % 60000}", n_classes=12, total_pages=64)
    assert upload(client, org, snap).status_code == 202
    sid = uuid.UUID(snap["snapshot_id"])
    wait_for(lambda: status_of(Snapshot, sid) == "processed", what="processing")

    def state() -> tuple[Any, ...]:
        with db() as s:
            c = s.execute(select(ServerCurve).where(ServerCurve.snapshot_id == sid)).scalar_one()
            return (
                c.id,
                c.hit_ratio_calibrated,
                c.computed_at,
                count(ServerCurve, ServerCurve.snapshot_id == sid),
                count(AccuracyRecord, AccuracyRecord.snapshot_id == sid),
                count(Alert),
            )

    before = state()
    assert send("hitcurve.process_snapshot", str(sid)).get(timeout=DEADLINE_S)["status"] == "nothing-to-do"
    assert state() == before
    # Forced back to pending (as after a lost acknowledgement), the work is redone in place.
    with db() as s:
        s.execute(update(Snapshot).where(Snapshot.id == sid).values(status="pending"))
        s.commit()
    assert send("hitcurve.process_snapshot", str(sid)).get(timeout=DEADLINE_S)["status"] == "processed"
    after = state()
    assert after[0] == before[0] and after[1] == before[1] and after[3:] == before[3:] == (1, 1, before[5])



def _one_class(points: list[list[float]]) -> bytes:
    """One slab class (96-byte chunks, 4 pages, 100 items) with this curve, packed as stored."""
    one = {"class_id": [1], "chunk_size": [96], "pages": [4], "items": [100], "evictions": [0]}
    one |= {"requests": [10], "current_items": [100], "has_ttl": [False]}
    one |= {k: [None] for k in ("cost_count", "cost_mean_us", "cost_p50_us", "cost_p90_us", "cost_p99_us")}
    one |= {"ghost_reach_items": [None], "ghost_filters": [None]}
    xy = np.asarray(points, dtype=np.float64)
    return pack(one, xy[:, 0], xy[:, 1], len(points))


def _raw_snapshot(org_id: uuid.UUID, server_id: uuid.UUID, points: list[list[float]]) -> uuid.UUID:
    """A snapshot stored directly (the API would reject this curve): a poison input."""
    sid = uuid.uuid4()
    now = datetime.now(UTC)
    with db() as s:
        s.add(
            Snapshot(
                id=sid,
                org_id=org_id,
                server_id=server_id,
                instance_id="1-1",
                window_start=now - timedelta(minutes=1),
                window_end=now,
                limit_maxbytes=1 << 26,
                curve_points=len(points),
                cmd_get=10,
                get_hits=5,
                get_misses=5,
                bytes_used=0,
                curr_items=0,
                measured_hit_ratio=0.5,
                loss_ratio=0.0,
                flagged=False,
                payload_gzip=None,
                status="pending",
                classes=_one_class(points),
            )
        )
        s.commit()
    return sid


def _server(org_id: uuid.UUID, cluster_id: uuid.UUID | None = None) -> uuid.UUID:
    with db() as s:
        srv = Server(
            org_id=org_id,
            address=f"10.9.{uuid.uuid4().int % 250}.1:{uuid.uuid4().int % 60000}",
            instance_id="1-1",
            cluster_id=cluster_id,
        )
        s.add(srv)
        s.commit()
        return srv.id


def test_poison_snapshot_is_parked_with_its_error_not_retried(worker: WorkerProc, org: Org) -> None:
    sid = _raw_snapshot(org.id, _server(org.id), [[10, 0.5], [20, 0.4], [30, 0.6]])  # decreasing
    assert send("hitcurve.process_snapshot", str(sid)).get(timeout=DEADLINE_S)["status"] == "parked"
    with db() as s:
        row = s.get(Snapshot, sid)
        assert row is not None and row.status == "parked" and row.attempts == 1
        assert "non-decreasing" in (row.error or "")
    assert count(ServerCurve, ServerCurve.snapshot_id == sid) == 0
    # the re-enqueue job leaves parked work alone
    from hitcurve_worker.housekeeping import requeue

    requeue(min_age_s=0, sender=_client[0])
    time.sleep(1.0)
    assert status_of(Snapshot, sid) == "parked"


def newest_cluster_curve(s: Any, cluster_id: uuid.UUID) -> Any:
    return s.execute(
        select(ClusterCurve)
        .where(ClusterCurve.cluster_id == cluster_id)
        .order_by(ClusterCurve.computed_at.desc())
        .limit(1)
    ).scalar_one()


def test_cluster_curve_and_alerts_open_once_and_resolve(worker: WorkerProc, client: Any, org: Org) -> None:
    with db() as s:
        cl = Cluster(
            org_id=org.id,
            name=f"c-{uuid.uuid4().hex[:6]}",
            target_hit_ratio=0.99,
            price_per_gb_month=3.0,
            node_size_bytes=128 << 20,
        )
        s.add(cl)
        s.commit()
        cluster_id, cluster_name = cl.id, cl.name
    addrs = [f"10.2.0.{i}:11211" for i in range(3)]
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
    ids = []
    for i, a in enumerate(addrs):  # first uploads register the servers
        snap = synthetic_snapshot(address=a, n_classes=10, total_pages=128, end=end, hit_ratio=0.8, seed=i)
        assert upload(client, org, snap).status_code == 202
        ids.append(uuid.UUID(snap["snapshot_id"]))
    for i in ids:
        wait_for(lambda i=i: status_of(Snapshot, i) == "processed", what="first snapshots")
    with db() as s:
        s.execute(
            update(Server)
            .where(Server.org_id == org.id, Server.address.in_(addrs))
            .values(cluster_id=cluster_id)
        )
        s.commit()
    for minute in (1, 2, 3):  # more windows for every server, now inside the cluster
        batch = []
        for i, a in enumerate(addrs):
            snap = synthetic_snapshot(
                address=a,
                n_classes=10,
                total_pages=128,
                end=end + timedelta(minutes=minute),
                hit_ratio=0.8,
                seed=10 * minute + i,
            )
            assert upload(client, org, snap).status_code == 202
            batch.append(uuid.UUID(snap["snapshot_id"]))
        for i in batch:
            wait_for(lambda i=i: status_of(Snapshot, i) == "processed", what="cluster snapshots")
    with db() as s:
        cc = newest_cluster_curve(s, cluster_id)
        assert cc.server_count == 3 and cc.current_bytes == 3 * (128 << 20)
        assert cc.basis == "calibrated" and cc.measured_hit_ratio == pytest.approx(0.8)
        assert cc.node_counts and cc.node_counts[:3] == [1, 2, 3]
        # three nodes of 128 MiB are today's cluster: the curve there is the measured ratio
        assert cc.node_hit_ratios[2] == pytest.approx(0.8, abs=0.01)
        open_alerts = (
            s.execute(select(Alert).where(Alert.cluster_id == cluster_id, Alert.state == "open"))
            .scalars()
            .all()
        )
    # one alert per cause (memory), once the answer past the curve has held over 3 windows of the
    # cluster (hysteresis.HOLD_WINDOWS, the -m to set's wait); it names the cluster
    assert [a.kind for a in open_alerts] == ["memory_short"]
    assert open_alerts[0].message.startswith(f"cluster {cluster_name}: the target hit rate")
    # in -m terms, as the cluster's answer: the nodes' limits (3 x 128 MiB) and the -m per node
    assert "the limit today is 384\u00a0MiB" in open_alerts[0].message
    assert "on each of 3 nodes" in open_alerts[0].message
    # Traffic stops on one node and another's agent restarts with a lossy first window: neither
    # window replaces its node's good curve in the cluster's (hitcurve.rules.windows, as server answers).
    quiet = synthetic_snapshot(
        address=addrs[1],
        n_classes=10,
        total_pages=128,
        end=end + timedelta(minutes=4),
        hit_ratio=0.0,
        seed=41,
    )
    quiet["measured"].update(cmd_get=12, get_hits=0, get_misses=12)
    for c in quiet["classes"]:
        c["curve"]["points"] = [[x, 0.0] for x, _ in c["curve"]["points"]]
        c["requests"] = 1
    lossy = synthetic_snapshot(
        address=addrs[2],
        n_classes=10,
        total_pages=128,
        end=end + timedelta(minutes=4),
        hit_ratio=0.5,
        seed=42,
    )
    lossy["loss"].update(loss_ratio=0.2, flagged=True, worker_dropped=200_000)
    for snap in (quiet, lossy):
        assert upload(client, org, snap).status_code == 202
        sid = uuid.UUID(snap["snapshot_id"])
        wait_for(lambda sid=sid: status_of(Snapshot, sid) == "processed", what="quiet/lossy")
    with db() as s:
        after = newest_cluster_curve(s, cluster_id)
        assert after.id != cc.id and after.server_count == 3
        assert after.measured_hit_ratio == pytest.approx(0.8, abs=0.01)
        assert after.node_hit_ratios[2] == pytest.approx(cc.node_hit_ratios[2], abs=0.01)
        assert str(quiet["snapshot_id"]) not in after.inputs["servers"].values()
        assert str(lossy["snapshot_id"]) not in after.inputs["servers"].values()
    # Lower the target far below today's: the alert resolves, savings opens.
    with db() as s:
        s.execute(update(Cluster).where(Cluster.id == cluster_id).values(target_hit_ratio=0.3))
        s.commit()
    snap = synthetic_snapshot(
        address=addrs[0],
        n_classes=10,
        total_pages=128,
        end=end + timedelta(minutes=5),
        hit_ratio=0.8,
        seed=99,
    )
    assert upload(client, org, snap).status_code == 202
    wait_for(lambda: status_of(Snapshot, uuid.UUID(snap["snapshot_id"])) == "processed", what="last snapshot")
    with db() as s:
        rows = s.execute(select(Alert.kind, Alert.state).where(Alert.cluster_id == cluster_id)).all()
    assert sorted(rows) == [("memory_short", "resolved"), ("savings_available", "open")]


def test_no_critical_or_curve_error_alert_while_memcached_warms_up(
    worker: WorkerProc, client: Any, org: Org
) -> None:
    """A filling server: a server whose memcached is still filling raises neither the cluster's critical
    sizing alert nor the curve-error alert, although its hit rate is far below the target and its predictions
    miss by 15 pp a window; once memory is full (two full windows) and the agent has seen out to the target
    (its evictions since it attached), the rules speak."""
    from hitcurve_testing.snapshots import make_snapshot

    with db() as s:
        cl = Cluster(
            org_id=org.id, name=f"warm-{uuid.uuid4().hex[:6]}", target_hit_ratio=0.99, price_per_gb_month=1.0
        )
        s.add(cl)
        s.commit()
        cluster_id = cl.id
    address = f"10.3.0.{uuid.uuid4().int % 200}:11211"
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)

    def window(minute: int, fill: float, hit_ratio: float, evicted: int | None = None) -> None:
        snap = make_snapshot(
            address, end=end + timedelta(minutes=minute), hit_ratio=hit_ratio, fill=fill, seed=7
        )
        if evicted is not None:  # memcached's evictions since it started (the agent attached before)
            snap["memory"]["evictions_total"] = evicted
        assert upload(client, org, snap).status_code == 202
        sid = uuid.UUID(snap["snapshot_id"])
        wait_for(lambda: status_of(Snapshot, sid) == "processed", what=f"window {minute}")

    def alerts_now() -> list[tuple[str, str]]:
        with db() as s:
            server_id = s.execute(
                select(Server.id).where(Server.org_id == org.id, Server.address == address)
            ).scalar()
            return sorted(
                (a.kind, a.severity)
                for a in s.execute(
                    select(Alert).where(
                        Alert.org_id == org.id,
                        Alert.state == "open",
                        (Alert.cluster_id == cluster_id) | (Alert.server_id == server_id),
                    )
                ).scalars()
            )

    window(0, 0.2, 0.30)
    with db() as s:
        s.execute(
            update(Server)
            .where(Server.org_id == org.id, Server.address == address)
            .values(cluster_id=cluster_id)
        )
        s.commit()
    for minute, (fill, hr) in enumerate([(0.4, 0.45), (0.6, 0.60), (0.8, 0.75), (0.95, 0.90)], start=1):
        window(minute, fill, hr)
        assert alerts_now() == [], f"window {minute} (memcached {fill:.0%} full)"
    with db() as s:  # the rules had reason to fire: 15 pp misses, a hit rate 9+ pp under the target
        errors = (
            s.execute(
                select(AccuracyRecord.error_pp)
                .join(Server, Server.id == AccuracyRecord.server_id)
                .where(
                    Server.address == address, Server.org_id == org.id, AccuracyRecord.basis == "calibrated"
                )
            )
            .scalars()
            .all()
        )
    assert len(errors) >= 3 and min(abs(e) for e in errors) > 10
    window(5, 1.0, 0.90)  # full once: the curve settles over one more window
    assert alerts_now() == []
    window(6, 1.0, 0.90)  # full twice: no longer warming
    # but the agent has seen only 5,000 evictions of 410,000 items past today's memory: the
    # answer for 99 % is unknown, and no alert opens on it (the demo's "needs more than 320 MiB")
    assert alerts_now() == []
    window(7, 1.0, 0.90, evicted=5_000_000)  # the cache has turned over: the curve is seen
    # the first window seen whole reads past the curve (the windows up to it combined), the next
    # ones on it (-m 207): no alert until one answer has held over hysteresis.HOLD_WINDOWS
    # windows, as an -m to set does (sizing.headline.answered_then, history_past)
    assert alerts_now() == []
    window(8, 1.0, 0.90, evicted=5_100_000)
    assert alerts_now() == []
    window(9, 1.0, 0.90, evicted=5_200_000)  # two windows on the curve: not held yet
    assert alerts_now() == []
    window(10, 1.0, 0.90, evicted=5_300_000)
    # the sizing rule speaks (one alert for the one cause); the misses of the filling windows
    # are not held against the settled curve
    assert alerts_now() == [("memory_short", "critical")]


def _trace(address: str, n: int, seed: int, start: datetime) -> dict[str, Any]:
    rng = np.random.default_rng(seed)
    keys = zipf_keys(5000, n, 1.2, seed)
    ops = rng.choice([1, 2, 3], size=n, p=[0.7, 0.2, 0.1])
    return {
        "schema_version": 1,
        "chunk_id": str(uuid.uuid4()),
        "server": {"address": address, "instance_id": "1795349000-4242"},
        "sample_rate": 0.1,
        "seq": seed,
        "start": start.isoformat(),
        "end": (start + timedelta(minutes=1)).isoformat(),
        "records": {
            "ts_us": [int(start.timestamp() * 1e6) + i for i in range(n)],
            "key": [f"{int(k):016x}" for k in keys],
            "op": [int(o) for o in ops],
            "size": [int(200 + (int(k) % 7) * 50) if o != 2 else 0 for k, o in zip(keys, ops, strict=True)],
            "clsid": [5] * n,
            "ttl": [-1] * n,
            "cost_us": [
                float(100 + int(k) % 900) if o == 3 else None for k, o in zip(keys, ops, strict=True)
            ],
        },
    }


def test_trace_chunks_and_a_simulation_run_complete(worker: WorkerProc, client: Any, org: Org) -> None:
    address = f"10.3.0.1:{uuid.uuid4().int % 60000}"
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    chunk_ids = []
    for i in range(3):
        body = _trace(address, 20_000, i + 1, start + timedelta(minutes=i))
        r = upload(client, org, body, kind="traces")
        assert r.status_code == 202, r.text
        chunk_ids.append(uuid.UUID(body["chunk_id"]))
    for c in chunk_ids:
        wait_for(lambda c=c: status_of(TraceChunk, c) == "processed", what="trace chunk processing")
    with db() as s:
        server_id = s.execute(
            select(Server.id).where(Server.org_id == org.id, Server.address == address)
        ).scalar_one()
        sizes = [1 << 20, 4 << 20, 16 << 20]
        run = SimulationRun(
            org_id=org.id,
            server_id=server_id,
            policies=["lru", "fifo", "clock"],
            sizes_bytes=sizes,
            window_start=start - timedelta(minutes=1),
            window_end=start + timedelta(minutes=10),
        )
        bad = SimulationRun(
            org_id=org.id,
            server_id=server_id,
            policies=["lru", "nope"],
            sizes_bytes=sizes,
            window_start=start,
            window_end=start + timedelta(minutes=10),
        )
        s.add_all([run, bad])
        s.commit()
        run_id, bad_id = run.id, bad.id
    send("hitcurve.run_simulation", str(run_id))
    send("hitcurve.run_simulation", str(bad_id))
    wait_for(lambda: status_of(SimulationRun, run_id) == "done", what="the simulation run")
    wait_for(lambda: status_of(SimulationRun, bad_id) == "failed", what="the bad run to fail")
    with db() as s:
        r = s.get(SimulationRun, run_id)
        assert r is not None and r.progress == 1.0 and r.finished_at is not None
        res = (
            s.execute(
                select(SimulationResult)
                .where(SimulationResult.run_id == run_id)
                .order_by(SimulationResult.policy, SimulationResult.size_bytes)
            )
            .scalars()
            .all()
        )
        b = s.get(SimulationRun, bad_id)
        assert b is not None and "unknown policies: nope" in (b.error or "")
    assert len(res) == 9
    for p in ("lru", "fifo", "clock"):
        hr = [x.hit_ratio for x in res if x.policy == p]
        assert all(0 < h < 1 for h in hr)
        if p == "lru":  # LRU is a stack algorithm: more memory never hurts
            assert hr == sorted(hr)
    # every result states the sample it rests on: keys, requests, the traffic time, the rate
    d = res[0].details
    # (the requests counted: the first sim_warmup of the 60,000 replayed only warm the caches)
    assert d["sim_warmup"] == 0.2 and d["recompute"].startswith("recompute time: ")
    assert 1000 < d["sampled_keys"] <= 5000 and 40_000 < d["sampled_requests"] <= 0.8 * 60_000
    assert 119 < d["span_seconds"] < 121  # three chunks a minute apart
    assert not any("small sample" in n for n in d["notes"])
    # miniature simulation: a cache of S bytes simulated at S*R on the R = 0.1 sample
    assert all(
        x.details["sample_rate"] == 0.1 and abs(x.details["simulated_size_bytes"] - x.size_bytes / 10) <= 1
        for x in res
    )
    # too small a sample is refused with the reason, never answered with noise
    small_address = f"10.3.0.2:{uuid.uuid4().int % 60000}"
    body = _trace(small_address, 300, 9, start)
    assert upload(client, org, body, kind="traces").status_code == 202
    small_chunk = uuid.UUID(body["chunk_id"])
    wait_for(lambda: status_of(TraceChunk, small_chunk) == "processed", what="the small chunk")
    with db() as s:
        small_server = s.execute(
            select(Server.id).where(Server.org_id == org.id, Server.address == small_address)
        ).scalar_one()
        small = SimulationRun(
            org_id=org.id,
            server_id=small_server,
            policies=["lru"],
            sizes_bytes=sizes,
            window_start=start - timedelta(minutes=1),
            window_end=start + timedelta(minutes=10),
        )
        s.add(small)
        s.commit()
        small_id = small.id
    send("hitcurve.run_simulation", str(small_id))
    wait_for(lambda: status_of(SimulationRun, small_id) == "failed", what="the small run to be refused")
    with db() as s:
        refused = s.get(SimulationRun, small_id)
        assert refused is not None and "only 300 sampled requests" in (refused.error or "")
        assert "needs at least 1,000" in (refused.error or "")
    # re-dispatching a finished run does nothing; re-running a lost policy task upserts in place
    assert send("hitcurve.run_simulation", str(run_id)).get(timeout=DEADLINE_S)["status"] == "nothing-to-do"
    with db() as s:
        s.execute(update(SimulationRun).where(SimulationRun.id == run_id).values(status="running"))
        s.commit()
    again = send("hitcurve.simulate_policy", str(run_id), "lru").get(timeout=DEADLINE_S)
    assert again["status"] == "already-done"
    assert count(SimulationResult, SimulationResult.run_id == run_id) == 9


def test_poison_trace_chunk_is_parked(worker: WorkerProc, org: Org) -> None:
    cid = uuid.uuid4()
    now = datetime.now(UTC)
    with db() as s:
        s.add(
            TraceChunk(
                id=cid,
                org_id=org.id,
                server_id=_server(org.id),
                instance_id="1-1",
                seq=1,
                window_start=now - timedelta(minutes=1),
                window_end=now,
                sample_rate=0.1,
                record_count=5,
                data_format="npz-v1",
                data=b"not a zip file",
                status="pending",
            )
        )
        s.commit()
    assert send("hitcurve.process_trace_chunk", str(cid)).get(timeout=DEADLINE_S)["status"] == "parked"
    with db() as s:
        row = s.get(TraceChunk, cid)
        assert row is not None and row.status == "parked" and "undecodable" in (row.error or "")
