"""Policy simulation runs, alerts, weekly report subscriptions and the audit log (HTTP only: the
rows and the simulation window rule in crud/operations.py)."""

import uuid
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, BackgroundTasks, Query, Response

from hitcurve.api.deps import (
    MAIL_UNAVAILABLE,
    DbDep,
    Limit,
    MemberDep,
    Offset,
    OwnerDep,
    ReaderDep,
    WriterDep,
    require_mail,
)
from hitcurve.core.audit import audit
from hitcurve.core.errors import ApiError
from hitcurve.core.mail import send_text
from hitcurve.core.tasks import enqueue_simulation
from hitcurve.cost.simulated import policy_cost
from hitcurve.crud import operations as crud
from hitcurve.crud.inventory import get_cluster, get_server
from hitcurve.models import Alert, AuditLog, Cluster, Organization, ReportSubscription, SimulationRun, User
from hitcurve.notify import account_mail as mail
from hitcurve.schemas.api import (
    AlertOut,
    AuditOut,
    SimulationIn,
    SimulationRunOut,
    SubscriptionIn,
    SubscriptionOut,
    SubscriptionPatch,
)
from hitcurve.schemas.cost import PolicyCostAnswer

router = APIRouter(tags=["operations"])


def _now() -> datetime:
    return datetime.now(UTC)


# --- simulations ------------------------------------------------------------------------------
@router.post(
    "/simulations",
    status_code=202,
    response_model=SimulationRunOut,
    summary="Request a policy simulation on a server's or cluster's sampled traces (runs in the worker)",
    responses={
        404: {"description": "no such server or cluster"},
        422: {"description": "invalid request"},
        429: {"description": "as many of the organization's runs queued or running as it may have"},
    },
)
def create_simulation(
    body: SimulationIn, me: WriterDep, db: DbDep, background: BackgroundTasks
) -> SimulationRunOut:
    if (body.server_id is None) == (body.cluster_id is None):
        raise ApiError(422, "invalid_request", "give exactly one of server_id and cluster_id")
    if body.server_id is not None:
        get_server(db, me.org_id, body.server_id)
    else:
        assert body.cluster_id is not None
        get_cluster(db, me.org_id, body.cluster_id)
    start, end = crud.simulation_window(body)
    crud.claim_simulation_slot(db, me.org_id)
    run = SimulationRun(
        org_id=me.org_id,
        server_id=body.server_id,
        cluster_id=body.cluster_id,
        policies=list(dict.fromkeys(body.policies)),
        sizes_bytes=sorted(set(body.sizes_bytes)),
        window_start=start,
        window_end=end,
        status="pending",
        progress=0.0,
        requested_by=me.user_id,
        requested_by_token=me.key_id if me.kind == "api_token" else None,
    )
    db.add(run)
    db.flush()
    audit(
        db,
        "simulation.requested",
        org_id=me.org_id,
        user_id=me.user_id,
        key_id=me.key_id,
        target_type="simulation_run",
        target_id=run.id,
    )
    db.commit()
    background.add_task(enqueue_simulation, me.org_id, run.id)
    return SimulationRunOut.model_validate(run)


@router.get("/simulations", response_model=list[SimulationRunOut], summary="Simulation runs, newest first")
def list_simulations(
    me: ReaderDep,
    db: DbDep,
    server_id: uuid.UUID | None = None,
    cluster_id: uuid.UUID | None = None,
    limit: Limit = 50,
    offset: Offset = 0,
) -> list[SimulationRun]:
    return crud.simulation_runs(db, me.org_id, server_id, cluster_id, limit, offset)


@router.get(
    "/simulations/{run_id}", response_model=SimulationRunOut, summary="A simulation run with its results"
)
def read_simulation(run_id: uuid.UUID, me: ReaderDep, db: DbDep) -> SimulationRunOut:
    return crud.simulation_run(db, me.org_id, run_id)


