"""Hand work to the worker through Celery, by task name, after the rows were committed.

The backend never imports the worker package: it publishes `hitcurve.process_snapshot`,
`hitcurve.process_trace_chunk` and `hitcurve.run_simulation` by name, each on its lane's queue
(queue_for: task_names.LANES; the worker routes its own tasks by the same function).
Publishing is best effort: when Redis is down the error is logged, the row stays `pending`
(enqueued_at null) and the worker's periodic re-enqueue job hands it over later. After a failure
the backend does not try again for `broker_backoff_s`, so uploads never wait on a dead broker.
"""

import logging
import threading
import time
import uuid
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from celery import Celery
from sqlalchemy import text

from hitcurve.core import task_names as names
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine

log = logging.getLogger("hitcurve.tasks")

PROCESS_SNAPSHOT = names.PROCESS_SNAPSHOT
PROCESS_TRACE_CHUNK = names.PROCESS_TRACE_CHUNK
RUN_SIMULATION = names.RUN_SIMULATION

_lock = threading.Lock()
_down_until = 0.0


def queue_for(task_name: str) -> str:
    """The Redis queue of a task: its lane in task_names.LANES (unknown names go to ingest)."""
    s = get_settings()
    lane = names.LANES.get(task_name, names.INGEST)
    return s.celery_batch_queue if lane == names.BATCH else s.celery_ingest_queue


def route_task(
    name: str, args: Any, kwargs: Any, options: Any, task: Any = None, **kw: Any
) -> dict[str, str]:
    """Celery's task_routes hook (the worker app uses it): the same table as queue_for."""
    return {"queue": queue_for(name)}


@lru_cache
def get_celery() -> Celery:
    s = get_settings()
    app = Celery("hitcurve-backend", broker=s.redis_url)
    app.conf.update(
        task_serializer="json",
        accept_content=["json"],
        broker_connection_timeout=s.broker_timeout_s,
        broker_connection_retry=False,
        broker_connection_max_retries=0,
        task_publish_retry=False,
        broker_transport_options={
            "socket_timeout": s.broker_timeout_s,
            "socket_connect_timeout": s.broker_timeout_s,
            "max_retries": 0,
        },
    )
    return app


def broker_backing_off() -> bool:
    return time.monotonic() < _down_until


def send(task_name: str, obj_id: uuid.UUID, *extra: str) -> bool:
    """Publish one task (arguments: the row's id, then `extra`); True when the broker accepted it.
    Never raises."""
    global _down_until
    if broker_backing_off():
        log.warning("broker recently unreachable; %s %s left pending for re-enqueue", task_name, obj_id)
        return False
    try:
        get_celery().send_task(task_name, args=[str(obj_id), *extra], retry=False, queue=queue_for(task_name))
        return True
    except Exception as exc:  # any broker failure: log it, keep the row pending
        with _lock:
            _down_until = time.monotonic() + get_settings().broker_backoff_s
        log.error(
            "could not enqueue %s %s (left pending): %s: %s", task_name, obj_id, type(exc).__name__, exc
        )
        return False


# Plain statements (compiled once) for the hot path of every upload.
_MARK_ENQUEUED = {
    table: text(f"UPDATE {table} SET enqueued_at = :now WHERE id = :id AND enqueued_at IS NULL")  # noqa: S608
    for table in ("snapshots", "trace_chunks", "simulation_runs")
}


_UNMARK_ENQUEUED = {
    table: text(f"UPDATE {table} SET enqueued_at = NULL WHERE id = :id AND enqueued_at = :at")  # noqa: S608
    for table in ("snapshots", "trace_chunks", "simulation_runs")
}


def enqueue_on(
    conn: Any, task_name: str, model: Any, obj_id: uuid.UUID, marked: datetime | None, *extra: str
) -> None:
    """enqueue_after_commit on a connection the caller holds, its row's transaction committed.
    extra: the task's arguments after the id (a snapshot's window end: snapshot_args).

    marked: the enqueued_at the row was stored with (set in advance, so that the usual case needs
    no second transaction); it is cleared again when publishing fails. None: the row was stored
    without it and gets it only when the broker accepts the task, as in enqueue_after_commit."""
    ok = send(task_name, obj_id, *extra)
    if ok == (marked is not None):
        return
    try:
        if ok:
            conn.execute(_MARK_ENQUEUED[model.__tablename__], {"id": obj_id, "now": datetime.now(UTC)})
        else:
            conn.execute(_UNMARK_ENQUEUED[model.__tablename__], {"id": obj_id, "at": marked})
        conn.commit()
    except Exception as exc:  # the timestamp is informational; the re-enqueue job covers the row
        conn.rollback()
        log.warning("could not record the enqueue state of %s %s: %s", task_name, obj_id, exc)


def snapshot_args(window_end: datetime) -> str:
    """A process_snapshot task's second argument: its window end, the partition column of the
    snapshot tables (hitcurve.core.partitions), so the worker's lookups read that day's partition
    and its look-backs a bounded span, not every day's (docs/storage.md, "Known cost")."""
    return window_end.isoformat()


def enqueue_after_commit(task_name: str, model: Any, obj_id: uuid.UUID) -> None:
    """Publish, then record enqueued_at on the row (a background task, after the response)."""
    if not send(task_name, obj_id):
        return
    try:
        with get_engine().begin() as conn:
            conn.execute(_MARK_ENQUEUED[model.__tablename__], {"id": obj_id, "now": datetime.now(UTC)})
    except Exception as exc:  # the task is queued anyway; the timestamp is informational
        log.warning("enqueued %s %s but could not record it: %s", task_name, obj_id, exc)
