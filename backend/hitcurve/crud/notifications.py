"""Notification channels and alert deliveries: the rows, and one delivery attempt.

The worker's alert rules call `queue_change` in the transaction that opens or resolves an alert;
the delivery task (`hitcurve.deliver_alert`) and the API's "send test" call `attempt`. An attempt
locks its delivery row (FOR UPDATE SKIP LOCKED) for the length of the POST and commits the outcome
with it, so two copies of one task (a redelivered message, the re-enqueue job) never both send:
the second finds the row locked or already delivered. A worker killed between the receiver's
answer and the commit sends again on the next attempt; `X-Hitcurve-Delivery` lets a receiver drop
that repeat.
"""

from __future__ import annotations

import secrets
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from hitcurve.core.config import get_settings
from hitcurve.crud.install import private_webhooks_allowed
from hitcurve.crud.owned import org_rows, owned
from hitcurve.models import Alert as AlertRow
from hitcurve.models import AlertDelivery, Cluster, NotificationChannel, Organization, Server
from hitcurve.notify import outbound
from hitcurve.notify import payloads as notify

MAX_BACKOFF_S = 3600.0


def new_secret() -> str:
    return "whsec_" + secrets.token_urlsafe(32)


def new_key() -> str:
    return uuid.uuid4().hex


def get_channel(db: Session, org_id: uuid.UUID, channel_id: uuid.UUID) -> NotificationChannel:
    return owned(db, NotificationChannel, org_id, channel_id, "notification channel")


def list_channels(db: Session, org_id: uuid.UUID) -> list[NotificationChannel]:
    return org_rows(db, NotificationChannel, org_id)


def list_deliveries(
    db: Session, org_id: uuid.UUID, channel_id: uuid.UUID | None, limit: int, offset: int
) -> list[Any]:
    """Newest first, with the channel's name and the alert's kind and message."""
    q = (
        select(AlertDelivery, NotificationChannel.name, AlertRow.kind, AlertRow.message)
        .join(NotificationChannel, NotificationChannel.id == AlertDelivery.channel_id)
        .outerjoin(AlertRow, AlertRow.id == AlertDelivery.alert_id)
        .where(AlertDelivery.org_id == org_id)
    )
    if channel_id is not None:
        q = q.where(AlertDelivery.channel_id == channel_id)
    return list(db.execute(q.order_by(AlertDelivery.id.desc()).limit(limit).offset(offset)).all())


# One row per channel that takes this alert (enabled, its minimum severity at most the alert's) at
# the time of the change; ON CONFLICT makes a repeated state change a no-op. A resolution goes to
# the channels of the moment too, so a channel added while the alert was open hears it end.
_QUEUE_CHANGE = text(
    "INSERT INTO alert_deliveries (org_id, channel_id, alert_id, event, key, status, next_attempt_at)"
    " SELECT c.org_id, c.id, :alert, CAST(:event AS text),"
    " md5(c.id::text || CAST(:alert AS text) || CAST(:event AS text)), 'pending', :at"
    " FROM notification_channels c WHERE c.org_id = :org AND c.enabled"
    " AND (CASE c.min_severity WHEN 'info' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END) <= :rank"
    " ON CONFLICT (channel_id, alert_id, event) DO NOTHING RETURNING id"
)
# The organization's open alerts that one channel takes, as 'opened' deliveries to that channel
# only: what a channel added while alerts are open is offered.
_QUEUE_OPEN_FOR_CHANNEL = text(
    "INSERT INTO alert_deliveries (org_id, channel_id, alert_id, event, key, status, next_attempt_at)"
    " SELECT a.org_id, :channel, a.id, 'opened', md5(CAST(:channel AS text) || a.id::text || 'opened'),"
    " 'pending', :at FROM alerts a WHERE a.org_id = :org AND a.state = 'open'"
    " AND (CASE a.severity WHEN 'info' THEN 0 WHEN 'warning' THEN 1 ELSE 2 END) >= :rank"
    " ON CONFLICT (channel_id, alert_id, event) DO NOTHING RETURNING id"
)


