"""Periodic jobs (Celery beat, see schedule.py): re-enqueue work that was never picked up or was
lost with a killed worker, give up on work that failed too often, agent-silent alerts, history
downsampling and retention, trace-chunk retention. Every job is idempotent and bounded."""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import Any

import redis
from celery import Task
from sqlalchemy import and_, delete, func, or_, select, text, update

from hitcurve.core import task_names as names
from hitcurve.core.config import get_settings
from hitcurve.core.tasks import queue_for
from hitcurve.crud import notifications
from hitcurve.models import (
    ClusterCurve,
    Server,
    ServerCurve,
    SimulationRun,
    Snapshot,
    SnapshotClass,
    TraceChunk,
)
from hitcurve.notify import server_name
from hitcurve_worker import alerts as rules
from hitcurve_worker.celery_app import app
from hitcurve_worker.notification_tasks import enqueue_remembered
from hitcurve_worker.reliability import MAX_ATTEMPTS, RETRY_OPTS, now, session
from hitcurve_worker.settings import worker_settings
from hitcurve_worker.snapshot_tasks import upsert_alert

log = logging.getLogger("hitcurve.worker.housekeeping")


_S = worker_settings()
REQUEUE_AFTER_S = _S.requeue_after_s
SIM_STALE_S = _S.sim_stale_s
REQUEUE_BATCH = 500
HOURLY_AFTER = timedelta(days=_S.history_hourly_after_days)
DAILY_AFTER = timedelta(days=_S.history_daily_after_days)
RETENTION = timedelta(days=_S.retention_days)
PAYLOAD_RETENTION = timedelta(days=_S.payload_retention_days)
TRACE_RETENTION = timedelta(days=_S.trace_retention_days)


def _exec(db: Any, stmt: Any, params: Any = None) -> Any:
    """Session.execute, typed loosely: DML results carry rowcount (CursorResult)."""
    return db.execute(stmt, params) if params is not None else db.execute(stmt)


def queue_depth(queue: str) -> int | None:
    """Messages waiting in a broker queue; None when the broker cannot say."""
    try:
        client = redis.Redis.from_url(get_settings().redis_url, socket_timeout=5, socket_connect_timeout=5)
        try:
            return int(client.llen(queue))
        finally:
            client.close()
    except redis.RedisError:
        return None


def requeue(
    min_age_s: float = REQUEUE_AFTER_S, at: datetime | None = None, sender: Any = None
) -> dict[str, int]:
    """Hand pending/failed work older than min_age_s to Celery again; park what failed too often.

    No amplification under backlog: while a task's queue still holds messages, the workers are
    behind, not short of messages, so only rows that were never handed over (enqueued_at NULL:
    the broker was down) go again. Once the queue is empty, rows still pending after min_age_s
    lost their message (a killed worker's unacknowledged task waits for the visibility timeout)
    and go again; a duplicate of a message a worker still holds changes nothing."""
    at = at or now()
    sender = sender or app
    cutoff = at - timedelta(seconds=min_age_s)
    counts: dict[str, int] = {}
    jobs = ((Snapshot, names.PROCESS_SNAPSHOT), (TraceChunk, names.PROCESS_TRACE_CHUNK))
    with session() as db:
        for model, task in jobs:
            depth = queue_depth(queue_for(task))
            busy = [model.enqueued_at.is_(None)] if depth else []
            parked = _exec(
                db,
                update(model)
                .where(
                    model.status.in_(("pending", "failed")),
                    model.attempts >= MAX_ATTEMPTS,
                    func.coalesce(model.enqueued_at, model.received_at) < cutoff,
                )
                .values(
                    status="parked",
                    processed_at=at,
                    error=func.concat(
                        f"gave up after {MAX_ATTEMPTS} attempts; last error: ",
                        func.coalesce(model.error, "none"),
                    ),
                ),
            ).rowcount
            ids = (
                _exec(
                    db,
                    select(model.id)
                    .where(
                        model.status.in_(("pending", "failed")),
                        model.attempts < MAX_ATTEMPTS,
                        func.coalesce(model.enqueued_at, model.received_at) < cutoff,
                        *busy,
                    )
                    .order_by(model.received_at)
                    .limit(REQUEUE_BATCH)
                    .with_for_update(skip_locked=True),
                )
                .scalars()
                .all()
            )
            for i in ids:
                sender.send_task(task, args=[str(i)], queue=queue_for(task))
            if ids:
                _exec(db, update(model).where(model.id.in_(ids)).values(enqueued_at=at))
            db.commit()
            counts[f"{model.__tablename__}_requeued"] = len(ids)
            counts[f"{model.__tablename__}_queue_depth"] = -1 if depth is None else depth
            counts[f"{model.__tablename__}_parked"] = int(parked or 0)
        # Simulation runs: never enqueued, or running without finishing (a lost chord).
        stale = at - timedelta(seconds=SIM_STALE_S)
        runs = (
            _exec(
                db,
                select(SimulationRun.id)
                .where(
                    or_(
                        and_(
                            SimulationRun.status == "pending",
                            func.coalesce(SimulationRun.enqueued_at, SimulationRun.created_at) < cutoff,
                        ),
                        and_(SimulationRun.status == "running", SimulationRun.enqueued_at < stale),
                    )
                )
                .limit(REQUEUE_BATCH)
                .with_for_update(skip_locked=True),
            )
            .scalars()
            .all()
        )
        for r in runs:
            sender.send_task(names.RUN_SIMULATION, args=[str(r)], queue=queue_for(names.RUN_SIMULATION))
        if runs:
            _exec(db, update(SimulationRun).where(SimulationRun.id.in_(runs)).values(enqueued_at=at))
        db.commit()
        counts["simulation_runs_requeued"] = len(runs)
        # Alert deliveries due for a while whose task was lost (broker down, worker killed).
        due = notifications.due_deliveries(db, cutoff, REQUEUE_BATCH)
        for d in due:
            sender.send_task(names.DELIVER_ALERT, args=[d], queue=queue_for(names.DELIVER_ALERT))
        counts["alert_deliveries_requeued"] = len(due)
    return counts


