"""What GET /metrics exposes, read for one organization: the latest state of each server and
cluster, and the service's own health as the organization's rows show it (uploads received,
how long the worker took, what waits in the queue, what failed). Everything comes from
PostgreSQL, so every backend process answers the same."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session

from hitcurve.crud.newest import FIRST_SPAN
from hitcurve.models import (
    AccuracyRecord,
    Alert,
    Cluster,
    ClusterCurve,
    Server,
    SimulationRun,
    Snapshot,
    TraceChunk,
)

# Windows of the service-health figures.
INGEST_WINDOW = timedelta(minutes=5)
LATENCY_WINDOW = timedelta(minutes=15)
FAILURE_WINDOW = timedelta(hours=1)
CURVE_ERROR_WINDOW = timedelta(days=1)  # as the servers list's curve_error_pp


@dataclass
class ServerState:
    id: uuid.UUID
    address: str
    hostname: str
    cluster_id: uuid.UUID | None
    cluster: str
    limit_maxbytes: int | None
    bytes_used: int | None
    measured_hit_ratio: float | None
    loss_ratio: float | None
    loss_flagged: bool | None
    curve_error_pp: float | None
    last_snapshot_at: datetime | None


@dataclass
class ClusterState:
    id: uuid.UUID
    name: str
    target_hit_ratio: float
    servers: int
    measured_hit_ratio: float | None
    current_bytes: int | None
    window_end: datetime | None


@dataclass
class ServiceHealth:
    snapshots_received: int  # in INGEST_WINDOW
    processing_p50_s: float | None  # received -> processed, snapshots processed in LATENCY_WINDOW
    processing_p95_s: float | None
    pending: dict[str, int]
    oldest_pending_age_s: dict[str, float]
    failures: dict[str, int]  # in FAILURE_WINDOW
    open_alerts: dict[str, int]  # by severity


def _latest_snapshots(
    db: Session, org_id: uuid.UUID, since: datetime | None, server_ids: list[uuid.UUID] | None = None
) -> dict[uuid.UUID, Any]:
    """Each server's newest snapshot (its measured state), from windows ending at `since` or later
    (None: any window), of the given servers (None: all of the organization's)."""
    rows = db.execute(
        select(
            Snapshot.server_id,
            Snapshot.measured_hit_ratio,
            Snapshot.loss_ratio,
            Snapshot.flagged,
            Snapshot.bytes_used,
            Snapshot.limit_maxbytes,
        )
        .where(
            Snapshot.org_id == org_id,
            *([Snapshot.window_end >= since] if since is not None else []),
            *([Snapshot.server_id.in_(server_ids)] if server_ids is not None else []),
        )
        .order_by(Snapshot.server_id, Snapshot.window_end.desc())
        .ext(distinct_on(Snapshot.server_id))
    ).all()
    return {r.server_id: r for r in rows}


def servers(db: Session, org_id: uuid.UUID) -> list[ServerState]:
    now = datetime.now(UTC)
    # The newest snapshot of each server from the last FIRST_SPAN's day partitions (crud.newest:
    # unbounded, this planned every day of the table on each scrape); only servers with no window
    # there (silent for a day, or never uploaded) are looked up again over every day, as before.
    latest = _latest_snapshots(db, org_id, now - FIRST_SPAN)
    since = now - CURVE_ERROR_WINDOW
    errors: dict[uuid.UUID, float] = dict(
        db.execute(
            select(AccuracyRecord.server_id, func.avg(func.abs(AccuracyRecord.error_pp)))
            .where(AccuracyRecord.org_id == org_id, AccuracyRecord.window_end > since)
            .group_by(AccuracyRecord.server_id)
        ).all()
    )
    rows = db.execute(
        select(Server, Cluster.name)
        .outerjoin(Cluster, Cluster.id == Server.cluster_id)
        .where(Server.org_id == org_id)
        .order_by(Server.address)
    ).all()
    silent = [r[0].id for r in rows if r[0].id not in latest]
    if silent:
        latest.update(_latest_snapshots(db, org_id, None, silent))
    out = []
    for r in rows:
        s: Server = r[0]
        snap = latest.get(s.id)
        out.append(
            ServerState(
                id=s.id,
                address=s.address,
                hostname=s.hostname or "",
                cluster_id=s.cluster_id,
                cluster=r.name or "",
                limit_maxbytes=snap.limit_maxbytes
                if snap is not None and snap.limit_maxbytes is not None
                else s.limit_maxbytes,
                bytes_used=snap.bytes_used if snap is not None else None,
                measured_hit_ratio=snap.measured_hit_ratio if snap is not None else None,
                loss_ratio=snap.loss_ratio if snap is not None else None,
                loss_flagged=snap.flagged if snap is not None else None,
                curve_error_pp=errors.get(s.id),
                last_snapshot_at=s.last_snapshot_at,
            )
        )
    return out


def clusters(db: Session, org_id: uuid.UUID) -> list[ClusterState]:
    latest = (
        select(
            ClusterCurve.cluster_id,
            ClusterCurve.measured_hit_ratio,
            ClusterCurve.current_bytes,
            ClusterCurve.window_end,
        )
        .where(ClusterCurve.org_id == org_id)
        .order_by(ClusterCurve.cluster_id, ClusterCurve.computed_at.desc())
        .ext(distinct_on(ClusterCurve.cluster_id))
        .subquery()
    )
    counts = dict(
        db.execute(
            select(Server.cluster_id, func.count()).where(Server.org_id == org_id).group_by(Server.cluster_id)
        ).all()
    )
    rows = db.execute(
        select(Cluster, latest)
        .outerjoin(latest, latest.c.cluster_id == Cluster.id)
        .where(Cluster.org_id == org_id)
        .order_by(Cluster.name)
    ).all()
    return [
        ClusterState(
            id=r[0].id,
            name=r[0].name,
            target_hit_ratio=r[0].target_hit_ratio,
            servers=counts.get(r[0].id, 0),
            measured_hit_ratio=r.measured_hit_ratio,
            current_bytes=r.current_bytes,
            window_end=r.window_end,
        )
        for r in rows
    ]


def service_health(db: Session, org_id: uuid.UUID) -> ServiceHealth:
    now = datetime.now(UTC)
    received = db.execute(
        select(func.count()).where(Snapshot.org_id == org_id, Snapshot.received_at > now - INGEST_WINDOW)
    ).scalar_one()
    delay = func.extract("epoch", Snapshot.processed_at - Snapshot.received_at)
    p50, p95 = db.execute(
        select(
            func.percentile_cont(0.5).within_group(delay),
            func.percentile_cont(0.95).within_group(delay),
        ).where(
            Snapshot.org_id == org_id,
            Snapshot.status == "processed",
            Snapshot.processed_at > now - LATENCY_WINDOW,
        )
    ).one()
    pending: dict[str, int] = {}
    oldest: dict[str, float] = {}
    failures: dict[str, int] = {}
    for kind, model, created in (
        ("snapshot", Snapshot, Snapshot.received_at),
        ("trace_chunk", TraceChunk, TraceChunk.received_at),
        ("simulation", SimulationRun, SimulationRun.created_at),
    ):
        n, first = db.execute(
            select(func.count(), func.min(created)).where(model.org_id == org_id, model.status == "pending")
        ).one()
        pending[kind] = n
        oldest[kind] = (now - first).total_seconds() if first is not None else 0.0
        failed_states = ("failed", "parked") if kind != "simulation" else ("failed",)
        failures[kind] = db.execute(
            select(func.count()).where(
                model.org_id == org_id, model.status.in_(failed_states), created > now - FAILURE_WINDOW
            )
        ).scalar_one()
    alerts = dict(
        db.execute(
            select(Alert.severity, func.count())
            .where(Alert.org_id == org_id, Alert.state == "open")
            .group_by(Alert.severity)
        ).all()
    )
    return ServiceHealth(
        snapshots_received=received,
        processing_p50_s=float(p50) if p50 is not None else None,
        processing_p95_s=float(p95) if p95 is not None else None,
        pending=pending,
        oldest_pending_age_s=oldest,
        failures=failures,
        open_alerts=alerts,
    )
