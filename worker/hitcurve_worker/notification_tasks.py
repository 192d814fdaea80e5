"""hitcurve.deliver_alert: post one alert state change to one notification channel.

The delivery row (hitcurve.crud.notifications) is created in the transaction that opened or
resolved the alert, unique per (channel, alert, event); this task makes one attempt and, when the
receiver failed in a way worth retrying (5xx, 408, 429, network), schedules itself again after
HITCURVE_WEBHOOK_BACKOFF_S x 2^(attempt-1) until HITCURVE_WEBHOOK_MAX_ATTEMPTS. Redelivered or
duplicated messages are harmless: the attempt locks the row and a delivered row is never sent
again. Tasks lost with a broker or worker are re-sent by the re-enqueue job (housekeeping).
"""

from __future__ import annotations

import logging
from typing import Any

from celery import Task
from sqlalchemy.orm import Session

from hitcurve.core import task_names as names
from hitcurve.core.tasks import queue_for
from hitcurve.crud import notifications as crud
from hitcurve_worker.celery_app import app
from hitcurve_worker.reliability import RETRY_OPTS, session

log = logging.getLogger("hitcurve.worker.notify")

PENDING_KEY = "hitcurve_deliveries"


def remember(db: Session, delivery_ids: list[int]) -> None:
    """Delivery rows created in this session's transaction, to enqueue after its commit."""
    if delivery_ids:
        db.info.setdefault(PENDING_KEY, []).extend(delivery_ids)


def enqueue_remembered(db: Session, sender: Any = None) -> int:
    """After the commit: hand each remembered delivery to the worker (lost ones: re-enqueue job)."""
    ids = db.info.pop(PENDING_KEY, [])
    sender = sender or app
    for i in ids:
        try:
            sender.send_task(names.DELIVER_ALERT, args=[i], queue=queue_for(names.DELIVER_ALERT))
        except Exception as exc:  # the re-enqueue job picks the row up
            log.warning("could not enqueue delivery %s: %s", i, exc)
    return len(ids)


@app.task(name=names.DELIVER_ALERT, bind=True, **RETRY_OPTS)
def deliver_alert(self: Task, delivery_id: int) -> dict[str, Any]:
    with session() as db:
        out = crud.attempt(db, int(delivery_id))
    if out["status"] == "retrying" and out["retry_in"] is not None:
        log.info("delivery %s failed, next attempt in %.1f s", delivery_id, out["retry_in"])
        self.apply_async(args=[delivery_id], countdown=out["retry_in"], queue=queue_for(names.DELIVER_ALERT))
    return out
