"""Backpressure: with the workers stopped under load, uploads are still accepted and
stored, /health shows the lag growing, and after the restart every upload becomes exactly one
curve, in window order per server, with duplicate deliveries (the agent retrying an upload, the
broker handing a task over twice) changing nothing. Real PostgreSQL, Redis and worker processes.

HITCURVE_CATCHUP_STOP_S (default 12) is how long the workers stay stopped while agents upload;
the fleet benchmark's catch-up mode (bench/fleet) runs the same scenario for minutes."""

from __future__ import annotations

import os
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import func, select
from worker_helpers import Org, start_worker, upload, wait_for

from hitcurve.core import task_names as names
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.tasks import DRAIN_FLAG_TTL_S, send
from hitcurve.models import Server, ServerCurve, Snapshot
from hitcurve_testing.snapshots import synthetic_snapshot

STOP_S = float(os.environ.get("HITCURVE_CATCHUP_STOP_S", "12"))
# The suite's 300 s per test (pyproject) would end the 5-minute stop itself: the stop, and
# up to the test's own waits for the backlog (600 s) and the queue (300 s), after it.
pytestmark = [pytest.mark.live, pytest.mark.slow, pytest.mark.timeout(int(STOP_S) + 900)]
SERVERS = 4


def test_workers_stopped_under_load_catch_up_exactly_once_in_order(
    private_env: dict[str, str], client: Any, org: Org
) -> None:
    s = get_settings()
    r = redis.Redis.from_url(private_env["HITCURVE_REDIS_URL"])
    tag = uuid.uuid4().hex[:6]
    addresses = [f"10.20.{i}.1:{11211 + i}-{tag}" for i in range(SERVERS)]
    start = datetime.now(UTC).replace(microsecond=0, second=0) - timedelta(days=1)
    uploaded: list[dict[str, Any]] = []

    def upload_window(k: int) -> None:
        for i, address in enumerate(addresses):
            snap = synthetic_snapshot(
                address=address,
                n_classes=20 + (i * 4) % 21,
                total_pages=256,
                seed=k * SERVERS + i,
                end=start + timedelta(minutes=k),
                hit_ratio=0.5 + 0.05 * i,
            )
            resp = upload(client, org, snap)
            assert resp.status_code == 202, resp.text
            uploaded.append(snap)

    def processed(ids: set[uuid.UUID]) -> bool:
        with get_sessionmaker()() as db:
            n = db.execute(
                select(func.count()).where(Snapshot.id.in_(ids), Snapshot.status == "processed")
            ).scalar_one()
        return n == len(ids)

    # No worker runs (this module starts none before this point); agents keep uploading for
    # STOP_S, a window per server about every second (a fleet at a 60 s interval, time compressed).
    k = 0
    t0 = time.monotonic()
    while time.monotonic() < t0 + STOP_S or k < 4:
        upload_window(k)
        k += 1
        time.sleep(max(0.0, t0 + k - time.monotonic()))
    backlog = {uuid.UUID(x["snapshot_id"]) for x in uploaded}
    # duplicate deliveries: an agent retrying uploads it already made (200, stored once) and the
    # broker handing the same task over again
    for snap in uploaded[-SERVERS:] + uploaded[SERVERS : 2 * SERVERS]:
        assert upload(client, org, snap).status_code == 200
    for sid in list(backlog)[:20]:
        assert send(names.PROCESS_SNAPSHOT, sid)

    with get_sessionmaker()() as db:
        stored = db.execute(select(func.count()).where(Snapshot.id.in_(backlog))).scalar_one()
        pending = db.execute(
            select(func.count()).where(Snapshot.id.in_(backlog), Snapshot.status == "pending")
        ).scalar_one()
    assert stored == pending == len(backlog), (stored, pending, len(backlog))
    # the re-enqueue job does not pile duplicates onto a queue that still holds the messages
    from hitcurve_worker.housekeeping import requeue

    # (the session's database may hold other tests' never-enqueued rows: those may go again, none
    # of the backlog's; the ids are recorded instead of sent)
    class Recorder:
        def __init__(self) -> None:
            self.sent: list[tuple[str, list[str]]] = []

        def send_task(self, name: str, args: list[str] | None = None, **_: Any) -> None:
            self.sent.append((name, args or []))

    rec = Recorder()
    counts = requeue(min_age_s=0, sender=rec)
    # the uploads queued drains (hitcurve.drain_snapshots), not one message each
    # (at most one more each DRAIN_FLAG_TTL_S while none runs), and the 20 replayed tasks
    assert 1 <= counts["snapshots_queue_depth"] <= 20 + 1 + STOP_S // DRAIN_FLAG_TTL_S, counts
    # (alert deliveries the job re-sends carry a delivery's number, not an upload's id)
    uploads = {uuid.UUID(a[0]) for n, a in rec.sent if a and n != names.DELIVER_ALERT}
    assert not uploads & backlog, "a queued upload was enqueued again"
    assert not [n for n, _ in rec.sent if n == names.DRAIN_SNAPSHOTS], "a drain is queued: none more"
    health = client.get("/api/v1/health").json()["checks"]
    # the backlog is the pending rows, not the broker's depth
    assert health["queue"]["queues"]["ingest"]["pending"] >= len(backlog), health
    assert health["queue"]["queues"]["ingest"]["oldest_pending_s"] > 0, health
    assert health["workers"]["consumers"]["ingest"] == 0, health

    worker = start_worker(private_env, "catch-up", concurrency=2)
    try:
        wait_for(lambda: processed(backlog), 600, f"the backlog of {len(backlog)} uploads to be processed")
        wait_for(lambda: r.llen(s.celery_ingest_queue) == 0, 300, "the ingest queue to drain")
    finally:
        worker.stop()
        r.close()

    every = {uuid.UUID(x["snapshot_id"]) for x in uploaded}
    with get_sessionmaker()() as db:
        curves = dict(
            db.execute(
                select(ServerCurve.snapshot_id, func.count())
                .where(ServerCurve.snapshot_id.in_(every))
                .group_by(ServerCurve.snapshot_id)
            ).all()
        )
        rows = db.execute(
            select(Server.address, Snapshot.window_end, Snapshot.processed_at, Snapshot.attempts)
            .join(Server, Server.id == Snapshot.server_id)
            .where(Snapshot.id.in_(backlog))
            .order_by(Server.address, Snapshot.window_end)
        ).all()
    # every upload became exactly one curve
    assert set(curves) == every and set(curves.values()) == {1}, (
        len(every),
        len(curves),
        set(curves.values()),
    )
    # in window order per server: processing times follow the windows
    by_server: dict[str, list[datetime]] = {}
    for address, _end, processed_at, _attempts in rows:
        by_server.setdefault(address, []).append(processed_at)
    assert set(by_server) == set(addresses)
    for address, times in by_server.items():
        assert times == sorted(times), f"{address}: windows processed out of order: {rows}"
    health = client.get("/api/v1/health").json()["checks"]["queue"]
    assert health["upload_to_curve_s"]["snapshots"] >= len(backlog), health
    assert health["upload_to_curve_s"]["p95"] >= STOP_S * 0.5, health
    print(
        f"\ncatch-up: {len(backlog)} uploads while stopped {STOP_S:g} s;"
        f" upload->curve {health['upload_to_curve_s']}"
    )


