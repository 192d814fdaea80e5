"""Periodic jobs (Celery beat, see schedule.py): re-enqueue work that was never picked up or was
lost with a killed worker, give up on work that failed too often, agent-silent alerts, history
downsampling and retention, trace-chunk and expired account-link retention. Every job is
idempotent and bounded."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime, timedelta
from typing import Any

import redis
from celery import Task
from sqlalchemy import and_, delete, func, or_, select, text, update

from hitcurve.core import accepting, fairqueue, partitions
from hitcurve.core import task_names as names
from hitcurve.core.config import get_settings
from hitcurve.core.tasks import _broker_client, queue_for, request_drain, snapshot_args
from hitcurve.crud import accounts, notifications
from hitcurve.models import (
    Server,
    SimulationRun,
    Snapshot,
    TraceChunk,
)
from hitcurve.notify.payloads import server_name
from hitcurve.rules import alerts as rules
from hitcurve_worker import snapshot_store as store
from hitcurve_worker.celery_app import app
from hitcurve_worker.drain_tasks import CLAIM_SPAN
from hitcurve_worker.notification_tasks import enqueue_remembered
from hitcurve_worker.reliability import MAX_ATTEMPTS, RETRY_OPTS, now, session
from hitcurve_worker.settings import WorkerSettings, worker_settings

log = logging.getLogger("hitcurve.worker.housekeeping")


_S = worker_settings()
REQUEUE_AFTER_S = _S.requeue_after_s
SIM_STALE_S = _S.sim_stale_s
REQUEUE_BATCH = 500


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


def _not_drained(at: datetime) -> Any:
    """Snapshots no drain claims: failed ones, and pending ones older than its span."""
    return or_(Snapshot.status == "failed", Snapshot.window_end < at - CLAIM_SPAN)


def _request_drain(db: Any, at: datetime, cutoff: datetime, busy: list[Any], sender: Any) -> int:
    """Pending snapshots a drain claims, waiting since before cutoff (their drain was lost with a
    killed worker, or the broker was down): one drain for all of them, their enqueued_at set."""
    keys = (
        Snapshot.status == "pending",
        Snapshot.attempts < MAX_ATTEMPTS,
        Snapshot.window_end >= at - CLAIM_SPAN,
        func.coalesce(Snapshot.enqueued_at, Snapshot.received_at) < cutoff,
        *busy,
    )
    n = int(
        _exec(
            db,
            select(func.count()).select_from(
                select(Snapshot.id).where(*keys).limit(REQUEUE_BATCH).subquery()
            ),
        ).scalar_one()
    )
    if n and request_drain(0.0, sender=sender):
        _exec(db, update(Snapshot).where(*keys).values(enqueued_at=at))
        db.commit()
        return n
    return 0


def requeue(
    min_age_s: float = REQUEUE_AFTER_S, at: datetime | None = None, sender: Any = None
) -> dict[str, int]:
    """Hand pending/failed work older than min_age_s to Celery again; park what failed too often.

    Pending snapshots a drain claims (drain_tasks) get one drain between them (request_drain:
    none if one is queued); failed ones and those older than the drain's span go one by one
    (process_snapshot). No amplification under backlog: while a task's queue still holds
    messages, the workers are behind, not short of messages, so only rows that were never
    handed over (enqueued_at NULL: the broker was down) go again. Once the queue is empty, rows
    still pending after min_age_s lost their message (a killed worker's unacknowledged task
    waits for the visibility timeout) and go again; a duplicate of a message a worker still
    holds changes nothing."""
    at = at or now()
    sender = sender or app
    cutoff = at - timedelta(seconds=min_age_s)
    counts: dict[str, int] = {}
    jobs = ((Snapshot, names.PROCESS_SNAPSHOT), (TraceChunk, names.PROCESS_TRACE_CHUNK))
    with session() as db:
        for model, task in jobs:
            depth = queue_depth(queue_for(task))
            busy = [model.enqueued_at.is_(None)] if depth else []
            if model is Snapshot:
                # pending snapshots a drain claims: one drain for all of them (drain_tasks)
                counts["snapshots_drained"] = _request_drain(db, at, cutoff, busy, sender)
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
            # a snapshot's task carries its window end (snapshot_args: the worker then reads that
            # day's partition, not all of them); a trace chunk's only its id
            keys = (model.id, model.window_end) if model is Snapshot else (model.id,)
            rows = _exec(
                db,
                select(*keys)
                .where(
                    model.status.in_(("pending", "failed")),
                    model.attempts < MAX_ATTEMPTS,
                    func.coalesce(model.enqueued_at, model.received_at) < cutoff,
                    *busy,
                    *([_not_drained(at)] if model is Snapshot else []),
                )
                .order_by(model.received_at)
                .limit(REQUEUE_BATCH)
                .with_for_update(skip_locked=True),
            ).all()
            for r in rows:
                extra = [snapshot_args(r[1])] if model is Snapshot else []
                sender.send_task(task, args=[str(r[0]), *extra], queue=queue_for(task))
            ids = [r[0] for r in rows]
            if rows:
                bound = [model.window_end.in_({r[1] for r in rows})] if model is Snapshot else []
                _exec(db, update(model).where(model.id.in_(ids), *bound).values(enqueued_at=at))
            db.commit()
            counts[f"{model.__tablename__}_requeued"] = len(ids)
            counts[f"{model.__tablename__}_queue_depth"] = -1 if depth is None else depth
            counts[f"{model.__tablename__}_parked"] = int(parked or 0)
        # Simulation runs: never enqueued, or running without finishing (a policy task lost).
        stale = at - timedelta(seconds=SIM_STALE_S)
        runs = (
            _exec(
                db,
                select(SimulationRun.id, SimulationRun.org_id)
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
            .all()
        )
        # back on their organization's fair queue, as the API queues them
        broker = _broker_client()
        for rid, org_id in runs:
            fairqueue.push(broker, org_id, names.RUN_SIMULATION, [str(rid)])
        fairqueue.publish_turns(sender, len(runs))
        if runs:
            ids = [rid for rid, _ in runs]
            _exec(db, update(SimulationRun).where(SimulationRun.id.in_(ids)).values(enqueued_at=at))
        db.commit()
        counts["simulation_runs_requeued"] = len(runs)
        # Units waiting on the fair queue with no turn left to run them (a turn lost with the
        # broker, or a publish that failed after its unit was pushed): turns for them, only while
        # the batch queue is empty (spare turns find nothing and do nothing).
        waiting = sum(fairqueue.waiting(broker).values())
        idle = waiting and queue_depth(get_settings().celery_batch_queue) == 0
        turns = min(waiting, REQUEUE_BATCH) if idle else 0
        fairqueue.publish_turns(sender, turns)
        counts["fair_units_waiting"] = waiting
        counts["fair_turns_published"] = turns
        # Alert deliveries due for a while whose task was lost (broker down, worker killed).
        due = notifications.due_deliveries(db, cutoff, REQUEUE_BATCH)
        for d in due:
            sender.send_task(names.DELIVER_ALERT, args=[d], queue=queue_for(names.DELIVER_ALERT))
        counts["alert_deliveries_requeued"] = len(due)
    return counts


# Servers per statement of the agent-silent check.
SILENT_BATCH = 1000


def silent_agents(at: datetime | None = None) -> int:
    """Open (or resolve) the agent-silent alert of every server that ever sent a snapshot. A
    silence counts only while the backend accepted uploads (hitcurve.core.accepting): while no API
    process does, nothing changes; after a restart, silence counts from the restart."""
    at = at or now()
    th = rules.Thresholds.from_env()
    client = redis.Redis.from_url(get_settings().redis_url, socket_timeout=5, socket_connect_timeout=5)
    try:
        since_s = accepting.accepting_since(client)
    finally:
        client.close()
    if since_s is None:
        log.info("agent-silent check skipped: no API process accepts uploads")
        return 0
    since = datetime.fromtimestamp(since_s, UTC)
    firing = 0
    with session() as db:
        rows = _exec(
            db,
            select(Server.id, Server.org_id, Server.last_snapshot_at, Server.address, Server.hostname).where(
                Server.last_snapshot_at.is_not(None)
            ),
        ).all()
        changes = []
        for sid, org, last, address, hostname in rows:
            f = rules.stale_agent(f"server {server_name(address, hostname)}", last, at, th, since)
            firing += f is not None
            changes.append(((org, None, sid), [(rules.STALE_AGENT, f)]))
        # many servers per statement: one statement per server cost the ingest worker ~13 % of
        # its CPU at 10,000 servers (py-spy under bench/fleet, 2026-12-04)
        for at_ in range(0, len(changes), SILENT_BATCH):
            store.upsert_alerts_of(db, changes[at_ : at_ + SILENT_BATCH], at)
        db.commit()
        enqueue_remembered(db)
    return firing


# Downsampling levels, finest first: "full" keeps every window, "hour"/"day" the newest window
# of each server (cluster) and UTC hour/day.
LEVELS = ("full", "hour", "day")


def _level(day_end: datetime, at: datetime, hourly_after_days: float, daily_after_days: float) -> str:
    """The coarsest level a day's rows are due for once the whole day is old enough."""
    if day_end <= at - timedelta(days=daily_after_days):
        return "day"
    if day_end <= at - timedelta(days=hourly_after_days):
        return "hour"
    return "full"


