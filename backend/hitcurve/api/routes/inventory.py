"""Clusters and servers: CRUD, latest curves (per class, merged, calibrated), history and accuracy."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Response
from sqlalchemy import func, select, text
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session

from hitcurve.api.deps import DbDep, MemberDep, ReaderDep
from hitcurve.core.audit import audit
from hitcurve.core.errors import ApiError, not_found
from hitcurve.models import (
    AccuracyRecord,
    Alert,
    Cluster,
    ClusterCurve,
    Server,
    ServerCurve,
    Snapshot,
    SnapshotClass,
)
from hitcurve.schemas.api import (
    AccuracyOut,
    AccuracyPoint,
    ClassCurveOut,
    ClusterCurveOut,
    ClusterIn,
    ClusterOut,
    ClusterPatch,
    CurveAt,
    CurveHistoryOut,
    HistoryOut,
    HistoryPoint,
    MergedCurveOut,
    ServerCurveOut,
    ServerOut,
    ServerPatch,
    SnapshotSummary,
)

router = APIRouter(tags=["inventory"])

Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=10**9)]
MAX_SPAN = timedelta(days=400)


def _now() -> datetime:
    return datetime.now(UTC)


def get_cluster(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID) -> Cluster:
    row = db.execute(
        select(Cluster).where(Cluster.id == cluster_id, Cluster.org_id == org_id)
    ).scalar_one_or_none()
    if row is None:
        raise not_found("cluster")
    return row


def get_server(db: Session, org_id: uuid.UUID, server_id: uuid.UUID) -> Server:
    row = db.execute(
        select(Server).where(Server.id == server_id, Server.org_id == org_id)
    ).scalar_one_or_none()
    if row is None:
        raise not_found("server")
    return row


def _cluster_out(db: Session, c: Cluster) -> ClusterOut:
    n = db.execute(
        select(func.count()).select_from(Server).where(Server.cluster_id == c.id, Server.org_id == c.org_id)
    ).scalar_one()
    return ClusterOut.model_validate(c).model_copy(update={"server_count": n})


# --- clusters ---------------------------------------------------------------------------------
@router.get(
    "/clusters",
    response_model=list[ClusterOut],
    summary="Clusters of the organization, each with its latest state (curve, sizing answer, open alerts)",
)
def list_clusters(me: ReaderDep, db: DbDep, limit: Limit = 100, offset: Offset = 0) -> list[ClusterOut]:
    counts = dict(
        db.execute(
            select(Server.cluster_id, func.count())
            .where(Server.org_id == me.org_id)
            .group_by(Server.cluster_id)
        ).all()
    )
    q = select(Cluster).where(Cluster.org_id == me.org_id).order_by(Cluster.name)
    rows = list(db.execute(q.limit(limit).offset(offset)).scalars())
    ids = [c.id for c in rows]
    latest = {
        cc.cluster_id: cc
        for cc in db.execute(
            select(ClusterCurve)
            .where(ClusterCurve.org_id == me.org_id, ClusterCurve.cluster_id.in_(ids))
            .order_by(ClusterCurve.cluster_id, ClusterCurve.computed_at.desc())
            .ext(distinct_on(ClusterCurve.cluster_id))
        ).scalars()
    }
    alerts: dict[uuid.UUID, tuple[int, int]] = {
        r.cluster_id: (r.n, r.critical)
        for r in db.execute(
            select(
                Alert.cluster_id,
                func.count().label("n"),
                func.count().filter(Alert.severity == "critical").label("critical"),
            )
            .where(Alert.org_id == me.org_id, Alert.state == "open", Alert.cluster_id.in_(ids))
            .group_by(Alert.cluster_id)
        ).all()
    }
    out = []
    for c in rows:
        cc = latest.get(c.id)
        n_open, n_critical = alerts.get(c.id, (0, 0))
        status, needed = _memory_for_target(db, c) if cc is not None else (None, None)
        out.append(
            ClusterOut.model_validate(c).model_copy(
                update={
                    "server_count": counts.get(c.id, 0),
                    "measured_hit_ratio": cc.measured_hit_ratio if cc else None,
                    "allocated_bytes": cc.current_bytes if cc else None,
                    "curve_window_end": cc.window_end if cc else None,
                    "memory_for_target_bytes": needed,
                    "memory_for_target_status": status,
                    "open_alerts": n_open,
                    "open_critical_alerts": n_critical,
                }
            )
        )
    return out


def _memory_for_target(db: Session, c: Cluster) -> tuple[str | None, float | None]:
    """The answer of GET /sizing/clusters/{id}/memory for the cluster's target: the same fitted
    curve (and its cache entry) and the same inverse, so the overview and the sizing API agree."""
    from hitcurve.api.routes import sizing  # imports this module

    try:
        b, _ = sizing.cached(
            ("cluster", c.org_id, c.id, None), lambda: sizing.cluster_basis(db, c.org_id, c.id, None)
        )
    except ApiError as exc:
        if exc.code == "not_enough_data":
            return None, None
        raise
    ans = sizing.memory_answer(sizing.Subject(type="cluster", id=c.id), b, c.target_hit_ratio)
    return ans.status, ans.memory_bytes if ans.status == "ok" else None


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
    snaps = {
        r.server_id: r
        for r in db.execute(
            select(Snapshot.server_id, Snapshot.loss_ratio, Snapshot.measured_hit_ratio)
            .where(Snapshot.org_id == me.org_id, Snapshot.server_id.in_(ids))
            .order_by(Snapshot.server_id, Snapshot.window_end.desc())
            .ext(distinct_on(Snapshot.server_id))
        ).all()
    }
    end = _now()
    errors: dict[uuid.UUID, float] = dict(
        db.execute(
            select(AccuracyRecord.server_id, func.avg(func.abs(AccuracyRecord.error_pp)))
            .where(
                AccuracyRecord.org_id == me.org_id,
                AccuracyRecord.server_id.in_(ids),
                AccuracyRecord.window_end > end - timedelta(days=1),
                AccuracyRecord.window_end <= end,
            )
            .group_by(AccuracyRecord.server_id)
        ).all()
    )
    out = []
    for s in rows:
        snap = snaps.get(s.id)
        out.append(
            ServerOut.model_validate(s).model_copy(
                update={
                    "loss_ratio": snap.loss_ratio if snap else None,
                    "measured_hit_ratio": snap.measured_hit_ratio if snap else None,
                    "curve_error_pp": errors.get(s.id),
                }
            )
        )
    return out


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


def _age(t: datetime) -> float:
    return max(0.0, (_now() - t).total_seconds())


@router.get(
    "/servers/{server_id}/curve",
    response_model=ServerCurveOut,
    summary="Latest curves of a server: per slab class (from the latest snapshot) and merged/calibrated",
)
def server_curve(server_id: uuid.UUID, me: ReaderDep, db: DbDep) -> ServerCurveOut:
    s = get_server(db, me.org_id, server_id)
    snap = db.execute(
        select(Snapshot)
        .where(Snapshot.org_id == me.org_id, Snapshot.server_id == s.id)
        .order_by(Snapshot.window_end.desc())
        .limit(1)
    ).scalar_one_or_none()
    classes: list[ClassCurveOut] = []
    if snap is not None:
        for c in db.execute(
            select(SnapshotClass)
            .where(SnapshotClass.snapshot_id == snap.id, SnapshotClass.org_id == me.org_id)
            .order_by(SnapshotClass.class_id)
        ).scalars():
            classes.append(
                ClassCurveOut(
                    class_id=c.class_id,
                    chunk_size=c.chunk_size,
                    pages=c.pages,
                    items=c.items,
                    requests=c.requests,
                    current_items=c.current_items,
                    sizes_items=c.sizes_items,
                    sizes_bytes=[v * c.chunk_size for v in c.sizes_items],
                    hit_ratios=c.hit_ratios,
                )
            )
    curve = db.execute(
        select(ServerCurve)
        .where(ServerCurve.org_id == me.org_id, ServerCurve.server_id == s.id)
        .order_by(ServerCurve.window_end.desc())
        .limit(1)
    ).scalar_one_or_none()
    merged = None
    if curve is not None:
        merged = MergedCurveOut(
            snapshot_id=curve.snapshot_id,
            window_end=curve.window_end,
            computed_at=curve.computed_at,
            age_seconds=_age(curve.window_end),
            sizes_bytes=curve.sizes_bytes,
            hit_ratio_proportional=curve.hit_ratio_proportional,
            hit_ratio_optimal=curve.hit_ratio_optimal,
            hit_ratio_calibrated=curve.hit_ratio_calibrated,
            band_low=curve.band_low,
            band_high=curve.band_high,
            current_bytes=curve.current_bytes,
            measured_hit_ratio=curve.measured_hit_ratio,
            predicted_hit_ratio=curve.predicted_hit_ratio,
            calibration=curve.calibration,
            advice=curve.advice,
        )
    summary = None
    if snap is not None:
        summary = SnapshotSummary(
            id=snap.id,
            window_start=snap.window_start,
            window_end=snap.window_end,
            received_at=snap.received_at,
            measured_hit_ratio=snap.measured_hit_ratio,
            loss_ratio=snap.loss_ratio,
            flagged=snap.flagged,
            status=snap.status,
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
    cc = db.execute(
        select(ClusterCurve)
        .where(ClusterCurve.org_id == me.org_id, ClusterCurve.cluster_id == c.id)
        .order_by(ClusterCurve.computed_at.desc())
        .limit(1)
    ).scalar_one_or_none()
    out = ClusterCurveOut(cluster=_cluster_out(db, c))
    if cc is None:
        return out
    return out.model_copy(
        update=dict(
            computed_at=cc.computed_at,
            age_seconds=_age(cc.window_end),
            window_end=cc.window_end,
            basis=cc.basis,
            sizes_bytes=cc.sizes_bytes,
            hit_ratios=cc.hit_ratios,
            band_low=cc.band_low,
            band_high=cc.band_high,
            current_bytes=cc.current_bytes,
            measured_hit_ratio=cc.measured_hit_ratio,
            node_size_bytes=cc.node_size_bytes,
            node_counts=cc.node_counts,
            node_hit_ratios=cc.node_hit_ratios,
            server_count=cc.server_count,
        )
    )


# --- history and accuracy (downsampled into at most max_points buckets) ------------------------
def time_range(start: datetime | None, end: datetime | None) -> tuple[datetime, datetime]:
    end = end or _now()
    try:
        start = start or end - timedelta(days=1)
    except OverflowError:
        raise ApiError(422, "invalid_request", "end is too early to have a default start") from None
    if start.tzinfo is None or end.tzinfo is None:
        raise ApiError(422, "invalid_request", "start and end need a time zone (e.g. 2026-11-22T12:00:00Z)")
    if end <= start:
        raise ApiError(422, "invalid_request", "end must be after start")
    if end - start > MAX_SPAN:
        raise ApiError(422, "invalid_request", "at most 400 days per request")
    return start, end


MaxPoints = Annotated[int, Query(ge=1, le=2000, description="downsample into at most this many buckets")]
Start = Annotated[datetime | None, Query(description="default: 24 hours before end")]
End = Annotated[datetime | None, Query(description="default: now")]

_HISTORY_SQL = """
SELECT least(floor(extract(epoch FROM (s.window_end - :start)) / :bw)::bigint, :last) AS b, count(*) AS n,
       sum(s.get_hits)::float8 / nullif(sum(s.get_hits + s.get_misses), 0) AS measured,
       avg(c.predicted_hit_ratio) AS predicted, avg(s.loss_ratio) AS loss, avg(s.bytes_used) AS bytes_used,
       sum(s.flagged::int) AS flagged
