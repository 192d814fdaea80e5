"""What a task does when something goes wrong: which errors are worth retrying, how a row's
attempts are counted, and when an input is given up on (parked).

* Transient errors (database or broker unreachable, connection dropped, deadlock, serialization
  failure): the task retries itself with exponential backoff; the row stays pending/failed.
* Poison inputs (data that can never be processed): the row is parked at once with its error.
* Anything else (a bug, or an input that crashes us in a way we did not foresee): the row is
  marked failed with the error; the re-enqueue job retries it until MAX_ATTEMPTS, then parks it.

Attempts are counted in their own committed transaction *before* the work, so an input that
kills the worker process (SIGKILL, out of memory) is still counted and eventually parked.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Callable, Sequence
from datetime import UTC, datetime
from typing import Any

import kombu.exceptions
import redis.exceptions
from sqlalchemy import exc as sa_exc
from sqlalchemy import update
from sqlalchemy.orm import Session

from hitcurve.core.db import get_sessionmaker
from hitcurve_worker.settings import worker_settings

MAX_ATTEMPTS = worker_settings().worker_max_attempts

RETRYABLE: tuple[type[BaseException], ...] = (
    sa_exc.OperationalError,  # connection refused/dropped, admin shutdown, deadlock, serialization
    sa_exc.InterfaceError,
    sa_exc.TimeoutError,  # connection pool exhausted
    redis.exceptions.ConnectionError,
    redis.exceptions.TimeoutError,
    kombu.exceptions.OperationalError,
    ConnectionError,
    TimeoutError,
)

# Celery task options shared by every task that touches the database.
RETRY_OPTS: dict[str, Any] = {
    "autoretry_for": RETRYABLE,
    "retry_backoff": 1,
    "retry_backoff_max": 60,
    "retry_jitter": True,
    "max_retries": 12,
    "acks_late": True,
}


class PoisonInput(ValueError):
    """The input can never be processed; park it with this message."""


def now() -> datetime:
    return datetime.now(UTC)


def session() -> Session:
    return get_sessionmaker()()


def is_retryable(exc: BaseException) -> bool:
    if isinstance(exc, RETRYABLE):
        return True
    return isinstance(exc, sa_exc.DBAPIError) and bool(exc.connection_invalidated)


def claim_attempt(model: Any, obj_id: Any, bound: Sequence[Any] = ()) -> int | None:
    """Count one attempt on a pending/failed row; None when there is nothing to do (processed,
    parked or missing). Committed at once, so a crash during the work still counts.
    bound: more conditions on the row (a snapshot's window end: one partition, not all)."""
    with session() as db:
        n = db.execute(
            update(model)
            .where(model.id == obj_id, model.status.in_(("pending", "failed")), *bound)
            .values(attempts=model.attempts + 1)
            .returning(model.attempts)
        ).scalar_one_or_none()
        db.commit()
    return None if n is None else int(n)


def mark(model: Any, obj_id: Any, status: str, error: str | None, bound: Sequence[Any] = ()) -> None:
    """Best effort: record failed/parked with the error (the database may be the thing that is down)."""
    try:
        with session() as db:
            values: dict[str, Any] = {"status": status, "error": (error or "")[:4000]}
            if status == "parked":
                values["processed_at"] = now()
            db.execute(
                update(model)
                .where(model.id == obj_id, model.status.in_(("pending", "failed")), *bound)
                .values(**values)
            )
            db.commit()
    except Exception:  # noqa: S110 - the caller retries or the re-enqueue job will see the row again
        pass


def describe(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0] if text else ''}"[:4000]


def run_reliably(
    model: Any,
    raw_id: Any,
    process: Callable[[uuid.UUID], dict[str, Any]],
    what: str,
    log: logging.Logger,
    bound: Sequence[Any] = (),
) -> dict[str, Any]:
    """The shared body of every row-processing task: count the attempt before the work (so an
    input that kills the worker is parked after MAX_ATTEMPTS), park poison input at once with its
    error, mark other failures and re-raise them (retryable ones autoretry with backoff; the
    re-enqueue job picks up the rest). bound: more conditions on the row (claim_attempt)."""
    try:
        obj_id = uuid.UUID(str(raw_id))
    except ValueError:
        return {"status": "bad-id"}
    attempts = claim_attempt(model, obj_id, bound)
    if attempts is None:
        return {"status": "nothing-to-do"}
    if attempts > MAX_ATTEMPTS:
        mark(model, obj_id, "parked", f"gave up after {attempts - 1} attempts", bound)
        return {"status": "parked"}
    try:
        return process(obj_id)
    except PoisonInput as exc:
        log.warning("%s %s parked: %s", what, obj_id, exc)
        mark(model, obj_id, "parked", f"poison input: {exc}", bound)
        return {"status": "parked", "error": str(exc)}
    except Exception as exc:
        mark(model, obj_id, "failed", describe(exc), bound)
        if not is_retryable(exc):
            log.exception("%s %s failed (attempt %d); the re-enqueue job retries it", what, obj_id, attempts)
        raise
