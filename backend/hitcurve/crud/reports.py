"""The weekly report for the dashboard: its preview, a test mail to the logged-in user, the
recipient's confirmation and the one-click unsubscribe of a signed link. Content and rendering are
hitcurve.reports.message's, the composition the worker's weekly send uses too, so the preview is
what the weekly delivery sends."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from email.message import EmailMessage
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from hitcurve.core.signing import CONFIRM_REPORT, UNSUBSCRIBE_REPORT, unsign
from hitcurve.crud.inventory import get_cluster
from hitcurve.models import Cluster, Organization, ReportSubscription
from hitcurve.reports.message import compose
from hitcurve.reports.message import preview as render_preview
from hitcurve.schemas.api import ReportConfirmedOut, ReportPreviewOut, UnsubscribeOut


def own_subscription(
    db: Session, org_id: uuid.UUID, email: str, cluster_id: uuid.UUID | None
) -> uuid.UUID | None:
    """The enabled subscription of `email` to this report (org, cluster or all), if any."""
    q = select(ReportSubscription.id).where(
        ReportSubscription.org_id == org_id,
        ReportSubscription.email == email,
        ReportSubscription.enabled.is_(True),
    )
    q = q.where(
        ReportSubscription.cluster_id.is_(None)
        if cluster_id is None
        else ReportSubscription.cluster_id == cluster_id
    )
    return db.execute(q.order_by(ReportSubscription.created_at).limit(1)).scalar_one_or_none()


def preview(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID | None, email: str) -> ReportPreviewOut:
    if cluster_id is not None:
        get_cluster(db, org_id, cluster_id)  # 404 for another organization's cluster
    sub = own_subscription(db, org_id, email, cluster_id)
    p = render_preview(db, org_id, cluster_id, email, datetime.now(UTC), sub)
    return ReportPreviewOut(
        subject=p.subject, to=p.recipient, subscribed=p.subscribed, html=p.html, text=p.text
    )


def test_message(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID | None, email: str) -> EmailMessage:
    if cluster_id is not None:
        get_cluster(db, org_id, cluster_id)
    sub = own_subscription(db, org_id, email, cluster_id)
    return compose(db, org_id, cluster_id, email, datetime.now(UTC), sub, None, test=True).message


def _linked(db: Session, sub_id: uuid.UUID) -> Any:
    """The subscription a mailed link names, locked, with its organization's and cluster's names."""
    return db.execute(
        select(ReportSubscription, Organization.name, Cluster.name)
        .join(Organization, Organization.id == ReportSubscription.org_id)
        .outerjoin(
            Cluster,
            (Cluster.id == ReportSubscription.cluster_id) & (Cluster.org_id == ReportSubscription.org_id),
        )
        .where(ReportSubscription.id == sub_id)
        .with_for_update(of=ReportSubscription)
    ).first()


def unsubscribe(db: Session, token: str) -> tuple[UnsubscribeOut, uuid.UUID | None] | None:
    """Turn off the subscription a signed link names (idempotent). None: the link is not valid.
    A subscription deleted since answers as already off (the link did its job)."""
    value = unsign(UNSUBSCRIBE_REPORT, token)
    if value is None:
        return None
    try:
        sub_id = uuid.UUID(value)
    except ValueError:
        return None
    row = _linked(db, sub_id)
    if row is None:
        return UnsubscribeOut(subscription_id=sub_id, email="", org_name="", about="", already=True), None
    sub, org_name, cluster_name = row
    already = not sub.enabled
    if not already:
        db.execute(update(ReportSubscription).where(ReportSubscription.id == sub_id).values(enabled=False))
    about = cluster_name if sub.cluster_id is not None and cluster_name else "all clusters"
    return (
        UnsubscribeOut(
            subscription_id=sub_id, email=sub.email, org_name=org_name, about=about, already=already
        ),
        sub.org_id,
    )


def confirm(db: Session, token: str) -> tuple[ReportConfirmedOut, uuid.UUID] | None:
    """Confirm the recipient a signed confirmation link names (idempotent). None: the link is not
    valid, its subscription is gone, or the subscription's address changed since it was mailed."""
    value = unsign(CONFIRM_REPORT, token)
    if value is None or ":" not in value:
        return None
    sid, _, email = value.partition(":")
    try:
        sub_id = uuid.UUID(sid)
    except ValueError:
        return None
    row = _linked(db, sub_id)
    if row is None or row[0].email != email:
        return None
    sub, org_name, cluster_name = row
    already = sub.confirmed_at is not None
    if not already:
        db.execute(
            update(ReportSubscription)
            .where(ReportSubscription.id == sub_id)
            .values(confirmed_at=datetime.now(UTC))
        )
    about = cluster_name if sub.cluster_id is not None and cluster_name else "all clusters"
    return (
        ReportConfirmedOut(
            subscription_id=sub_id, email=sub.email, org_name=org_name, about=about, already=already
        ),
        sub.org_id,
    )
