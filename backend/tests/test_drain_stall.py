"""After a worker dies holding the drain of the pending snapshots, curves resume within seconds
(the "a drain is queued" flag lives DRAIN_FLAG_TTL_S past the drain's delay, not 30 s), and
/health says degraded while uploads wait longer than Settings.drain_stall_s with no snapshot
processed meanwhile. Real Redis (the test's own queue) and PostgreSQL; no worker consumes."""

import time
import uuid
from datetime import UTC, datetime, timedelta

import redis
from sqlalchemy import update

from conftest import Account, upload_snapshot
from hitcurve.core import tasks
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.task_names import DRAIN_SNAPSHOTS
from hitcurve.models import Snapshot
from hitcurve_testing.waiting import wait_until


def _drains(messages: list[dict]) -> int:  # type: ignore[type-arg]
    return sum(m.get("headers", {}).get("task") == DRAIN_SNAPSHOTS for m in messages)


def test_a_drain_lost_with_its_worker_is_replaced_within_seconds(private_queue, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(get_settings(), "drain_delay_s", 1.0)
    client = redis.Redis.from_url(get_settings().redis_url)
    client.delete(tasks.drain_flag_key())
    assert tasks.request_drain()
    assert _drains(private_queue()) == 1
    # the worker that fetched it dies: the message is gone from the queue, the flag stays
    client.delete(get_settings().celery_ingest_queue)
    lost_at = time.monotonic()
    assert tasks.request_drain() and _drains(private_queue()) == 0  # still flagged: coalesced
    # the next uploads' requests publish a new drain once the flag has expired
    wait_until(
        lambda: tasks.request_drain() and _drains(private_queue()) == 1,
        "a new drain",
        timeout=60,
        interval=0.2,
    )
    waited = time.monotonic() - lost_at
    # within the flag's life past the 1 s delay (and the polling): seconds, not the 31 s it was
    assert waited < 10, waited
    client.delete(tasks.drain_flag_key())


def test_health_is_degraded_while_no_worker_drains(app, account: Account, private_queue, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    monkeypatch.setattr(get_settings(), "drain_stall_s", 3.0)
    _, snap = upload_snapshot(account, "10.7.7.7:11211")
    # an upload waiting 10 s and nothing processed within the last 3 s: the drains have stopped
    with get_sessionmaker()() as db:
        db.execute(
            update(Snapshot)
            .where(Snapshot.id == uuid.UUID(snap["snapshot_id"]))
            .values(received_at=datetime.now(UTC) - timedelta(seconds=10))
        )
        db.commit()
    body = account.get("/api/v1/health").json()
    queue = body["checks"]["queue"]
    assert body["status"] == "degraded" and queue["ok"] is False, body
    assert "no worker has drained" in queue["error"], queue
    # the same wait within the stall limit is a backlog being worked, not a stall (the limit past
    # the oldest pending upload: other tests of this worker's database may have left older ones)
    monkeypatch.setattr(get_settings(), "drain_stall_s", float(queue["oldest_pending_s"]) + 60.0)
    queue = account.get("/api/v1/health").json()["checks"]["queue"]
    assert "no worker has drained" not in queue.get("error", ""), queue