def silent_agents(at: datetime | None = None) -> int:
    """Open (or resolve) the agent-silent alert of every server that ever sent a snapshot."""
    at = at or now()
    th = rules.Thresholds.from_env()
    firing = 0
    with session() as db:
        rows = _exec(
            db,
            select(Server.id, Server.org_id, Server.last_snapshot_at, Server.address, Server.hostname).where(
                Server.last_snapshot_at.is_not(None)
            ),
        ).all()
        for sid, org, last, address, hostname in rows:
            f = rules.stale_agent(f"server {server_name(address, hostname)}", last, at, th)
            firing += f is not None
            upsert_alert(db, org, rules.STALE_AGENT, f, server_id=sid, at=at)
        db.commit()
        enqueue_remembered(db)
    return firing


def _thin(db: Any, model: Any, subject: Any, older_than: datetime, bucket: str) -> int:
    """Keep the newest row per subject and `bucket` (hour/day) among rows older than older_than."""
    table = model.__tablename__
    col = subject.key
    res = _exec(
        db,
        text(
            f"DELETE FROM {table} t USING (SELECT id, row_number() OVER (PARTITION BY {col},"  # noqa: S608
            f" date_trunc('{bucket}', window_end) ORDER BY window_end DESC, id DESC) AS rn FROM {table}"
            f" WHERE window_end < :cut) d WHERE t.id = d.id AND d.rn > 1"
        ),
        {"cut": older_than},
    )
    return int(res.rowcount or 0)


def downsample_and_retain(at: datetime | None = None) -> dict[str, int]:
    at = at or now()
    out: dict[str, int] = {}
    with session() as db:
        for model, subject in ((ServerCurve, ServerCurve.server_id), (ClusterCurve, ClusterCurve.cluster_id)):
            name = model.__tablename__
            out[f"{name}_hourly"] = _thin(db, model, subject, at - HOURLY_AFTER, "hour")
            out[f"{name}_daily"] = _thin(db, model, subject, at - DAILY_AFTER, "day")
            out[f"{name}_expired"] = int(
                _exec(db, delete(model).where(model.window_end < at - RETENTION)).rowcount or 0
            )
        # Snapshots keep their row (the accuracy record hangs on it) but lose the bulky payload and
        # class curves once processed and old; all of it goes after the retention period.
        old = select(Snapshot.id).where(
            Snapshot.window_end < at - PAYLOAD_RETENTION, Snapshot.status.in_(("processed", "parked"))
        )
        out["snapshot_classes_dropped"] = int(
            _exec(
                db,
                delete(SnapshotClass).where(
                    SnapshotClass.snapshot_id.in_(old.where(Snapshot.payload_gzip.is_not(None)))
                ),
            ).rowcount
            or 0
        )
        out["snapshot_payloads_dropped"] = int(
            _exec(
                db,
                update(Snapshot)
                .where(Snapshot.id.in_(old), Snapshot.payload_gzip.is_not(None))
                .values(payload_gzip=None),
            ).rowcount
            or 0
        )
        out["snapshots_expired"] = int(
            _exec(db, delete(Snapshot).where(Snapshot.window_end < at - RETENTION)).rowcount or 0
        )
        out["trace_chunks_expired"] = int(
            _exec(db, delete(TraceChunk).where(TraceChunk.window_end < at - TRACE_RETENTION)).rowcount or 0
        )
        db.commit()
    return out


@app.task(name=names.REQUEUE_STALE, bind=True, **RETRY_OPTS)
def requeue_stale(self: Task) -> dict[str, int]:
    return requeue()


@app.task(name=names.CHECK_SILENT_AGENTS, bind=True, **RETRY_OPTS)
def check_silent_agents(self: Task) -> int:
    return silent_agents()


@app.task(name=names.DOWNSAMPLE_HISTORY, bind=True, **RETRY_OPTS)
def downsample_history(self: Task) -> dict[str, int]:
    return downsample_and_retain()
