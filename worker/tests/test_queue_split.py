"""Queue split: uploads and policy simulations run on separate Celery queues, each with
its own workers (as scripts/supervise.sh runs them), so a burst of simulations never delays a
snapshot's curve. Real PostgreSQL, Redis and worker processes; no timed assertions: the curve is
stored while every simulation of the burst is still queued, then the batch worker drains them."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import func, select
from worker_helpers import Org, start_worker, upload, wait_for

from hitcurve.core import fairqueue
from hitcurve.core import task_names as names
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.tasks import enqueue_simulation, queue_for
from hitcurve.models import Server, ServerCurve, SimulationRun, Snapshot
from hitcurve_testing.snapshots import synthetic_snapshot

pytestmark = pytest.mark.slow

BURST = 40


def test_every_task_has_a_lane_and_the_lanes_are_two_queues() -> None:
    every = {
        v for k, v in vars(names).items() if k.isupper() and isinstance(v, str) and v.startswith("hitcurve.")
    }
    assert every == set(names.LANES), "a task name without a queue (task_names.LANES)"
    s = get_settings()
    assert queue_for(names.PROCESS_SNAPSHOT) == queue_for(names.PROCESS_TRACE_CHUNK) == s.celery_ingest_queue
    for t in (names.RUN_SIMULATION, names.SIMULATE_POLICY, names.SEND_REPORT, names.DOWNSAMPLE_HISTORY):
        assert queue_for(t) == s.celery_batch_queue
    assert s.celery_ingest_queue != s.celery_batch_queue


def _processed_curve(sid: uuid.UUID) -> bool:
    with get_sessionmaker()() as db:
        st = db.execute(select(Snapshot.status).where(Snapshot.id == sid)).scalar_one_or_none()
        n = db.execute(select(func.count()).where(ServerCurve.snapshot_id == sid)).scalar_one()
    return st == "processed" and n == 1


@pytest.mark.live
def test_simulation_burst_does_not_delay_a_snapshot(
    private_env: dict[str, str], client: Any, org: Org
) -> None:
    s = get_settings()
    r = redis.Redis.from_url(private_env["HITCURVE_REDIS_URL"])
    ingest = start_worker(private_env, "ingest-only", concurrency=1, queues=s.celery_ingest_queue)
    batch = None
    try:
        end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=10)
        address = f"10.19.0.1:{uuid.uuid4().int % 60000}"
        first = synthetic_snapshot(address=address, n_classes=30, total_pages=256, end=end, hit_ratio=0.7)
        assert upload(client, org, first).status_code == 202
        wait_for(lambda: _processed_curve(uuid.UUID(first["snapshot_id"])), what="the first curve")
        with get_sessionmaker()() as db:
            server_id = db.execute(select(Server.id).where(Server.address == address)).scalar_one()
            runs = [
                SimulationRun(
                    org_id=org.id,
                    server_id=server_id,
                    policies=["lru", "clock"],
                    sizes_bytes=[64 << 20, 128 << 20],
                    window_start=end - timedelta(hours=1),
                    window_end=end,
                )
                for _ in range(BURST)
            ]
            db.add_all(runs)
            db.commit()
            run_ids = [x.id for x in runs]
        # the burst, queued the way the API queues a simulation request: each run on its
        # organization's fair queue and a turn for it on the batch queue
        for rid in run_ids:
            enqueue_simulation(org.id, rid)
        assert r.llen(s.celery_batch_queue) == BURST
        assert fairqueue.waiting(r) == {str(org.id): BURST}

        second = synthetic_snapshot(
            address=address, n_classes=30, total_pages=256, end=end + timedelta(minutes=1), hit_ratio=0.7
        )
        assert upload(client, org, second).status_code == 202
        wait_for(lambda: _processed_curve(uuid.UUID(second["snapshot_id"])), what="the second curve")
        # the curve is stored while the whole burst still waits on its own queue
        assert r.llen(s.celery_batch_queue) == BURST
        with get_sessionmaker()() as db:
            pending = db.execute(
                select(func.count()).where(SimulationRun.id.in_(run_ids), SimulationRun.status == "pending")
            ).scalar_one()
        assert pending == BURST
        # /health names the queue nobody consumes and its depth
        health = client.get("/api/v1/health").json()["checks"]
        assert health["queue"]["queues"]["batch"]["depth"] == BURST
        assert health["queue"]["queues"]["ingest"]["depth"] == 0
        assert health["workers"]["consumers"] == {"ingest": 1, "batch": 0}
        assert "batch queue" in health["workers"]["error"]

        # a batch worker drains the burst: every run leaves `pending` (these have no trace
        # chunks, so run_simulation fails them with the reason)
        batch = start_worker(private_env, "batch-only", concurrency=1, queues=s.celery_batch_queue)
        wait_for(lambda: r.llen(s.celery_batch_queue) == 0, 300, "the batch queue to drain")
        wait_for(lambda: fairqueue.waiting(r) == {}, 300, "the fair queue to drain")

        def settled() -> bool:
            with get_sessionmaker()() as db:
                left = db.execute(
                    select(func.count()).where(
                        SimulationRun.id.in_(run_ids), SimulationRun.status == "pending"
                    )
                ).scalar_one()
            return left == 0

        wait_for(settled, 300, "every simulation run to be handled by the batch worker")
        with get_sessionmaker()() as db:
            errors = set(
                db.execute(select(SimulationRun.error).where(SimulationRun.id.in_(run_ids))).scalars().all()
            )
        assert len(errors) == 1 and "no trace chunks" in str(errors.pop())
    finally:
        ingest.stop()
        if batch is not None:
            batch.stop()
        r.close()
