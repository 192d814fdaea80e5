"""Weekly report e-mails: a dispatcher (beat, hourly) finds the confirmed subscriptions whose
weekly period has ended and not been sent, records a delivery row per (subscription, period) and enqueues one
`hitcurve.send_report` per row. Sending holds the delivery row's lock (SKIP LOCKED: a second run
at the same time does nothing), renders the subscription's own organization only, sends over
SMTP and marks the row sent and the subscription's last_sent_at in the same transaction. So a
period is sent once however often the tasks run; an SMTP failure marks the row failed and the task
retries with backoff, and the next dispatch re-enqueues a row that is still not sent.
"""

from __future__ import annotations

import logging
import smtplib
import uuid
from datetime import datetime
from typing import Any

from celery import Task
from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert

from hitcurve.core import task_names as names
from hitcurve.core.tasks import queue_for
from hitcurve.models import ReportDelivery, ReportSubscription
from hitcurve.reports.mail import send
from hitcurve.reports.message import compose
from hitcurve_worker.celery_app import app
from hitcurve_worker.reliability import RETRY_OPTS, RETRYABLE, describe, now, session
from hitcurve_worker.reports.schedule import period_of
from hitcurve_worker.reports.settings import smtp_settings

log = logging.getLogger("hitcurve.worker.reports")

SMTP_ERRORS: tuple[type[BaseException], ...] = (smtplib.SMTPException, OSError)
SEND_OPTS: dict[str, Any] = RETRY_OPTS | {
    "autoretry_for": RETRYABLE + SMTP_ERRORS,
    "retry_backoff_max": 600,
    "max_retries": 10,
}


def dispatch(at: datetime | None = None, sender: Any = None) -> dict[str, int]:
    """Record and enqueue every due, unsent (subscription, period). Idempotent."""
    at = at or now()
    sender = sender or app
    queued = 0
    with session() as db:
        subs = (
            db.execute(
                select(ReportSubscription).where(
                    # a recipient who has not confirmed gets nothing (ReportSubscription.confirmed_at)
                    ReportSubscription.enabled.is_(True),
                    ReportSubscription.confirmed_at.is_not(None),
                )
            )
            .scalars()
            .all()
        )
        todo: list[tuple[uuid.UUID, datetime]] = []
        for s in subs:
            start, end = period_of(at, s.weekday, s.hour_utc)
            if s.created_at > at:
                continue
            db.execute(
                pg_insert(ReportDelivery)
                .values(
                    org_id=s.org_id,
                    subscription_id=s.id,
                    period_start=start,
                    period_end=end,
                    status="pending",
                )
                .on_conflict_do_nothing(constraint="uq_report_deliveries_period")
            )
            todo.append((s.id, start))
        db.commit()
        for sid, start in todo:
            status = db.execute(
                select(ReportDelivery.status).where(
                    ReportDelivery.subscription_id == sid, ReportDelivery.period_start == start
                )
            ).scalar_one_or_none()
            if status is not None and status != "sent":
                sender.send_task(
                    names.SEND_REPORT, args=[str(sid), start.isoformat()], queue=queue_for(names.SEND_REPORT)
                )
                queued += 1
    return {"subscriptions": len(todo), "queued": queued}


def deliver(subscription_id: uuid.UUID, period_start: datetime) -> dict[str, Any]:
    """Send one (subscription, period) unless it was sent; raises SMTP errors after recording them."""
    with session() as db:
        row = db.execute(
            select(ReportDelivery)
            .where(
                ReportDelivery.subscription_id == subscription_id, ReportDelivery.period_start == period_start
            )
            .with_for_update(skip_locked=True)
        ).scalar_one_or_none()
        if row is None:
            exists = db.execute(
                select(ReportDelivery.id).where(
                    ReportDelivery.subscription_id == subscription_id,
                    ReportDelivery.period_start == period_start,
                )
            ).scalar_one_or_none()
            return {"status": "busy" if exists is not None else "missing"}
        if row.status == "sent":
            return {"status": "already-sent"}
        sub = db.execute(
            select(ReportSubscription).where(
                ReportSubscription.id == subscription_id, ReportSubscription.org_id == row.org_id
            )
        ).scalar_one_or_none()
        if sub is None or not sub.enabled:
            row.status, row.error = "skipped", "subscription disabled or deleted"
            db.commit()
            return {"status": "skipped"}
        if sub.confirmed_at is None:  # its address changed since the period was recorded
            row.status, row.error = "skipped", "the recipient has not confirmed"
            db.commit()
            return {"status": "skipped"}
        at = now()
        # The subscription's own organization, and its cluster when it names one: nothing else.
        key = f"{sub.id}:{period_start:%Y%m%dT%H%M}"
        composed = compose(db, sub.org_id, sub.cluster_id, sub.email, at, sub.id, key)
        report = composed.report
        try:
            send(smtp_settings(), composed.message)
        except SMTP_ERRORS as exc:
            row.status, row.error = "failed", describe(exc)
            db.commit()
            log.warning("report %s to %s not sent (will retry): %s", key, sub.email, exc)
            raise
        row.status, row.error, row.sent_at = "sent", None, at
        db.execute(update(ReportSubscription).where(ReportSubscription.id == sub.id).values(last_sent_at=at))
        db.commit()
        return {"status": "sent", "to": sub.email, "clusters": len(report.clusters)}


@app.task(name=names.DISPATCH_WEEKLY_REPORTS, bind=True, **RETRY_OPTS)
def dispatch_weekly_reports(self: Task) -> dict[str, int]:
    return dispatch()


@app.task(name=names.SEND_REPORT, bind=True, **SEND_OPTS)
def send_report(self: Task, subscription_id: str, period_start: str) -> dict[str, Any]:
    try:
        sid = uuid.UUID(subscription_id)
        start = datetime.fromisoformat(period_start)
    except ValueError:
        return {"status": "bad-arguments"}
    return deliver(sid, start)
