"""The rows behind the operations endpoints (api/routes/ops.py): simulation runs and their
window rule, alerts, weekly report subscriptions and the audit log. Always scoped by org_id: an
unknown id and another organization's id answer the same 404."""

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hitcurve.core.config import get_settings
from hitcurve.core.domain import Invalid, TooMany
from hitcurve.core.signing import CONFIRM_REPORT, sign
from hitcurve.crud.owned import org_rows, owned
from hitcurve.models import Alert, AuditLog, ReportSubscription, SimulationResult, SimulationRun
from hitcurve.schemas.api import SimulationIn, SimulationResultOut, SimulationRunOut

# The longest trace window one simulation run may replay.
MAX_WINDOW = timedelta(days=31)


def simulation_window(body: SimulationIn) -> tuple[datetime, datetime]:
    """The run's window (default: the day before window_end, itself default now), or 422."""
    end = body.window_end or datetime.now(UTC)
    try:
        start = body.window_start or end - timedelta(days=1)
    except OverflowError:
        raise Invalid("invalid_request", "window_end is too early") from None
    if start.tzinfo is None or end.tzinfo is None:
        raise Invalid("invalid_request", "window times need a time zone")
    if end <= start:
        raise Invalid("invalid_request", "window_end must be after window_start")
    if end - start > MAX_WINDOW:
        raise Invalid("invalid_request", "the window may span at most 31 days")
    return start, end


def simulation_runs(
    db: Session,
    org_id: uuid.UUID,
    server_id: uuid.UUID | None,
    cluster_id: uuid.UUID | None,
    limit: int,
    offset: int,
) -> list[SimulationRun]:
    q = select(SimulationRun).where(SimulationRun.org_id == org_id)
    if server_id is not None:
        q = q.where(SimulationRun.server_id == server_id)
    if cluster_id is not None:
        q = q.where(SimulationRun.cluster_id == cluster_id)
    return list(db.execute(q.order_by(SimulationRun.created_at.desc()).limit(limit).offset(offset)).scalars())


def simulation_run(db: Session, org_id: uuid.UUID, run_id: uuid.UUID) -> SimulationRunOut:
    """A run with its results by policy and size."""
    run = owned(db, SimulationRun, org_id, run_id, "simulation run")
    results = db.execute(
        select(SimulationResult)
        .where(SimulationResult.run_id == run.id, SimulationResult.org_id == org_id)
        .order_by(SimulationResult.policy, SimulationResult.size_bytes)
    ).scalars()
    return SimulationRunOut.model_validate(run).model_copy(
        update={"results": [SimulationResultOut.model_validate(r) for r in results]}
    )


def alerts(db: Session, org_id: uuid.UUID, state: str, limit: int, offset: int) -> list[Alert]:
    """Alerts in a state ("open", "resolved" or "all"), the most recently seen first."""
    q = select(Alert).where(Alert.org_id == org_id)
    if state != "all":
        q = q.where(Alert.state == state)
    return list(db.execute(q.order_by(Alert.last_seen_at.desc()).limit(limit).offset(offset)).scalars())


def get_alert(db: Session, org_id: uuid.UUID, alert_id: uuid.UUID) -> Alert:
    return owned(db, Alert, org_id, alert_id, "alert")


# Report recipients one organization may have: the weekly mail cannot be turned into a way to send
# mail to any number of addresses.
MAX_REPORT_RECIPIENTS = 50
_LOCK_SUBSCRIPTIONS = 0x5245_5054  # "REPT": advisory-lock namespace of an org's subscriptions


_LOCK_SIMULATIONS = 0x5349_4D53  # "SIMS": advisory-lock namespace of an org's simulation runs
# Retry-After of a refused simulation request: about the time a small run takes.
SIMULATION_RETRY_AFTER_S = 30


def claim_simulation_slot(db: Session, org_id: uuid.UUID) -> None:
    """Refuse a new simulation run (TooMany, 429) while the organization has
    Settings.simulations_per_org runs queued or running, counted under a transaction lock on the
    organization so concurrent requests cannot pass it together; the caller adds the run in the
    same transaction. Together with the fair queue this bounds what one organization can put in
    front of the workers."""
    limit = get_settings().simulations_per_org
    db.execute(select(func.pg_advisory_xact_lock(_LOCK_SIMULATIONS, func.hashtext(str(org_id)))))
    n = db.execute(
        select(func.count())
        .select_from(SimulationRun)
        .where(SimulationRun.org_id == org_id, SimulationRun.status.in_(("pending", "running")))
    ).scalar_one()
    if int(n) >= limit:
        raise TooMany(
            "too_many_simulations",
            f"this organization already has {int(n)} simulation runs queued or running (at most "
            f"{limit} at a time); wait for one to finish",
            SIMULATION_RETRY_AFTER_S,
        )


