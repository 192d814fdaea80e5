"""Clusters and servers: CRUD, latest curves (per class, merged, calibrated), history and accuracy
(HTTP only: queries in hitcurve.crud, the listed state in hitcurve.views.overview, the curve bodies in
hitcurve.views.curves, the sizing answer in hitcurve.sizing)."""

import uuid
from datetime import UTC, datetime
from typing import Annotated

from fastapi import APIRouter, Query, Response

from hitcurve.api.deps import DbDep, Limit, MemberDep, Offset, ReaderDep
from hitcurve.core import tasks
from hitcurve.core.audit import audit
from hitcurve.core.task_names import DELIVER_ALERT
from hitcurve.crud.history import accuracy, history
from hitcurve.crud.inventory import (
    change_cluster,
    get_cluster,
    get_server,
    name_free,
    resolve_alerts_of_deleted_cluster,
    resolve_alerts_of_emptied_cluster,
)
from hitcurve.models import Cluster, Server
from hitcurve.schemas.api import (
    AccuracyOut,
    ClusterCurveOut,
    ClusterIn,
    ClusterOut,
    ClusterPatch,
    CurveHistoryOut,
    HistoryOut,
    ServerCurveOut,
    ServerOut,
    ServerPatch,
    ThresholdsOut,
)
from hitcurve.views import curves as curve_views
from hitcurve.views.overview import cluster_out, cluster_rows, server_rows, thresholds_out

router = APIRouter(tags=["inventory"])


def _now() -> datetime:
    return datetime.now(UTC)


# --- clusters ---------------------------------------------------------------------------------
@router.get(
    "/clusters",
    response_model=list[ClusterOut],
    summary="Clusters of the organization, each with its latest state (curve, sizing answer, open alerts)",
)
def list_clusters(me: ReaderDep, db: DbDep, limit: Limit = 100, offset: Offset = 0) -> list[ClusterOut]:
    return cluster_rows(db, me.org_id, limit, offset)


@router.post(
    "/clusters",
    status_code=201,
    response_model=ClusterOut,
    summary="Create a cluster",
    responses={409: {"description": "a cluster with this name exists"}},
)
def create_cluster(body: ClusterIn, me: MemberDep, db: DbDep) -> ClusterOut:
    name_free(db, me.org_id, body.name)
    c = Cluster(org_id=me.org_id, **body.model_dump())
    db.add(c)
    db.flush()
    audit(db, "cluster.created", org_id=me.org_id, user_id=me.user_id, target_type="cluster", target_id=c.id)
    db.commit()
    return cluster_out(db, c)