def _coarser(want: str, have: str) -> bool:
    return LEVELS.index(want) > LEVELS.index(have)


def _p(table: str, day: Any) -> str:
    return f"{partitions.SCHEMA}.{partitions.name(table, day)}"


# The snapshots of a day's partition that a level does not keep: all but the newest of each server
# and hour/day (a processed one before one still pending).
_GONE = """
SELECT id FROM (
  SELECT id, row_number() OVER (
           PARTITION BY server_id, date_trunc(:level, window_end, 'UTC')
           ORDER BY (status = 'processed') DESC, window_end DESC, id DESC) AS rn
  FROM {snapshots}
) ranked WHERE rn > 1
"""


# Table names below are partitions.name() of a date, never input.
_THIN_CLASSES = (
    "UPDATE {snapshots} t SET classes = NULL FROM ({gone}) g WHERE t.id = g.id AND t.classes IS NOT NULL"
)
_THIN_MERGED = """
WITH gone AS MATERIALIZED ({gone}),
c AS (DELETE FROM {curves} t USING gone WHERE t.snapshot_id = gone.id RETURNING 1),
a AS (DELETE FROM {accuracy} t USING gone WHERE t.snapshot_id = gone.id RETURNING 1),
s AS (DELETE FROM {snapshots} t USING gone WHERE t.id = gone.id RETURNING 1)
SELECT (SELECT count(*) FROM s) AS s, (SELECT count(*) FROM c) AS c, (SELECT count(*) FROM a) AS a
"""
_THIN_CLUSTERS = """
DELETE FROM {table} t USING (
  SELECT id, row_number() OVER (PARTITION BY cluster_id, date_trunc(:level, computed_at, 'UTC')
                                ORDER BY computed_at DESC, id DESC) AS rn
  FROM {table}
) d WHERE t.id = d.id AND d.rn > 1
"""
_DROP_PAYLOADS = (
    "UPDATE {snapshots} SET payload_gzip = NULL"
    " WHERE payload_gzip IS NOT NULL AND status IN ('processed', 'parked')"
)