def test_a_task_takes_every_earlier_pending_window_first_past_its_in_order_batch(
    private_env: dict[str, str], client: Any, org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    """process_snapshot (a replayed or re-enqueued task) for a server's window with more earlier
    pending windows than IN_ORDER_BATCH processes all of them first, oldest first. It used to
    process the first IN_ORDER_BATCH and then its own window, ahead of the rest: the catch-up
    test above found it with a 300 s stop (~300 windows a server, a batch of 100)."""
    from hitcurve_worker import snapshot_tasks as st

    monkeypatch.setattr(st, "IN_ORDER_BATCH", 2)
    start = datetime.now(UTC).replace(microsecond=0, second=0) - timedelta(hours=2)
    docs = [
        synthetic_snapshot(
            address=f"10.21.0.1:11211-{uuid.uuid4().hex[:6]}",
            n_classes=8,
            total_pages=64,
            seed=k,
            end=start + timedelta(minutes=k),
            hit_ratio=0.6,
        )
        for k in range(7)
    ]
    address = docs[0]["server"]["address"]
    for doc in docs:
        doc["server"]["address"] = address
        assert upload(client, org, doc).status_code == 202, doc["snapshot_id"]
    ids = [uuid.UUID(d["snapshot_id"]) for d in docs]
    # the newest window's own task: six earlier windows pending, three times its batch of 2
    st.process_snapshot(str(ids[-1]), (start + timedelta(minutes=6)).isoformat())
    with get_sessionmaker()() as db:
        rows = db.execute(
            select(Snapshot.status, Snapshot.processed_at)
            .where(Snapshot.id.in_(ids))
            .order_by(Snapshot.window_end)
        ).all()
    assert [r.status for r in rows] == ["processed"] * 7, rows
    times = [r.processed_at for r in rows]
    assert times == sorted(times), f"windows processed out of order: {rows}"
