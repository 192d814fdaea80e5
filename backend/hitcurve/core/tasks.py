"""Hand work to the worker through Celery, by task name, after the rows were committed.

The backend never imports the worker package: it publishes `hitcurve.drain_snapshots` (one
queued at a time, request_drain), `hitcurve.process_trace_chunk` and `hitcurve.run_simulation`
by name, each on its lane's queue (queue_for: task_names.LANES; the worker routes its own tasks
by the same function).
Publishing is best effort: when Redis is down the error is logged, the row stays `pending`
(enqueued_at null) and the worker's periodic re-enqueue job hands it over later. After a failure
the backend does not try again for `broker_backoff_s`, so uploads never wait on a dead broker.
"""

import logging
import math
import threading
import time
import uuid
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

import redis
from celery import Celery
from sqlalchemy import text

from hitcurve.core import fairqueue
from hitcurve.core import task_names as names
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine

log = logging.getLogger("hitcurve.tasks")

DRAIN_SNAPSHOTS = names.DRAIN_SNAPSHOTS
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


def note_broker_down() -> None:
    """A publish failed: publishers wait broker_backoff_s before trying again."""
    global _down_until
    with _lock:
        _down_until = time.monotonic() + get_settings().broker_backoff_s


def send(task_name: str, obj_id: uuid.UUID | int, *extra: str) -> bool:
    """Publish one task (arguments: the row's id, then `extra`); True when the broker accepted it.
    Never raises."""
    if broker_backing_off():
        log.warning("broker recently unreachable; %s %s left pending for re-enqueue", task_name, obj_id)
        return False
    try:
        get_celery().send_task(task_name, args=[str(obj_id), *extra], retry=False, queue=queue_for(task_name))
        return True
    except Exception as exc:  # any broker failure: log it, keep the row pending
        note_broker_down()
        log.error(
            "could not enqueue %s %s (left pending): %s: %s", task_name, obj_id, type(exc).__name__, exc
        )
        return False


# How long the "a drain is queued" key lives beyond the drain's delay: a drain message lost with
# its worker (a killed process's reserved message comes back only after the visibility timeout)
# is replaced by the first upload after this, so curves resume seconds after a crash (the
# supervisor restarts a worker in ~0.1 s); while the workers are behind, at most one more drain
# per this period (drains are idempotent: a spare one claims nothing).
DRAIN_FLAG_TTL_S = 5


def _broker_client() -> redis.Redis:
    s = get_settings()
    return _client_for(s.redis_url, s.broker_timeout_s)


@lru_cache
def _client_for(url: str, timeout_s: float) -> redis.Redis:
    """One client (and connection pool) per broker URL: a change of settings gets its own."""
    return redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)


def drain_flag_key() -> str:
    """The "a drain is queued" key of this installation's ingest queue (two installations sharing
    a Redis with their own queues, or a test's private queue, do not share it)."""
    return f"{names.DRAIN_QUEUED_KEY}:{queue_for(DRAIN_SNAPSHOTS)}"


def request_drain(delay_s: float | None = None, sender: Any = None) -> bool:
    """Make sure a drain of the pending snapshots (hitcurve.drain_snapshots) is queued: publish one,
    to run delay_s from now (default Settings.drain_delay_s), unless one already is (the broker key
    drain_flag_key()). True when a drain is queued; False when the broker is unreachable (the
    rows stay pending for the re-enqueue job). Never raises.

    Nothing is missed: a drain deletes the key when it starts and before the claim that ends it
    (drain_started), so a snapshot committed before that delete is seen by the claim after it, and
    one committed after it finds the key gone and publishes the next drain. sender: a Celery app
    (the worker's own), default the backend's publisher."""
    global _down_until
    if broker_backing_off():
        log.warning("broker recently unreachable; snapshots left pending for re-enqueue")
        return False
    s = get_settings()
    delay = s.drain_delay_s if delay_s is None else delay_s
    try:
        if _broker_client().set(drain_flag_key(), "1", nx=True, ex=DRAIN_FLAG_TTL_S + math.ceil(delay)):
            (sender or get_celery()).send_task(
                DRAIN_SNAPSHOTS, countdown=delay or None, retry=False, queue=queue_for(DRAIN_SNAPSHOTS)
            )
        return True
    except Exception as exc:  # any broker failure: log it, keep the rows pending
        with _lock:
            _down_until = time.monotonic() + s.broker_backoff_s
        log.error("could not request a drain (snapshots left pending): %s: %s", type(exc).__name__, exc)
        return False


def drain_started() -> None:
    """A drain is about to claim: from here on a new snapshot needs a new drain (request_drain)."""
    _broker_client().delete(drain_flag_key())


# Plain statements (compiled once) for the hot path of every upload.
_MARK_ENQUEUED = {
    table: text(f"UPDATE {table} SET enqueued_at = :now WHERE id = :id AND enqueued_at IS NULL")  # noqa: S608
    for table in ("snapshots", "trace_chunks", "simulation_runs")
}


_UNMARK_ENQUEUED = {
    table: text(f"UPDATE {table} SET enqueued_at = NULL WHERE id = :id AND enqueued_at = :at")  # noqa: S608
    for table in ("snapshots", "trace_chunks", "simulation_runs")
}


def record_enqueued(
    conn: Any, what: str, model: Any, obj_id: uuid.UUID, marked: datetime | None, ok: bool
) -> None:
    """After handing a committed row over on a connection the caller holds (ok: the broker took
    it). marked: the enqueued_at the row was stored with (set in advance, so that the usual case
    needs no second transaction); it is cleared again when publishing failed. None: the row was
    stored without it and gets it only now that the broker accepted, as in enqueue_after_commit."""
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
        log.warning("could not record the enqueue state of %s %s: %s", what, obj_id, exc)


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


def enqueue_simulation(org_id: uuid.UUID, run_id: uuid.UUID) -> None:
    """Queue a simulation run on its organization's fair queue (hitcurve.core.fairqueue) and a turn
    for it on the batch queue, then record enqueued_at on the row (a background task, after the
    response). Never raises: when the broker is unreachable the row stays without enqueued_at
    and the worker's re-enqueue job queues it later."""
    if broker_backing_off():
        log.warning("broker recently unreachable; simulation %s left pending for re-enqueue", run_id)
        return
    try:
        fairqueue.push(_broker_client(), org_id, RUN_SIMULATION, [str(run_id)])
        fairqueue.publish_turns(get_celery())
    except Exception as exc:  # any broker failure: log it, keep the row pending
        note_broker_down()
        log.error("could not queue simulation %s (left pending): %s: %s", run_id, type(exc).__name__, exc)
        return
    try:
        with get_engine().begin() as conn:
            conn.execute(_MARK_ENQUEUED["simulation_runs"], {"id": run_id, "now": datetime.now(UTC)})
    except Exception as exc:  # the run is queued anyway; the timestamp is informational
        log.warning("queued simulation %s but could not record it: %s", run_id, exc)