def _thin_classes(db: Any, day: Any, level: str) -> int:
    """Per-class curves of a day down to `level`: only the kept snapshots keep their classes
    (snapshots.classes); the number of snapshots whose classes went."""
    gone = _GONE.format(snapshots=_p("snapshots", day))
    sql = _THIN_CLASSES.format(snapshots=_p("snapshots", day), gone=gone)
    return int(_exec(db, text(sql), {"level": level}).rowcount or 0)


def _thin_merged(db: Any, day: Any, level: str) -> dict[str, int]:
    """A day's snapshots with their server curves and accuracy records down to `level` (one
    statement: a snapshot's rows go together)."""
    sql = _THIN_MERGED.format(
        gone=_GONE.format(snapshots=_p("snapshots", day)),
        curves=_p("server_curves", day),
        accuracy=_p("accuracy_records", day),
        snapshots=_p("snapshots", day),
    )
    row = _exec(db, text(sql), {"level": level}).one()
    return {"snapshots": row.s, "server_curves": row.c, "accuracy_records": row.a}


def _thin_clusters(db: Any, day: Any, level: str) -> int:
    sql = _THIN_CLUSTERS.format(table=_p("cluster_curves", day))
    return int(_exec(db, text(sql), {"level": level}).rowcount or 0)


def _states(db: Any) -> dict[Any, dict[str, Any]]:
    """What the job already did to each day (JSON in the comment of its snapshots partition)."""
    days = partitions.existing(db, "snapshots")
    notes = dict(
        _exec(
            db,
            text(
                "SELECT c.relname, obj_description(c.oid, 'pg_class') FROM pg_class c JOIN pg_namespace n"
                " ON n.oid = c.relnamespace WHERE n.nspname = :s AND c.relname LIKE 'snapshots_p%'"
            ),
            {"s": partitions.SCHEMA},
        ).all()
    )
    return {day: json.loads(notes.get(rel) or "{}") for day, rel in days.items()}


