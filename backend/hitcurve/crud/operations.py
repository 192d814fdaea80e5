"""The rows behind the operations endpoints (api/routes/ops.py): simulation runs and their
window rule, alerts, weekly report subscriptions and the audit log. Always scoped by org_id: an
unknown id and another organization's id answer the same 404."""

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from hitcurve.core.errors import ApiError
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
        raise ApiError(422, "invalid_request", "window_end is too early") from None
    if start.tzinfo is None or end.tzinfo is None:
        raise ApiError(422, "invalid_request", "window times need a time zone")
    if end <= start:
        raise ApiError(422, "invalid_request", "window_end must be after window_start")
    if end - start > MAX_WINDOW:
        raise ApiError(422, "invalid_request", "the window may span at most 31 days")
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