def room_for_subscription(db: Session, org_id: uuid.UUID) -> bool:
    """Whether the organization may add a report recipient, counted under a transaction lock on
    the organization (concurrent requests cannot pass the cap together); the caller then adds
    the row in the same transaction."""
    db.execute(select(func.pg_advisory_xact_lock(_LOCK_SUBSCRIPTIONS, func.hashtext(str(org_id)))))
    n = db.execute(
        select(func.count()).select_from(ReportSubscription).where(ReportSubscription.org_id == org_id)
    ).scalar_one()
    return int(n) < MAX_REPORT_RECIPIENTS


# Confirmation mails one organization may send per day: with the recipient cap, adding and
# removing recipients (or changing their address) cannot turn the product into a mailer.
MAX_CONFIRMATION_MAILS_PER_DAY = 2 * MAX_REPORT_RECIPIENTS
# A confirmation mail is sent again for the same subscription only after this long.
CONFIRMATION_RESEND_S = 600
CONFIRMATION_SENT = "report_subscription.confirmation_sent"


def confirmation_token(sub: ReportSubscription) -> str:
    return sign(CONFIRM_REPORT, f"{sub.id}:{sub.email}")


def needs_confirmation(sub: ReportSubscription, own_email: str | None, at: datetime) -> bool:
    """Mark the subscription confirmed when its address is the subscribing user's own (proved when
    the account was made); else pending. True: a confirmation mail must go to the address."""
    if own_email is not None and sub.email.lower() == own_email.lower():
        sub.confirmed_at = at
        return False
    sub.confirmed_at = None
    return True


def claim_confirmation_mail(db: Session, sub: ReportSubscription, at: datetime) -> None:
    """Count one confirmation mail against the organization's day (TooMany past it) and stamp the
    subscription; the caller audits it (CONFIRMATION_SENT, the count's source) in the same
    transaction and sends the mail after the commit. Under the subscriptions' transaction lock."""
    db.execute(select(func.pg_advisory_xact_lock(_LOCK_SUBSCRIPTIONS, func.hashtext(str(sub.org_id)))))
    sent = db.execute(
        select(func.count())
        .select_from(AuditLog)
        .where(
            AuditLog.org_id == sub.org_id,
            AuditLog.action == CONFIRMATION_SENT,
            AuditLog.at > at - timedelta(days=1),
        )
    ).scalar_one()
    if int(sent) >= MAX_CONFIRMATION_MAILS_PER_DAY:
        raise TooMany(
            "too_many_confirmations",
            f"this organization sent {MAX_CONFIRMATION_MAILS_PER_DAY} report confirmation mails in "
            "the last 24 hours, as many as it may; try again tomorrow",
            3600,
        )
    sub.confirmation_sent_at = at


def resend_wait_s(sub: ReportSubscription, at: datetime) -> int:
    """Seconds until a confirmation mail may go to this subscription again (0: now)."""
    if sub.confirmation_sent_at is None:
        return 0
    left = CONFIRMATION_RESEND_S - (at - sub.confirmation_sent_at).total_seconds()
    return max(0, int(left + 0.999))


def subscriptions(db: Session, org_id: uuid.UUID) -> list[ReportSubscription]:
    return org_rows(db, ReportSubscription, org_id)


def get_subscription(db: Session, org_id: uuid.UUID, sub_id: uuid.UUID) -> ReportSubscription:
    return owned(db, ReportSubscription, org_id, sub_id, "report subscription")


def audit_entries(
    db: Session, org_id: uuid.UUID, action: str | None, limit: int, offset: int
) -> list[AuditLog]:
    """The organization's audit log (of one action, when given), newest first."""
    q = select(AuditLog).where(AuditLog.org_id == org_id)
    if action:
        q = q.where(AuditLog.action == action)
    return list(
        db.execute(q.order_by(AuditLog.at.desc(), AuditLog.id.desc()).limit(limit).offset(offset)).scalars()
    )