@router.get(
    "/simulations/{run_id}/cost",
    response_model=PolicyCostAnswer,
    summary="A finished run's policies in money: memory for the target and the misses' cost, against LRU",
    description="hitcurve/cost/policies.py: at the subject's cluster's target, the memory each policy needs "
    "and its price; at memory_bytes (default: today's memory), what each policy's misses cost a month "
    "(the entered miss cost, or the measured refill time at the CPU-hour price); each against LRU. "
    "409 simulation_not_finished before the run is done.",
)
def simulation_cost(
    run_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    memory_bytes: Annotated[int | None, Query(ge=1, le=1 << 50)] = None,
) -> PolicyCostAnswer:
    return policy_cost(db, me.org_id, run_id, None if memory_bytes is None else float(memory_bytes))


# --- alerts -----------------------------------------------------------------------------------
@router.get("/alerts", response_model=list[AlertOut], summary="Alerts, newest first")
def list_alerts(
    me: ReaderDep,
    db: DbDep,
    state: Literal["open", "resolved", "all"] = "open",
    limit: Limit = 100,
    offset: Offset = 0,
) -> list[Alert]:
    return crud.alerts(db, me.org_id, state, limit, offset)


@router.post("/alerts/{alert_id}/ack", response_model=AlertOut, summary="Acknowledge an alert")
def ack_alert(alert_id: uuid.UUID, me: MemberDep, db: DbDep) -> Alert:
    a = crud.get_alert(db, me.org_id, alert_id)
    if a.acknowledged_at is None:
        a.acknowledged_at = _now()
        a.acknowledged_by = me.user_id
        audit(
            db,
            "alert.acknowledged",
            org_id=me.org_id,
            user_id=me.user_id,
            target_type="alert",
            target_id=a.id,
        )
        db.commit()
    return a


# --- report subscriptions ---------------------------------------------------------------------
@router.get(
    "/report-subscriptions",
    response_model=list[SubscriptionOut],
    summary="Weekly e-mail report subscriptions",
)
def list_subscriptions(me: ReaderDep, db: DbDep) -> list[ReportSubscription]:
    return crud.subscriptions(db, me.org_id)


def _confirmation(db: DbDep, me: MemberDep, sub: ReportSubscription) -> tuple[str, str, str]:
    """(recipient, subject, text) of a subscription's confirmation mail, with the token's link."""
    org = db.get(Organization, me.org_id)
    user = db.get(User, me.user_id) if me.user_id else None
    cluster = db.get(Cluster, sub.cluster_id) if sub.cluster_id else None
    about = cluster.name if cluster is not None else "all clusters"
    who = user.email if user is not None else "A member"
    return (
        sub.email,
        *mail.report_confirm(
            sub.email, who, org.name if org else "an organization", about, crud.confirmation_token(sub)
        ),
    )


def _own_email(db: DbDep, me: MemberDep) -> str | None:
    user = db.get(User, me.user_id) if me.user_id else None
    return user.email if user is not None else None


def _mail_confirmation(
    db: DbDep, me: MemberDep, sub: ReportSubscription, at: datetime, tasks: BackgroundTasks
) -> None:
    """Count, audit and (after the response) send the subscription's confirmation mail."""
    crud.claim_confirmation_mail(db, sub, at)
    audit(
        db,
        crud.CONFIRMATION_SENT,
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="report_subscription",
        target_id=sub.id,
        email=sub.email,
    )
    tasks.add_task(send_text, *_confirmation(db, me, sub))


@router.post(
    "/report-subscriptions",
    status_code=201,
    response_model=SubscriptionOut,
    summary="Subscribe an address to the weekly report of a cluster (or the whole organization)",
    description="An address other than your own gets a confirmation mail; no report is sent to it "
    "until its recipient follows the mail's link (confirmed_at).",
    responses={
        409: {"description": "as many recipients as the organization may have"},
        429: {"description": "as many confirmation mails today as the organization may send"},
        **MAIL_UNAVAILABLE,
    },
)
def create_subscription(
    body: SubscriptionIn, me: MemberDep, db: DbDep, tasks: BackgroundTasks
) -> ReportSubscription:
    if body.cluster_id is not None:
        get_cluster(db, me.org_id, body.cluster_id)
    at = _now()
    s = ReportSubscription(org_id=me.org_id, user_id=me.user_id, **body.model_dump())
    mail_needed = crud.needs_confirmation(s, _own_email(db, me), at)
    if mail_needed:
        require_mail()
    if not crud.room_for_subscription(db, me.org_id):
        db.rollback()
        raise ApiError(
            409,
            "too_many_recipients",
            f"an organization may have at most {crud.MAX_REPORT_RECIPIENTS} report subscriptions; "
            "remove one first",
        )
    db.add(s)
    db.flush()
    audit(
        db,
        "report_subscription.created",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="report_subscription",
        target_id=s.id,
        email=body.email,
    )
    if mail_needed:
        _mail_confirmation(db, me, s, at, tasks)
    db.commit()
    return s


