"""hitcurve.drain_snapshots: uploads become few messages, and drains running side by
side process every pending snapshot exactly once, in window order per server, a bad snapshot
parked without sinking its batch. Real PostgreSQL and Redis; the drains run in this process."""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import func, select, update
from worker_helpers import Org, upload

from hitcurve.core import task_names as names
from hitcurve.core import tasks
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.tasks import DRAIN_FLAG_TTL_S, drain_flag_key, drain_started
from hitcurve.models import Server, ServerCurve, Snapshot
from hitcurve_testing.snapshots import synthetic_snapshot
from hitcurve_worker.drain_tasks import drain

SERVERS = 5
WINDOWS = 6


def _queued_drains(r: redis.Redis) -> int:
    raw = r.lrange(get_settings().celery_ingest_queue, 0, -1)
    return sum(names.DRAIN_SNAPSHOTS.encode() in m for m in raw)


def test_drains_side_by_side_process_each_upload_once_in_order(
    private_env: dict[str, str], client: Any, org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The queued-drain flag lives 30 s; the 30 uploads below took longer than that on a loaded
    # machine (a second drain was then due and queued). Here it outlives them: one drain exactly.
    monkeypatch.setattr(tasks, "DRAIN_FLAG_TTL_S", 3600)
    r = redis.Redis.from_url(private_env["HITCURVE_REDIS_URL"])
    r.delete(get_settings().celery_ingest_queue, drain_flag_key())
    tag = uuid.uuid4().hex[:6]
    start = datetime.now(UTC).replace(microsecond=0, second=0) - timedelta(hours=2)
    ids: list[uuid.UUID] = []
    began = time.monotonic()
    # windows uploaded newest first for some servers: arrival order is not window order
    for k in range(WINDOWS):
        for i in range(SERVERS):
            w = WINDOWS - 1 - k if i % 2 else k
            snap = synthetic_snapshot(
                address=f"10.30.{i}.1:11211-{tag}",
                n_classes=20,
                total_pages=128,
                seed=k * SERVERS + i,
                end=start + timedelta(minutes=w),
                hit_ratio=0.6,
            )
            assert upload(client, org, snap).status_code == 202, snap
            ids.append(uuid.UUID(snap["snapshot_id"]))
    # one message for the lot (no worker runs here), not one per upload: the "a drain is queued"
    # flag coalesces them, and lapses every DRAIN_FLAG_TTL_S past the delay while no drain runs
    # (so a drain lost with a worker is replaced), adding at most one message per such period
    periods = int((time.monotonic() - began) // (DRAIN_FLAG_TTL_S + get_settings().drain_delay_s))
    assert 1 <= _queued_drains(r) <= 1 + periods, r.lrange(get_settings().celery_ingest_queue, 0, -1)
    # a snapshot that can never be processed (no slab classes), in the middle of the backlog
    bad = ids[len(ids) // 2]
    with get_sessionmaker()() as db:
        db.execute(update(Snapshot).where(Snapshot.id == bad).values(classes=None))
        db.commit()

    # three drains at once, small batches, so they contend for the same servers
    results: list[dict[str, int]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            results.append(drain(batch=3))
        except BaseException as exc:  # reported below
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(3)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(600)  # a drain still running here read as a lost snapshot (at load 30 past 120 s)
    assert not any(t.is_alive() for t in threads), "a drain did not end within 600 s"
    assert not errors, errors
    # (the database may hold other tests' pending snapshots: they are drained too)
    assert sum(x["processed"] for x in results) >= len(ids) - 1, results
    assert sum(x["parked"] for x in results) >= 1, results

    with get_sessionmaker()() as db:
        rows = db.execute(
            select(Snapshot.id, Server.address, Snapshot.window_end, Snapshot.status, Snapshot.processed_at)
            .join(Server, Server.id == Snapshot.server_id)
            .where(Snapshot.id.in_(ids))
            .order_by(Server.address, Snapshot.window_end)
        ).all()
        curves = dict(
            db.execute(
                select(ServerCurve.snapshot_id, func.count())
                .where(ServerCurve.snapshot_id.in_(ids))
                .group_by(ServerCurve.snapshot_id)
            ).all()
        )
    status = {r.id: r.status for r in rows}
    assert status[bad] == "parked"
    assert {s for i, s in status.items() if i != bad} == {"processed"}
    # every good upload exactly one curve, the bad one none
    assert set(curves) == set(ids) - {bad} and set(curves.values()) == {1}
    # in window order per server
    by_server: dict[str, list[datetime]] = {}
    for row in rows:
        if row.id != bad:
            by_server.setdefault(row.address, []).append(row.processed_at)
    assert len(by_server) == SERVERS
    for address, times in by_server.items():
        assert times == sorted(times), f"{address}: out of window order"
    # a drain with nothing pending does nothing
    assert drain()["processed"] == 0
    r.close()


def test_a_drain_clears_the_queued_key_at_its_start_and_before_its_last_claim_only(
    private_env: dict[str, str], client: Any, org: Org, monkeypatch: Any
) -> None:
    """Each delete of the key lets the next upload publish another drain; deleting it before every
    claim queued hundreds of drains at 33 uploads/s that mostly found nothing (bench/results/
    2026-11-27-fleet-fifth-pass.md). A drain of several batches deletes it twice: when it starts,
    and before the claim that ends it (so nothing committed before that delete waits for a message)."""
    import hitcurve_worker.drain_tasks as dt

    tag = uuid.uuid4().hex[:6]
    start = datetime.now(UTC).replace(microsecond=0, second=0) - timedelta(hours=3)
    for w in range(3):
        for i in range(2):
            snap = synthetic_snapshot(
                address=f"10.31.{i}.1:11211-{tag}",
                n_classes=6,
                total_pages=64,
                seed=w,
                end=start + timedelta(minutes=w),
            )
            assert upload(client, org, snap).status_code == 202
    deletes: list[int] = []
    monkeypatch.setattr(dt, "drain_started", lambda: deletes.append(1) or drain_started())
    counts = drain(batch=2)
    assert counts["batches"] >= 3 and counts["processed"] >= 6, counts
    assert len(deletes) == 2, counts
