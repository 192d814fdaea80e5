"""Clusters and servers by id, always scoped by org_id: an unknown id and another organization's
id answer the same 404, so no caller can tell them apart."""

import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hitcurve.core.domain import Conflict, Invalid
from hitcurve.crud.notifications import queue_change
from hitcurve.crud.owned import owned
from hitcurve.models import Alert, Cluster, Server


def get_cluster(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID) -> Cluster:
    return owned(db, Cluster, org_id, cluster_id, "cluster")


def get_server(db: Session, org_id: uuid.UUID, server_id: uuid.UUID) -> Server:
    return owned(db, Server, org_id, server_id, "server")


def cluster_server_ids(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID) -> list[uuid.UUID]:
    return list(
        db.execute(
            select(Server.id).where(Server.org_id == org_id, Server.cluster_id == cluster_id)
        ).scalars()
    )


def cluster_server_count(db: Session, c: Cluster) -> int:
    return db.execute(
        select(func.count()).select_from(Server).where(Server.cluster_id == c.id, Server.org_id == c.org_id)
    ).scalar_one()


def server_counts_by_cluster(db: Session, org_id: uuid.UUID) -> dict[uuid.UUID | None, int]:
    return dict(
        db.execute(
            select(Server.cluster_id, func.count()).where(Server.org_id == org_id).group_by(Server.cluster_id)
        ).all()
    )


def open_alert_counts(
    db: Session, org_id: uuid.UUID, cluster_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, tuple[int, int]]:
    """Per cluster: (open alerts, open critical alerts)."""
    return {
        r.cluster_id: (r.n, r.critical)
        for r in db.execute(
            select(
                Alert.cluster_id,
                func.count().label("n"),
                func.count().filter(Alert.severity == "critical").label("critical"),
            )
            .where(Alert.org_id == org_id, Alert.state == "open", Alert.cluster_id.in_(cluster_ids))
            .group_by(Alert.cluster_id)
        ).all()
    }


def resolve_alerts_of_emptied_cluster(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, at: datetime
) -> list[int]:
    """A cluster whose last server left has nothing left to alert about: its open alerts resolve
    (in the caller's transaction), each resolution queued for the channels (their delivery ids,
    to enqueue after the commit). Nothing happens while the cluster still has a server."""
    if db.execute(
        select(func.count()).where(Server.org_id == org_id, Server.cluster_id == cluster_id)
    ).scalar():
        return []
    open_alerts = db.execute(
        select(Alert).where(Alert.org_id == org_id, Alert.cluster_id == cluster_id, Alert.state == "open")
    ).scalars()
    deliveries: list[int] = []
    for a in open_alerts:
        a.state, a.resolved_at = "resolved", at
        deliveries += queue_change(db, org_id, a.id, "resolved", a.severity, at)
    return deliveries


def resolve_alerts_of_deleted_cluster(db: Session, c: Cluster, at: datetime) -> list[int]:
    """Before a cluster is deleted (in the caller's transaction): its open alerts resolve, each
    resolution queued for the channels (delivery ids, to enqueue after the commit), and every
    alert of the cluster keeps its name and id in details; the delete then sets their cluster_id
    to NULL (the foreign key), so the history and the deliveries stay and still name the cluster."""
    deliveries: list[int] = []
    for a in db.execute(select(Alert).where(Alert.org_id == c.org_id, Alert.cluster_id == c.id)).scalars():
        a.details = {**(a.details or {}), "cluster_name": c.name, "cluster_id": str(c.id)}
        if a.state == "open":
            a.state, a.resolved_at = "resolved", at
            deliveries += queue_change(db, c.org_id, a.id, "resolved", a.severity, at)
    db.flush()
    return deliveries


def name_free(db: Session, org_id: uuid.UUID, name: str) -> None:
    """Raises Conflict name_taken when the organization has a cluster of that name."""
    if db.execute(select(Cluster.id).where(Cluster.org_id == org_id, Cluster.name == name)).first():
        raise Conflict("name_taken", "a cluster with this name already exists")


def change_cluster(db: Session, c: Cluster, changes: dict[str, Any], at: datetime) -> dict[str, Any]:
    """Apply a PATCH's fields to the cluster (in the caller's transaction): the name, price and
    target cannot be null, a new name must be free. Answers the changes applied."""
    for field in ("name", "price_per_gb_month", "target_hit_ratio", "miss_cost_source"):
        if field in changes and changes[field] is None:
            raise Invalid("invalid_request", f"{field} cannot be null")
    if "name" in changes and changes["name"] != c.name:
        name_free(db, c.org_id, changes["name"])
    for k, v in changes.items():
        setattr(c, k, v)
    c.updated_at = at
    return changes
