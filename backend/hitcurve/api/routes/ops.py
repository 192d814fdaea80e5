"""Policy simulation runs, alerts, weekly report subscriptions and the audit log (HTTP only: the
rows and the simulation window rule in crud/operations.py)."""

import uuid
from datetime import UTC, datetime
from typing import Annotated, Literal

from fastapi import APIRouter, BackgroundTasks, Query, Response

from hitcurve.api.deps import DbDep, Limit, MemberDep, Offset, OwnerDep, ReaderDep, WriterDep
from hitcurve.core.audit import audit
from hitcurve.core.errors import ApiError
from hitcurve.core.tasks import RUN_SIMULATION, enqueue_after_commit
from hitcurve.crud import operations as crud
from hitcurve.crud.inventory import get_cluster, get_server
from hitcurve.models import Alert, AuditLog, ReportSubscription, SimulationRun
from hitcurve.schemas.api import (
    AlertOut,
    AuditOut,
    SimulationIn,
    SimulationRunOut,
    SubscriptionIn,
    SubscriptionOut,
    SubscriptionPatch,
)

router = APIRouter(tags=["operations"])


def _now() -> datetime:
    return datetime.now(UTC)


# --- simulations ------------------------------------------------------------------------------
@router.post(
    "/simulations",
    status_code=202,
    response_model=SimulationRunOut,
    summary="Request a policy simulation on a server's or cluster's sampled traces (runs in the worker)",
    responses={404: {"description": "no such server or cluster"}, 422: {"description": "invalid request"}},
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
    background.add_task(enqueue_after_commit, RUN_SIMULATION, SimulationRun, run.id)
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


@router.post(
    "/report-subscriptions",
    status_code=201,
    response_model=SubscriptionOut,
    summary="Subscribe an address to the weekly report of a cluster (or the whole organization)",
)
def create_subscription(body: SubscriptionIn, me: MemberDep, db: DbDep) -> ReportSubscription:
    if body.cluster_id is not None:
        get_cluster(db, me.org_id, body.cluster_id)
    s = ReportSubscription(org_id=me.org_id, user_id=me.user_id, **body.model_dump())
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
    db.commit()
    return s


@router.get(
    "/report-subscriptions/{sub_id}", response_model=SubscriptionOut, summary="One report subscription"
)
def read_subscription(sub_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ReportSubscription:
    return crud.get_subscription(db, me.org_id, sub_id)


@router.patch(
    "/report-subscriptions/{sub_id}", response_model=SubscriptionOut, summary="Change a subscription"
)
def update_subscription(
    sub_id: uuid.UUID, body: SubscriptionPatch, me: MemberDep, db: DbDep
) -> ReportSubscription:
    s = crud.get_subscription(db, me.org_id, sub_id)
    changes = body.model_dump(exclude_unset=True)
    for field in ("email", "weekday", "hour_utc", "enabled"):
        if field in changes and changes[field] is None:
            raise ApiError(422, "invalid_request", f"{field} cannot be null")
    if changes.get("cluster_id") is not None:
        get_cluster(db, me.org_id, changes["cluster_id"])
    for k, v in changes.items():
        setattr(s, k, v)
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