@router.post(
    "/report-subscriptions/{sub_id}/confirmation",
    response_model=SubscriptionOut,
    summary="Send a pending subscription's confirmation mail again",
    responses={
        409: {"description": "the recipient already confirmed"},
        429: {"description": "a confirmation mail went out a few minutes ago, or too many today"},
        **MAIL_UNAVAILABLE,
    },
)
def resend_confirmation(
    sub_id: uuid.UUID, me: MemberDep, db: DbDep, tasks: BackgroundTasks
) -> ReportSubscription:
    s = crud.get_subscription(db, me.org_id, sub_id)
    if s.confirmed_at is not None:
        raise ApiError(409, "already_confirmed", f"{s.email} already confirmed this subscription")
    at = _now()
    wait = crud.resend_wait_s(s, at)
    if wait:
        raise ApiError(
            429,
            "confirmation_recently_sent",
            f"a confirmation mail went to {s.email} less than {crud.CONFIRMATION_RESEND_S // 60} "
            "minutes ago; ask the recipient to look for it, or send it again later",
            headers={"Retry-After": str(wait)},
        )
    require_mail()
    _mail_confirmation(db, me, s, at, tasks)
    db.commit()
    return s


@router.get(
    "/report-subscriptions/{sub_id}", response_model=SubscriptionOut, summary="One report subscription"
)
def read_subscription(sub_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ReportSubscription:
    return crud.get_subscription(db, me.org_id, sub_id)


@router.patch(
    "/report-subscriptions/{sub_id}",
    response_model=SubscriptionOut,
    summary="Change a subscription (a new address is pending until its recipient confirms)",
    responses=MAIL_UNAVAILABLE,
)
def update_subscription(
    sub_id: uuid.UUID, body: SubscriptionPatch, me: MemberDep, db: DbDep, tasks: BackgroundTasks
) -> ReportSubscription:
    s = crud.get_subscription(db, me.org_id, sub_id)
    changes = body.model_dump(exclude_unset=True)
    for field in ("email", "weekday", "hour_utc", "enabled"):
        if field in changes and changes[field] is None:
            raise ApiError(422, "invalid_request", f"{field} cannot be null")
    if changes.get("cluster_id") is not None:
        get_cluster(db, me.org_id, changes["cluster_id"])
    # a new address is a new recipient: it confirms before anything is sent to it
    readdressed = "email" in changes and changes["email"] != s.email
    at = _now()
    for k, v in changes.items():
        setattr(s, k, v)
    if readdressed and crud.needs_confirmation(s, _own_email(db, me), at):
        require_mail()
        s.confirmation_sent_at = None
        _mail_confirmation(db, me, s, at, tasks)
    audit(
        db,
        "report_subscription.updated",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="report_subscription",
        target_id=s.id,
        fields=sorted(changes),
    )
    db.commit()
    return s


@router.delete("/report-subscriptions/{sub_id}", status_code=204, summary="Delete a subscription")
def delete_subscription(sub_id: uuid.UUID, me: MemberDep, db: DbDep) -> Response:
    s = crud.get_subscription(db, me.org_id, sub_id)
    db.delete(s)
    audit(
        db,
        "report_subscription.deleted",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="report_subscription",
        target_id=sub_id,
    )
    db.commit()
    return Response(status_code=204)


# --- audit log --------------------------------------------------------------------------------
@router.get("/audit-log", response_model=list[AuditOut], summary="Security-relevant actions (owners)")
def audit_log(
    me: OwnerDep,
    db: DbDep,
    action: Annotated[str | None, Query(max_length=64)] = None,
    limit: Limit = 100,
    offset: Offset = 0,
) -> list[AuditLog]:
    return crud.audit_entries(db, me.org_id, action, limit, offset)