def queue_change(
    db: Session, org_id: uuid.UUID, alert_id: uuid.UUID, event: str, severity: str, at: datetime
) -> list[int]:
    """Delivery rows for an alert that just opened or resolved (in the caller's transaction)."""
    rows = db.execute(
        _QUEUE_CHANGE,
        {
            "org": org_id,
            "alert": alert_id,
            "event": event,
            "rank": notify.SEVERITY_RANK.get(severity, 0),
            "at": at,
        },
    )
    return [int(r[0]) for r in rows]


def open_alerts_for(db: Session, ch: NotificationChannel) -> int:
    """How many of the organization's open alerts this channel would take (its minimum severity)."""
    rank = notify.SEVERITY_RANK.get(ch.min_severity, 0)
    sev = [k for k, v in notify.SEVERITY_RANK.items() if v >= rank]
    q = select(func.count()).where(
        AlertRow.org_id == ch.org_id, AlertRow.state == "open", AlertRow.severity.in_(sev)
    )
    return int(db.execute(q).scalar_one())


def queue_open_alerts(db: Session, ch: NotificationChannel, at: datetime) -> list[int]:
    """'opened' deliveries of the organization's open alerts to this channel (in the caller's
    transaction; an alert it was already told about is skipped)."""
    rows = db.execute(
        _QUEUE_OPEN_FOR_CHANNEL,
        {"org": ch.org_id, "channel": ch.id, "rank": notify.SEVERITY_RANK.get(ch.min_severity, 0), "at": at},
    )
    return [int(r[0]) for r in rows]


def subject_of(db: Session, alert: AlertRow | None) -> tuple[str, str, str | None, str]:
    """(subject type, its name, its id, its dashboard path)."""
    if alert is not None and alert.server_id is not None:
        s = db.get(Server, alert.server_id)
        name = notify.server_name(s.address, s.hostname) if s else str(alert.server_id)
        return "server", name, str(alert.server_id), f"/servers/{alert.server_id}"
    if alert is not None and alert.cluster_id is not None:
        c = db.get(Cluster, alert.cluster_id)
        return (
            "cluster",
            c.name if c else str(alert.cluster_id),
            str(alert.cluster_id),
            f"/clusters/{alert.cluster_id}",
        )
    if alert is not None and "cluster_name" in (alert.details or {}):  # a deleted cluster's
        return "cluster", str(alert.details["cluster_name"]), alert.details.get("cluster_id"), "/alerts"
    return "organization", "", None, "/alerts"


def _event(db: Session, d: AlertDelivery, at: datetime) -> notify.AlertEvent:
    org = db.get(Organization, d.org_id)
    org_name = org.name if org else ""
    base = get_settings().public_url.rstrip("/")
    alert = db.get(AlertRow, d.alert_id) if d.alert_id is not None else None
    if alert is None:  # a test message
        return notify.AlertEvent(
            event="test",
            alert_id=f"test-{d.key}",
            kind="test",
            severity="info",
            message="a test notification from Hitcurve: this channel works",
            subject_type="organization",
            subject_name=org_name,
            subject_id=str(d.org_id),
            organization=org_name,
            first_seen_at=at,
            resolved_at=None,
            sent_at=at,
            delivery_key=d.key,
            dashboard_url=f"{base}/alerts",
        )
    stype, sname, sid, path = subject_of(db, alert)
    return notify.AlertEvent(
        event=d.event,
        alert_id=str(alert.id),
        kind=alert.kind,
        severity=alert.severity,
        message=alert.message,
        subject_type=stype,
        subject_name=sname,
        subject_id=sid,
        organization=org_name,
        first_seen_at=alert.first_seen_at,
        resolved_at=alert.resolved_at if d.event == "resolved" else None,
        sent_at=at,
        delivery_key=d.key,
        dashboard_url=f"{base}{path}",
        details=dict(alert.details or {}),
    )


