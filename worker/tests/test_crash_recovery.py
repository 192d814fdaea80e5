"""A worker killed with SIGKILL in the middle of a task: the work is not lost, and after a restart
it completes exactly once (no duplicate rows)."""

from __future__ import annotations

import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from worker_helpers import Org, start_worker, upload, wait_for

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, ServerCurve, Snapshot
from hitcurve_testing.snapshots import synthetic_snapshot
from hitcurve_testing.waiting import DEADLINE_S
from hitcurve_worker.housekeeping import requeue

pytestmark = [pytest.mark.live, pytest.mark.slow]


def _row(sid: uuid.UUID) -> tuple[str, int, int, int]:
    with get_sessionmaker()() as s:
        st, attempts = s.execute(select(Snapshot.status, Snapshot.attempts).where(Snapshot.id == sid)).one()
        curves = s.execute(
            select(func.count()).select_from(ServerCurve).where(ServerCurve.snapshot_id == sid)
        ).scalar_one()
        acc = s.execute(
            select(func.count()).select_from(AccuracyRecord).where(AccuracyRecord.snapshot_id == sid)
        ).scalar_one()
    return st, int(attempts), int(curves), int(acc)


def test_sigkill_mid_task_then_restart_completes_once(
    private_env: dict[str, str], client: Any, org: Org, celery_client: Any
) -> None:
    # The first worker holds each snapshot's transaction open for 30 s before committing (the
    # uploads' drain takes both in one batch, one transaction).
    w1 = start_worker({**private_env, "HITCURVE_WORKER_TEST_PAUSE_S": "30"}, "crash", concurrency=2)
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=2)
    ids = []
    try:
        for i in range(2):
            snap = synthetic_snapshot(
                address=f"10.4.0.{i}:11211", n_classes=20, total_pages=128, end=end, hit_ratio=0.6, seed=i
            )
            assert upload(client, org, snap).status_code == 202
            ids.append(uuid.UUID(snap["snapshot_id"]))
        for sid in ids:  # both tasks started (their attempt is committed) and sit inside the pause
            wait_for(lambda sid=sid: _row(sid)[1] >= 1, what="the tasks to start")
        time.sleep(1.0)
        assert w1.proc.poll() is None
    finally:
        w1.kill()
    for sid in ids:
        assert _row(sid) == ("pending", 1, 0, 0), "killed mid-task: nothing committed, still pending"

    w2 = start_worker(private_env, "recover", concurrency=2)
    try:
        # The messages of the killed worker stay unacknowledged in Redis until the visibility
        # timeout; the beat job re-enqueues pending work older than a minute (here: at once).
        # (pending snapshots get one drain between them, hitcurve.drain_snapshots)
        counts = requeue(min_age_s=0, sender=celery_client)
        assert counts["snapshots_drained"] >= 2, counts
        for sid in ids:
            wait_for(lambda sid=sid: _row(sid)[0] == "processed", what="the snapshot after the restart")
        for sid in ids:
            assert _row(sid) == ("processed", 2, 1, 1)
        # A late redelivery of the original message (or a second re-enqueue) changes nothing.
        for sid in ids:
            assert (
                celery_client.send_task("hitcurve.process_snapshot", args=[str(sid)]).get(timeout=DEADLINE_S)[
                    "status"
                ]
                == "nothing-to-do"
            )
            assert _row(sid) == ("processed", 2, 1, 1)
    finally:
        w2.stop()