FROM snapshots s
JOIN servers v ON v.id = s.server_id AND v.org_id = s.org_id
LEFT JOIN server_curves c ON c.snapshot_id = s.id AND c.org_id = s.org_id
WHERE s.org_id = :org AND {subject} AND s.window_end > :start AND s.window_end <= :end
GROUP BY b ORDER BY b
"""

_ACCURACY_SQL = """
SELECT least(floor(extract(epoch FROM (a.window_end - :start)) / :bw)::bigint, :last) AS b, count(*) AS n,
       avg(a.predicted_hit_ratio) AS predicted, avg(a.measured_hit_ratio) AS measured, avg(a.error_pp) AS err,
       avg(abs(a.error_pp)) AS abs_err, max(abs(a.error_pp)) AS max_abs_err
FROM accuracy_records a
JOIN servers v ON v.id = a.server_id AND v.org_id = a.org_id
WHERE a.org_id = :org AND {subject} AND a.window_end > :start AND a.window_end <= :end
GROUP BY b ORDER BY b
"""


def _bucket_bounds(start: datetime, bw: float, b: int) -> tuple[datetime, datetime]:
    return start + timedelta(seconds=b * bw), start + timedelta(seconds=(b + 1) * bw)


def history(
    db: Session,
    org_id: uuid.UUID,
    subject: str,
    subject_id: uuid.UUID,
    start: datetime | None,
    end: datetime | None,
    max_points: int,
) -> HistoryOut:
    start, end = time_range(start, end)
    bw = (end - start).total_seconds() / max_points
    rows = db.execute(
        text(_HISTORY_SQL.format(subject=subject)),
        {"org": org_id, "sid": subject_id, "start": start, "end": end, "bw": bw, "last": max_points - 1},
    ).all()
    points = []
    for r in rows:
        b0, b1 = _bucket_bounds(start, bw, min(int(r.b), max_points - 1))
        points.append(
            HistoryPoint(
                start=b0,
                end=b1,
                samples=r.n,
                measured_hit_ratio=r.measured,
                predicted_hit_ratio=r.predicted,
                loss_ratio=r.loss,
                bytes_used=float(r.bytes_used) if r.bytes_used is not None else None,
                flagged=int(r.flagged or 0),
            )
        )
    return HistoryOut(start=start, end=end, bucket_seconds=bw, points=points)


def accuracy(
    db: Session,
    org_id: uuid.UUID,
    subject: str,
    subject_id: uuid.UUID,
    start: datetime | None,
    end: datetime | None,
    max_points: int,
) -> AccuracyOut:
    start, end = time_range(start, end)
    bw = (end - start).total_seconds() / max_points
    rows = db.execute(
        text(_ACCURACY_SQL.format(subject=subject)),
        {"org": org_id, "sid": subject_id, "start": start, "end": end, "bw": bw, "last": max_points - 1},
    ).all()
    points: list[AccuracyPoint] = []
    total = 0
    weighted_abs = 0.0
    worst: float | None = None
    for r in rows:
        b0, b1 = _bucket_bounds(start, bw, min(int(r.b), max_points - 1))
        points.append(
            AccuracyPoint(
                start=b0,
                end=b1,
                samples=r.n,
                predicted_hit_ratio=r.predicted,
                measured_hit_ratio=r.measured,
                error_pp=r.err,
                abs_error_pp=r.abs_err,
            )
        )
        total += r.n
        weighted_abs += r.abs_err * r.n
        worst = r.max_abs_err if worst is None else max(worst, r.max_abs_err)
    return AccuracyOut(
        start=start,
        end=end,
        bucket_seconds=bw,
        samples=total,
        mean_abs_error_pp=weighted_abs / total if total else None,
        max_abs_error_pp=worst,
        points=points,
    )


SERVER_SUBJECT = "v.id = :sid"
CLUSTER_SUBJECT = "v.cluster_id = :sid"


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
    return history(db, me.org_id, SERVER_SUBJECT, server_id, start, end, max_points)


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
    return accuracy(db, me.org_id, SERVER_SUBJECT, server_id, start, end, max_points)


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
    return history(db, me.org_id, CLUSTER_SUBJECT, cluster_id, start, end, max_points)


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
    return accuracy(db, me.org_id, CLUSTER_SUBJECT, cluster_id, start, end, max_points)


# --- stored curves over time (downsampled: the latest curve of each time bucket) ----------------
MaxCurves = Annotated[int, Query(ge=1, le=200, description="at most this many curves, spread over time")]
CurveStart = Annotated[datetime | None, Query(description="default: 7 days before end")]

_CURVES_SQL = """
SELECT DISTINCT ON (b) id FROM (
  SELECT id, window_end, computed_at,
         least(floor(extract(epoch FROM (window_end - :start)) / :bw)::bigint, :last) AS b
  FROM {table}
  WHERE org_id = :org AND {column} = :sid AND window_end > :start AND window_end <= :end
) t
ORDER BY b, window_end DESC, computed_at DESC, id DESC
"""


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


def _curve_ids(
    db: Session,
    table: str,
    column: str,
    org_id: uuid.UUID,
    sid: uuid.UUID,
    start: datetime,
    end: datetime,
    bw: float,
    max_curves: int,
) -> list[int]:
    return [
        r.id
        for r in db.execute(
            text(_CURVES_SQL.format(table=table, column=column)),
            {"org": org_id, "sid": sid, "start": start, "end": end, "bw": bw, "last": max_curves - 1},
        ).all()
    ]


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
    ids = _curve_ids(db, "server_curves", "server_id", me.org_id, server_id, start, end, bw, max_curves)
    rows = db.execute(
        select(ServerCurve)
        .where(ServerCurve.org_id == me.org_id, ServerCurve.id.in_(ids))
        .order_by(ServerCurve.window_end, ServerCurve.id)
    ).scalars()
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
    ids = _curve_ids(db, "cluster_curves", "cluster_id", me.org_id, cluster_id, start, end, bw, max_curves)
    rows = db.execute(
        select(ClusterCurve)
        .where(ClusterCurve.org_id == me.org_id, ClusterCurve.id.in_(ids))
        .order_by(ClusterCurve.window_end, ClusterCurve.id)
    ).scalars()
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