def downsample_and_retain(
    at: datetime | None = None, settings: WorkerSettings | None = None
) -> dict[str, int]:
    """The storage job (hourly, batch queue): day partitions created ahead and dropped behind,
    per-class curves and merged curves downsampled, old payloads and trace chunks dropped.

    Works a day partition at a time, once the whole day has passed a threshold, and notes what it
    did in the day's snapshots partition (COMMENT), so each step runs once per day and a run
    reads only the days that are due. One transaction per day: an interrupted run resumes."""
    at = at or now()
    s = settings or worker_settings()
    out: dict[str, int] = {}

    def add(key: str, n: int) -> None:
        out[key] = out.get(key, 0) + int(n)

    with session() as db:
        today = partitions.day_of(at)
        made = partitions.ensure(
            db, partitions.days(today - timedelta(days=1), today + timedelta(days=s.partition_ahead_days))
        )
        db.commit()
        add("partitions_created", len(made))
        every_day: set[Any] = set()
        for table in partitions.PARTITIONED:
            every_day |= set(partitions.existing(db, table))
        states = _states(db)
        for day in sorted(every_day):
            day_end = partitions.start_of(day) + timedelta(days=1)
            if day_end <= at - timedelta(days=s.retention_days):
                for table in partitions.PARTITIONED:
                    add("partitions_dropped", partitions.drop(db, table, day))
                db.commit()
                continue
            if day not in states:
                continue
            state = dict(states[day])
            if not state.get("payload") and day_end <= at - timedelta(days=s.payload_retention_days):
                sql = _DROP_PAYLOADS.format(snapshots=_p("snapshots", day))
                add("snapshot_payloads_dropped", _exec(db, text(sql)).rowcount or 0)
                state["payload"] = True
            merged = _level(day_end, at, s.history_hourly_after_days, s.history_daily_after_days)
            if _coarser(merged, state.get("merged", "full")):
                for table, n in _thin_merged(db, day, merged).items():
                    add(f"{table}_thinned", n)
                add("cluster_curves_thinned", _thin_clusters(db, day, merged))
                state["merged"] = merged
            classes = _level(day_end, at, s.class_hourly_after_days, s.class_daily_after_days)
            if _coarser(classes, state.get("classes", "full")):
                add("snapshot_class_sets_thinned", _thin_classes(db, day, classes))
                state["classes"] = classes
            if state != states[day]:
                partitions.set_comment(db, "snapshots", day, json.dumps(state, sort_keys=True))
                db.commit()
        add(
            "trace_chunks_expired",
            _exec(
                db,
                delete(TraceChunk).where(TraceChunk.window_end < at - timedelta(days=s.trace_retention_days)),
            ).rowcount
            or 0,
        )
        add("account_links_purged", accounts.purge_expired_links(db, at))
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