@router.get("/clusters/{cluster_id}", response_model=ClusterOut, summary="One cluster")
def read_cluster(cluster_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ClusterOut:
    return cluster_out(db, get_cluster(db, me.org_id, cluster_id))


@router.patch("/clusters/{cluster_id}", response_model=ClusterOut, summary="Change a cluster")
def update_cluster(cluster_id: uuid.UUID, body: ClusterPatch, me: MemberDep, db: DbDep) -> ClusterOut:
    c = get_cluster(db, me.org_id, cluster_id)
    changes = change_cluster(db, c, body.model_dump(exclude_unset=True), _now())
    audit(
        db,
        "cluster.updated",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="cluster",
        target_id=c.id,
        fields=sorted(changes),
    )
    db.commit()
    return cluster_out(db, c)


@router.delete(
    "/clusters/{cluster_id}",
    status_code=204,
    summary="Delete a cluster (its servers are unassigned; its open alerts resolve, the channels told)",
)
def delete_cluster(cluster_id: uuid.UUID, me: MemberDep, db: DbDep) -> Response:
    c = get_cluster(db, me.org_id, cluster_id)
    deliveries = resolve_alerts_of_deleted_cluster(db, c, _now())
    db.delete(c)
    audit(
        db,
        "cluster.deleted",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="cluster",
        target_id=cluster_id,
    )
    db.commit()
    for d in deliveries:  # after the commit; a lost one is sent by the worker's re-enqueue job
        tasks.send(DELIVER_ALERT, d)
    return Response(status_code=204)


# --- servers ----------------------------------------------------------------------------------
@router.get(
    "/servers",
    response_model=list[ServerOut],
    summary="Servers of the organization, each with its latest loss, hit ratio and curve error",
)
def list_servers(
    me: ReaderDep, db: DbDep, cluster_id: uuid.UUID | None = None, limit: Limit = 100, offset: Offset = 0
) -> list[ServerOut]:
    return server_rows(db, me.org_id, cluster_id, limit, offset)


@router.get(
    "/thresholds",
    response_model=ThresholdsOut,
    summary="The thresholds behind server status and the alerts (silent agent, event loss, curve error)",
)
def read_thresholds(me: ReaderDep) -> ThresholdsOut:
    return thresholds_out()


@router.get("/servers/{server_id}", response_model=ServerOut, summary="One server")
def read_server(server_id: uuid.UUID, me: ReaderDep, db: DbDep) -> Server:
    return get_server(db, me.org_id, server_id)


@router.patch(
    "/servers/{server_id}", response_model=ServerOut, summary="Assign a server to a cluster (or unassign)"
)
def update_server(server_id: uuid.UUID, body: ServerPatch, me: MemberDep, db: DbDep) -> Server:
    s = get_server(db, me.org_id, server_id)
    if body.cluster_id is not None:
        get_cluster(db, me.org_id, body.cluster_id)
    left = s.cluster_id if s.cluster_id != body.cluster_id else None
    s.cluster_id = body.cluster_id
    db.flush()
    # the cluster it left may now be empty: its alerts resolve, and the channels hear of it
    deliveries = resolve_alerts_of_emptied_cluster(db, me.org_id, left, _now()) if left else []
    audit(
        db,
        "server.assigned",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="server",
        target_id=s.id,
        cluster_id=str(body.cluster_id) if body.cluster_id else None,
    )
    db.commit()
    for d in deliveries:  # after the commit; a lost one is sent by the worker's re-enqueue job
        tasks.send(DELIVER_ALERT, d)
    return s


@router.get(
    "/servers/{server_id}/curve",
    response_model=ServerCurveOut,
    summary="Latest curves of a server: per slab class (from the latest snapshot) and merged/calibrated",
)
def server_curve(server_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ServerCurveOut:
    return curve_views.server_curve(db, me.org_id, get_server(db, me.org_id, server_id))


@router.get(
    "/clusters/{cluster_id}/curve",
    response_model=ClusterCurveOut,
    summary="Latest cluster curve: hit ratio versus total memory and versus node count",
)
def cluster_curve(cluster_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ClusterCurveOut:
    return curve_views.cluster_curve(db, me.org_id, get_cluster(db, me.org_id, cluster_id))


# --- history and accuracy (downsampled into at most max_points buckets) ------------------------
MaxPoints = Annotated[int, Query(ge=1, le=2000, description="downsample into at most this many buckets")]
Start = Annotated[datetime | None, Query(description="default: 24 hours before end")]
End = Annotated[datetime | None, Query(description="default: now")]


@router.get(
    "/servers/{server_id}/history",
    response_model=HistoryOut,
    summary="Measured and predicted hit ratio, loss and memory over time (downsampled)",
)
def server_history(
    server_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    start: Start = None,
    end: End = None,
    max_points: MaxPoints = 200,
) -> HistoryOut:
    get_server(db, me.org_id, server_id)
    return history(db, me.org_id, "server", server_id, start, end, max_points)


@router.get(
    "/servers/{server_id}/accuracy",
    response_model=AccuracyOut,
    summary="The continuous accuracy record: predicted versus measured hit ratio over time",
)
def server_accuracy(
    server_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    start: Start = None,
    end: End = None,
    max_points: MaxPoints = 200,
) -> AccuracyOut:
    get_server(db, me.org_id, server_id)
    return accuracy(db, me.org_id, "server", server_id, start, end, max_points)


@router.get(
    "/clusters/{cluster_id}/history",
    response_model=HistoryOut,
    summary="A cluster's measured hit ratio (hits over gets of all its servers) over time",
)
def cluster_history(
    cluster_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    start: Start = None,
    end: End = None,
    max_points: MaxPoints = 200,
) -> HistoryOut:
    get_cluster(db, me.org_id, cluster_id)
    return history(db, me.org_id, "cluster", cluster_id, start, end, max_points)


@router.get(
    "/clusters/{cluster_id}/accuracy",
    response_model=AccuracyOut,
    summary="Predicted versus measured hit ratio of a cluster's servers over time",
)
def cluster_accuracy(
    cluster_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    start: Start = None,
    end: End = None,
    max_points: MaxPoints = 200,
) -> AccuracyOut:
    get_cluster(db, me.org_id, cluster_id)
    return accuracy(db, me.org_id, "cluster", cluster_id, start, end, max_points)


# --- stored curves over time (downsampled: the latest curve of each time bucket) ----------------
MaxCurves = Annotated[int, Query(ge=1, le=200, description="at most this many curves, spread over time")]
CurveStart = Annotated[datetime | None, Query(description="default: 7 days before end")]


@router.get(
    "/servers/{server_id}/curves",
    response_model=CurveHistoryOut,
    summary="The server's stored curves over time (the latest of each of at most max_curves periods)",
)
def server_curves(
    server_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    start: CurveStart = None,
    end: End = None,
    max_curves: MaxCurves = 24,
) -> CurveHistoryOut:
    get_server(db, me.org_id, server_id)
    return curve_views.curves_over_time(db, "server", me.org_id, server_id, start, end, max_curves)


@router.get(
    "/clusters/{cluster_id}/curves",
    response_model=CurveHistoryOut,
    summary="The cluster's stored curves over time (the latest of each of at most max_curves periods)",
)
def cluster_curves(
    cluster_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    start: CurveStart = None,
    end: End = None,
    max_curves: MaxCurves = 24,
) -> CurveHistoryOut:
    get_cluster(db, me.org_id, cluster_id)
    return curve_views.curves_over_time(db, "cluster", me.org_id, cluster_id, start, end, max_curves)
