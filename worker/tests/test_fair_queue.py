"""Per-organization fairness of the batch lane (hitcurve.core.fairqueue, fair_tasks): one
organization's large simulation runs cannot delay another organization's small run beyond its
share. Real PostgreSQL, Redis and a Celery worker; the assertion counts units of work in the
order the worker ran them, never seconds."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import func, select
from worker_helpers import Org, make_org, start_worker, upload, wait_for

from hitcurve.core import fairqueue
from hitcurve.core import task_names as names
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.tasks import enqueue_simulation
from hitcurve.models import Server, SimulationResult, SimulationRun, TraceChunk
from hitcurve_testing.snapshots import make_trace_chunk

pytestmark = [pytest.mark.live, pytest.mark.slow]

BIG_RUNS = 4
BIG_POLICIES = ["lru", "fifo", "clock", "gclock", "sieve", "s3fifo", "twoq", "lfu", "arc", "lirs"]
SIZES = [1 << 20, 2 << 20, 4 << 20, 8 << 20]


def _server_with_trace(client: Any, org: Org, n: int) -> uuid.UUID:
    address = f"10.34.{n}.1:{uuid.uuid4().int % 60000}"
    ids = []
    for i in range(2):
        body = make_trace_chunk(address, records=6000, seq=i, seed=n * 10 + i)
        assert upload(client, org, body, kind="traces").status_code == 202
        ids.append(uuid.UUID(body["chunk_id"]))

    def processed() -> bool:
        with get_sessionmaker()() as db:
            st = db.execute(select(TraceChunk.status).where(TraceChunk.id.in_(ids))).scalars().all()
        return len(st) == 2 and set(st) == {"processed"}

    wait_for(processed, what="the trace chunks")
    with get_sessionmaker()() as db:
        return db.execute(select(Server.id).where(Server.address == address)).scalar_one()


def _run(org: Org, server_id: uuid.UUID, policies: list[str]) -> uuid.UUID:
    now = datetime.now(UTC)
    with get_sessionmaker()() as db:
        run = SimulationRun(
            org_id=org.id,
            server_id=server_id,
            policies=policies,
            sizes_bytes=SIZES,
            window_start=now - timedelta(hours=1),
            window_end=now + timedelta(minutes=1),
        )
        db.add(run)
        db.commit()
        return run.id


def _units_done(run_ids: list[uuid.UUID], before: datetime | None = None) -> int:
    """(run, policy) units with all their results stored (before the given time, when given)."""
    with get_sessionmaker()() as db:
        q = (
            select(SimulationResult.run_id, SimulationResult.policy, func.max(SimulationResult.computed_at))
            .where(SimulationResult.run_id.in_(run_ids))
            .group_by(SimulationResult.run_id, SimulationResult.policy)
            .having(func.count() == len(SIZES))
        )
        rows = db.execute(q).all()
    return sum(1 for _, _, at in rows if before is None or at < before)


def _status(run_id: uuid.UUID) -> tuple[str, datetime | None]:
    with get_sessionmaker()() as db:
        r = db.get(SimulationRun, run_id)
        assert r is not None
        return r.status, r.finished_at


def test_a_small_run_is_not_queued_behind_another_organizations_large_runs(
    private_env: dict[str, str], client: Any
) -> None:
    big, small = make_org("Fair Big Org"), make_org("Fair Small Org")
    # one process for everything: the order in which it takes the batch units is the measure
    worker = start_worker(private_env, "fair", concurrency=1)
    try:
        big_server = _server_with_trace(client, big, 1)
        small_server = _server_with_trace(client, small, 2)
        big_runs = [_run(big, big_server, BIG_POLICIES) for _ in range(BIG_RUNS)]
        for rid in big_runs:
            enqueue_simulation(big.id, rid)
        total = BIG_RUNS * len(BIG_POLICIES)
        # the other organization asks once the worker is busy with the large runs
        wait_for(lambda: _units_done(big_runs) >= 1, what="the first unit of the large runs")
        small_run = _run(small, small_server, ["lru"])
        enqueue_simulation(small.id, small_run)
        with get_sessionmaker()() as db:
            asked_at = db.execute(
                select(SimulationRun.created_at).where(SimulationRun.id == small_run)
            ).scalar_one()
        wait_for(lambda: _status(small_run)[0] == "done", 300, "the small run")
        finished = _status(small_run)[1]
        assert finished is not None
        wait_for(lambda: all(_status(r)[0] == "done" for r in big_runs), 600, "the large runs")

        before_ask = _units_done(big_runs, asked_at)
        during = _units_done(big_runs, finished) - before_ask
        outstanding = total - before_ask
        print(f"small run asked with {outstanding} large units outstanding; it waited for {during}")
        # first in, first out the small run would wait for every outstanding unit of the large
        # runs; served round-robin it waits for at most the unit running when it was asked and
        # one per turn of the large organization (its run's dispatch, then its one policy)
        assert outstanding >= 10, f"the large runs were nearly done first ({before_ask})"
        assert during <= 3, f"the small run waited for {during} of {outstanding} outstanding units"
        # nothing is left on the fair queue, and every unit ran once
        r = redis.Redis.from_url(private_env["HITCURVE_REDIS_URL"])
        try:
            assert fairqueue.waiting(r) == {}
        finally:
            r.close()
        assert _units_done(big_runs) == total
    finally:
        worker.stop()


def test_take_serves_organizations_round_robin_and_each_in_order(private_env: dict[str, str]) -> None:
    r = redis.Redis.from_url(private_env["HITCURVE_REDIS_URL"])
    try:
        a, b, c = (str(uuid.uuid4()) for _ in range(3))
        for i in range(5):
            fairqueue.push(r, a, names.SIMULATE_POLICY, [f"a{i}"])
        fairqueue.push(r, b, names.SIMULATE_POLICY, ["b0"])
        fairqueue.push(r, c, names.SIMULATE_POLICY, ["c0"])
        fairqueue.push(r, b, names.SIMULATE_POLICY, ["b1"])
        assert fairqueue.waiting(r) == {a: 5, b: 2, c: 1}
        order = []
        while (got := fairqueue.take(r)) is not None:
            order.append(got[2][0])
        assert order == ["a0", "b0", "c0", "a1", "b1", "a2", "a3", "a4"]
        assert fairqueue.waiting(r) == {}
        # an organization that comes back after its list emptied joins the ring again
        fairqueue.push(r, b, names.RUN_SIMULATION, ["again"])
        assert fairqueue.take(r) == (b, names.RUN_SIMULATION, ["again"])
    finally:
        r.close()


def test_the_reenqueue_job_puts_lost_runs_back_and_gives_waiting_units_a_turn(
    private_env: dict[str, str],
) -> None:
    from hitcurve_worker.housekeeping import requeue

    class Recorder:
        def __init__(self) -> None:
            self.sent: list[str] = []

        def send_task(self, name: str, args: list[str] | None = None, **_: Any) -> None:
            self.sent.append(name)

    org = make_org("Fair Lost Org")
    # a run the API stored while the broker was down: never queued
    with get_sessionmaker()() as db:
        server = Server(org_id=org.id, address=f"10.34.9.1:{uuid.uuid4().int % 60000}", instance_id="1-1")
        db.add(server)
        db.commit()
        server_id = server.id
    lost = _run(org, server_id, ["lru"])
    r = redis.Redis.from_url(private_env["HITCURVE_REDIS_URL"])
    try:
        r.delete(*(r.keys("hitcurve:fair:*") or ["-"]))
        rec = Recorder()
        counts = requeue(min_age_s=0, sender=rec)
        assert counts["simulation_runs_requeued"] >= 1
        # on its organization's fair queue, with a turn; the batch queue is empty, so the units
        # waiting (its own and any other's) got turns too
        assert fairqueue.waiting(r)[str(org.id)] == 1
        units = sum(fairqueue.waiting(r).values())
        assert counts["fair_units_waiting"] == units and counts["fair_turns_published"] == units
        assert rec.sent.count(names.FAIR_TURN) == counts["simulation_runs_requeued"] + units
        with get_sessionmaker()() as db:
            assert db.get(SimulationRun, lost).enqueued_at is not None  # type: ignore[union-attr]
        # while turns wait on the batch queue, no more are added
        r.rpush(get_settings().celery_batch_queue, "a-turn")
        again = Recorder()
        counts = requeue(min_age_s=3600, sender=again)
        assert counts["fair_turns_published"] == 0 and names.FAIR_TURN not in again.sent
    finally:
        r.delete(get_settings().celery_batch_queue, *(r.keys("hitcurve:fair:*") or ["-"]))
        r.close()