def attempt(db: Session, delivery_id: int, *, max_attempts: int | None = None) -> dict[str, Any]:
    """One delivery attempt, committed. Returns {"status": ..., "retry_in": seconds or None}."""
    s = get_settings()
    max_attempts = max_attempts or s.webhook_max_attempts
    at = datetime.now(UTC)
    d = db.execute(
        select(AlertDelivery).where(AlertDelivery.id == delivery_id).with_for_update(skip_locked=True)
    ).scalar_one_or_none()
    if d is None:
        db.rollback()
        exists = db.execute(select(AlertDelivery.status).where(AlertDelivery.id == delivery_id)).scalar()
        return {"status": "busy" if exists else "missing", "retry_in": None}
    if d.status in ("delivered", "failed"):
        db.rollback()
        return {"status": d.status, "retry_in": None}
    if d.next_attempt_at is not None and d.next_attempt_at > at + timedelta(seconds=1):
        db.rollback()  # a copy that came early: the scheduled one will do it
        return {"status": "not_due", "retry_in": (d.next_attempt_at - at).total_seconds()}
    ch = db.get(NotificationChannel, d.channel_id)
    assert ch is not None  # the foreign key cascades
    d.attempts += 1
    d.last_attempt_at = at
    if not ch.enabled:
        d.status, d.last_error, d.next_attempt_at = "failed", "the channel is disabled", None
        db.commit()
        return {"status": d.status, "retry_in": None}
    body, headers = notify.build(ch.kind, _event(db, d, at), secret=ch.secret, routing_key=ch.routing_key)
    sent = outbound.post(
        ch.url, body, headers, timeout_s=s.webhook_timeout_s, allow_private=private_webhooks_allowed(db)
    )
    d.response_code = sent.status_code
    retry_in: float | None = None
    if sent.ok:
        d.status, d.last_error, d.delivered_at, d.next_attempt_at = "delivered", None, datetime.now(UTC), None
    elif sent.retryable and d.attempts < max_attempts:
        retry_in = min(MAX_BACKOFF_S, s.webhook_backoff_s * 2 ** (d.attempts - 1))
        d.status, d.last_error = "retrying", sent.error
        d.next_attempt_at = datetime.now(UTC) + timedelta(seconds=retry_in)
    else:
        d.status, d.last_error, d.next_attempt_at = "failed", sent.error, None
    db.commit()
    return {"status": d.status, "retry_in": retry_in}


def create_test(db: Session, ch: NotificationChannel) -> AlertDelivery:
    d = AlertDelivery(
        org_id=ch.org_id,
        channel_id=ch.id,
        alert_id=None,
        event="test",
        key=new_key(),
        status="pending",
        attempts=0,
        next_attempt_at=datetime.now(UTC),
    )
    db.add(d)
    db.commit()
    return d


def due_deliveries(db: Session, older_than: datetime, limit: int) -> list[int]:
    """Deliveries whose task was lost (never enqueued, or the worker died): due for a while."""
    return list(
        db.execute(
            select(AlertDelivery.id)
            .where(
                AlertDelivery.status.in_(("pending", "retrying")),
                AlertDelivery.event != "test",
                AlertDelivery.next_attempt_at < older_than,
            )
            .order_by(AlertDelivery.next_attempt_at)
            .limit(limit)
        ).scalars()
    )


def last_deliveries(db: Session, org_id: uuid.UUID) -> dict[uuid.UUID, tuple[str, datetime]]:
    """Per channel: the newest delivery's status and when it was last tried (or created)."""
    newest = (
        select(func.max(AlertDelivery.id))
        .where(AlertDelivery.org_id == org_id)
        .group_by(AlertDelivery.channel_id)
        .scalar_subquery()
    )
    rows = db.execute(
        select(
            AlertDelivery.channel_id,
            AlertDelivery.status,
            AlertDelivery.last_attempt_at,
            AlertDelivery.created_at,
        ).where(AlertDelivery.id.in_(newest))
    ).all()
    return {r[0]: (r[1], r[2] or r[3]) for r in rows}


def name_taken(db: Session, org_id: uuid.UUID, name: str) -> bool:
    return (
        db.execute(
            select(NotificationChannel.id).where(
                NotificationChannel.org_id == org_id, NotificationChannel.name == name
            )
        ).first()
        is not None
    )
