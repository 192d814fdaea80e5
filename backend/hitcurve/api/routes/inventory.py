"""Clusters and servers: CRUD, latest curves (per class, merged, calibrated), history and accuracy
(HTTP only: queries in hitcurve.crud, the sizing answer in hitcurve.sizing)."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated, Any

from fastapi import APIRouter, Query, Response
from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from hitcurve import windows
from hitcurve.api.deps import DbDep, MemberDep, ReaderDep
from hitcurve.core.audit import audit
from hitcurve.core.errors import ApiError
from hitcurve.crud import curves as curves_crud
from hitcurve.crud.history import accuracy, history, mae_by_server, time_range
from hitcurve.crud.inventory import (
    cluster_server_count,
    get_cluster,
    get_server,
    open_alert_counts,
    server_counts_by_cluster,
)
from hitcurve.models import Cluster, Server
from hitcurve.schemas.api import (
    AccuracyOut,
    ClassCurveOut,
    ClusterCurveOut,
    ClusterIn,
    ClusterOut,
    ClusterPatch,
    CurveAt,
    CurveHistoryOut,
    HistoryOut,
    MergedCurveOut,
    ServerCurveOut,
    ServerOut,
    ServerPatch,
    SnapshotSummary,
    ThresholdsOut,
)
from hitcurve.sizing import answer_curve, drawn_band, memory_for_target, server_fills
from hitcurve.status import (
    CURVE_ERROR_STATISTIC,
    Thresholds,
    cluster_status,
    curve_error_warning,
    loss_warning,
    server_status,
)

router = APIRouter(tags=["inventory"])

Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=10**9)]


def _now() -> datetime:
    return datetime.now(UTC)


def _cluster_out(db: Session, c: Cluster) -> ClusterOut:
    return ClusterOut.model_validate(c).model_copy(update={"server_count": cluster_server_count(db, c)})


# --- clusters ---------------------------------------------------------------------------------
@router.get(
    "/clusters",
    response_model=list[ClusterOut],
    summary="Clusters of the organization, each with its latest state (curve, sizing answer, open alerts)",
)
def list_clusters(me: ReaderDep, db: DbDep, limit: Limit = 100, offset: Offset = 0) -> list[ClusterOut]:
    counts = server_counts_by_cluster(db, me.org_id)
    q = select(Cluster).where(Cluster.org_id == me.org_id).order_by(Cluster.name)
    rows = list(db.execute(q.limit(limit).offset(offset)).scalars())
    ids = [c.id for c in rows]
    latest = curves_crud.latest_cluster_curves(db, me.org_id, ids)
    alerts = open_alert_counts(db, me.org_id, ids)
    out = []
    for c in rows:
        cc = latest.get(c.id)
        n_open, n_critical = alerts.get(c.id, (0, 0))
        ans = memory_for_target(db, c) if cc is not None else None
        # the provisional number while memcached fills, as the sizing answer carries it
        needed = ans.memory_bytes if ans and ans.status in ("ok", "warming_up") else None
        measured = cc.measured_hit_ratio if cc else None
        out.append(
            ClusterOut.model_validate(c).model_copy(
                update={
                    "server_count": counts.get(c.id, 0),
                    "measured_hit_ratio": measured,
                    "allocated_bytes": cc.current_bytes if cc else None,
                    "curve_window_end": cc.window_end if cc else None,
                    "memory_for_target_bytes": needed,
                    "memory_for_target_status": ans.status if ans else None,
                    "target_answer": ans,
                    "open_alerts": n_open,
                    "open_critical_alerts": n_critical,
                    "status": cluster_status(
                        cc is not None,
                        n_open,
                        n_critical,
                        measured,
                        c.target_hit_ratio,
                        warming=ans is not None and ans.status == "warming_up",
                    ),
                }
            )
        )
    return out


@router.post(
    "/clusters",
    status_code=201,
    response_model=ClusterOut,
    summary="Create a cluster",
    responses={409: {"description": "a cluster with this name exists"}},
)
def create_cluster(body: ClusterIn, me: MemberDep, db: DbDep) -> ClusterOut:
    if db.execute(select(Cluster.id).where(Cluster.org_id == me.org_id, Cluster.name == body.name)).first():
        raise ApiError(409, "name_taken", "a cluster with this name already exists")
    c = Cluster(org_id=me.org_id, **body.model_dump())
    db.add(c)
    db.flush()
    audit(db, "cluster.created", org_id=me.org_id, user_id=me.user_id, target_type="cluster", target_id=c.id)
    db.commit()
    return _cluster_out(db, c)


@router.get("/clusters/{cluster_id}", response_model=ClusterOut, summary="One cluster")
def read_cluster(cluster_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ClusterOut:
    return _cluster_out(db, get_cluster(db, me.org_id, cluster_id))


@router.patch("/clusters/{cluster_id}", response_model=ClusterOut, summary="Change a cluster")
def update_cluster(cluster_id: uuid.UUID, body: ClusterPatch, me: MemberDep, db: DbDep) -> ClusterOut:
    c = get_cluster(db, me.org_id, cluster_id)
    changes = body.model_dump(exclude_unset=True)
    for field in ("name", "price_per_gb_month", "target_hit_ratio"):
        if field in changes and changes[field] is None:
            raise ApiError(422, "invalid_request", f"{field} cannot be null")
    if (
        "name" in changes
        and changes["name"] != c.name
        and db.execute(
            select(Cluster.id).where(Cluster.org_id == me.org_id, Cluster.name == changes["name"])
        ).first()
    ):
        raise ApiError(409, "name_taken", "a cluster with this name already exists")
    for k, v in changes.items():
        setattr(c, k, v)
    c.updated_at = _now()
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
    return _cluster_out(db, c)


@router.delete(
    "/clusters/{cluster_id}", status_code=204, summary="Delete a cluster (its servers are unassigned)"
)
def delete_cluster(cluster_id: uuid.UUID, me: MemberDep, db: DbDep) -> Response:
    c = get_cluster(db, me.org_id, cluster_id)
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
    q = select(Server).where(Server.org_id == me.org_id)
    if cluster_id is not None:
        q = q.where(Server.cluster_id == cluster_id)
    rows = list(db.execute(q.order_by(Server.address).limit(limit).offset(offset)).scalars())
    ids = [s.id for s in rows]
    snaps = curves_crud.latest_snapshot_facts(db, me.org_id, ids)
    end = _now()
    errors = mae_by_server(db, me.org_id, ids, end - timedelta(days=1), end)
    fills = server_fills(db, me.org_id, ids)
    th = Thresholds.from_env()
    out = []
    for s in rows:
        snap = snaps.get(s.id)
        loss = snap.loss_ratio if snap else None
        error = errors.get(s.id)
        quiet = snap is not None and int(snap.cmd_get or 0) < windows.MIN_READS
        fill = fills.get(s.id)
        warming = fill is not None and fill.warming_up
        status, note = server_status(s.last_snapshot_at, loss, error, end, th, quiet=quiet, warming=warming)
        out.append(
            ServerOut.model_validate(s).model_copy(
                update={
                    "loss_ratio": loss,
                    "measured_hit_ratio": snap.measured_hit_ratio if snap else None,
                    "curve_error_pp": error,
                    "status": status,
                    "status_note": note,
                    "loss_warning": loss_warning(loss, th) if snap else None,
                    # no warning while warming: the error of a still-filling memcached is expected
                    "curve_error_warning": (curve_error_warning(error, th) and not warming)
                    if error is not None
                    else None,
                    "data_basis": snap.basis if snap else None,
                    "quiet": quiet if snap else None,
                }
            )
        )
    return out


@router.get(
    "/thresholds",
    response_model=ThresholdsOut,
    summary="The thresholds behind server status and the alerts (silent agent, event loss, curve error)",
)
def read_thresholds(me: ReaderDep) -> ThresholdsOut:
    th = Thresholds.from_env()
    return ThresholdsOut(
        silent_after_s=th.silent_after_s,
        loss_ratio=th.loss_ratio,
        curve_error_pp=th.curve_error_pp,
        curve_error_statistic=CURVE_ERROR_STATISTIC,
        curve_error_min_windows=th.curve_error_min_windows,
    )


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
    s.cluster_id = body.cluster_id
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
    return s


def _attrs(row: object, model: type[BaseModel]) -> dict[str, Any]:
    """The row's attributes named like the model's fields, except the ones the row lacks or the
    caller computes (age_seconds, sizes_bytes of a class, the cluster itself)."""
    computed = {"age_seconds", "cluster", "data_basis", "stats_model_state"} | (
        {"sizes_bytes"} if model is ClassCurveOut else set()
    )
    return {k: getattr(row, k) for k in model.model_fields if k not in computed and hasattr(row, k)}


def _age(t: datetime) -> float:
    return max(0.0, (_now() - t).total_seconds())


@router.get(
    "/servers/{server_id}/curve",
    response_model=ServerCurveOut,
    summary="Latest curves of a server: per slab class (from the latest snapshot) and merged/calibrated",
)
def server_curve(server_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ServerCurveOut:
    s = get_server(db, me.org_id, server_id)
    snap = curves_crud.latest_snapshot(db, me.org_id, s.id)
    classes = [
        ClassCurveOut(**_attrs(c, ClassCurveOut), sizes_bytes=[v * c.chunk_size for v in c.sizes_items])
        for c in (curves_crud.snapshot_classes(db, me.org_id, snap) if snap is not None else [])
    ]
    # the curve the answers rest on: a quiet or loss-flagged newer window never replaces it
    curve, left_out = answer_curve(db, me.org_id, s.id)
    merged = None
    if curve is not None:
        ys = curve.hit_ratio_calibrated or curve.hit_ratio_proportional
        band = drawn_band(db, "server", me.org_id, s.id, list(curve.sizes_bytes), list(ys))
        merged = MergedCurveOut(
            **_attrs(curve, MergedCurveOut)
            | {"band_low": band[0] if band else None, "band_high": band[1] if band else None},
            age_seconds=_age(curve.window_end),
            data_basis=(curve.calibration or {}).get("basis", "watch"),
            windows_note=left_out,
        )
    summary = (
        SnapshotSummary(
            **_attrs(snap, SnapshotSummary),
            data_basis=snap.basis,
            stats_model_state=(snap.stats_model or {}).get("state"),
        )
        if snap is not None
        else None
    )
    return ServerCurveOut(
        server=ServerOut.model_validate(s), latest_snapshot=summary, classes=classes, merged=merged
    )


@router.get(
    "/clusters/{cluster_id}/curve",
    response_model=ClusterCurveOut,
    summary="Latest cluster curve: hit ratio versus total memory and versus node count",
)
def cluster_curve(cluster_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ClusterCurveOut:
    c = get_cluster(db, me.org_id, cluster_id)
    cc = curves_crud.latest_cluster_curve(db, me.org_id, c.id)
    out = ClusterCurveOut(cluster=_cluster_out(db, c))
    if cc is None:
        return out
    band = drawn_band(db, "cluster", me.org_id, c.id, list(cc.sizes_bytes), list(cc.hit_ratios))
    return out.model_copy(
        update=_attrs(cc, ClusterCurveOut)
        | {
            "age_seconds": _age(cc.window_end),
            "band_low": band[0] if band else None,
            "band_high": band[1] if band else None,
        }
    )


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


def _curve_window(
    start: datetime | None, end: datetime | None, max_curves: int
) -> tuple[datetime, datetime, float]:
    if start is None:
        try:
            start = (end or _now()) - timedelta(days=7)
        except OverflowError:
            raise ApiError(422, "invalid_request", "end is too early to have a default start") from None
    start, end = time_range(start, end)
    return start, end, (end - start).total_seconds() / max_curves


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
    start, end, bw = _curve_window(start, end, max_curves)
    rows = curves_crud.server_curves_over_time(db, me.org_id, server_id, start, end, bw, max_curves)
    curves = [
        CurveAt(
            window_end=r.window_end,
            computed_at=r.computed_at,
            basis="calibrated" if r.hit_ratio_calibrated else "estimate",
            sizes_bytes=r.sizes_bytes,
            hit_ratios=r.hit_ratio_calibrated or r.hit_ratio_proportional,
            hit_ratio_calibrated=r.hit_ratio_calibrated,
            hit_ratio_proportional=r.hit_ratio_proportional,
            current_bytes=r.current_bytes,
            measured_hit_ratio=r.measured_hit_ratio,
        )
        for r in rows
    ]
    return CurveHistoryOut(start=start, end=end, bucket_seconds=bw, curves=curves)


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
    start, end, bw = _curve_window(start, end, max_curves)
    rows = curves_crud.cluster_curves_over_time(db, me.org_id, cluster_id, start, end, bw, max_curves)
    curves = [
        CurveAt(
            window_end=r.window_end,
            computed_at=r.computed_at,
            basis="calibrated" if r.basis == "calibrated" else "estimate",
            sizes_bytes=r.sizes_bytes,
            hit_ratios=r.hit_ratios,
            current_bytes=r.current_bytes,
            measured_hit_ratio=r.measured_hit_ratio,
        )
        for r in rows
    ]
    return CurveHistoryOut(start=start, end=end, bucket_seconds=bw, curves=curves)
