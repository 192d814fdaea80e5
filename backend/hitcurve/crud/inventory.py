"""Clusters and servers by id, always scoped by org_id: an unknown id and another organization's
id answer the same 404, so no caller can tell them apart."""

import uuid
from collections.abc import Sequence

from sqlalchemy import func, select
from sqlalchemy.orm import Session

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
