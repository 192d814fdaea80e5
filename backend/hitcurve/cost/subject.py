"""The cost answer of a server or a cluster from the database: the same cached basis the /sizing
routes answer from (sizing.cache), the subject's prices (cost.prices), then cost.answer. The
API's /sizing/.../cost, the weekly report and /metrics call subject_cost."""

import uuid

from sqlalchemy.orm import Session

from hitcurve.cost.answer import cost_answer
from hitcurve.cost.prices import cluster_prices
from hitcurve.crud.inventory import cluster_server_ids, get_cluster, get_server
from hitcurve.schemas.cost import CostAnswer, CostPrices
from hitcurve.schemas.sizing import Subject, SubjectKind
from hitcurve.sizing.basis import Basis
from hitcurve.sizing.cache import cached, cluster_key, server_key
from hitcurve.sizing.cluster import cluster_basis
from hitcurve.sizing.server import server_basis


def subject_prices(db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> CostPrices:
    """A cluster's prices over its servers; a server's at its cluster's prices over its own windows
    (a server in no cluster has no prices)."""
    if kind == "cluster":
        c = get_cluster(db, org_id, subject_id)
        return cluster_prices(db, org_id, c, cluster_server_ids(db, org_id, subject_id))
    s = get_server(db, org_id, subject_id)
    if s.cluster_id is None:
        return CostPrices(memory_per_gib_month=0.0, miss_cost_per_million=None, reads_per_second=None)
    return cluster_prices(db, org_id, get_cluster(db, org_id, s.cluster_id), [subject_id])


def subject_basis(db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> Basis:
    """The cached basis of GET /sizing/{servers|clusters}/{id}/memory (best curve, no policy);
    raises NotEnoughDataError without a curve."""
    if kind == "server":
        return cached(
            server_key(org_id, subject_id, "best", None),
            lambda: server_basis(db, org_id, subject_id, "best", None),
        )
    b, _ = cached(cluster_key(org_id, subject_id, None), lambda: cluster_basis(db, org_id, subject_id, None))
    return b


def subject_target(db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> float | None:
    """The cluster's target hit ratio (a server's: its cluster's; None in no cluster)."""
    if kind == "cluster":
        return float(get_cluster(db, org_id, subject_id).target_hit_ratio)
    s = get_server(db, org_id, subject_id)
    return None if s.cluster_id is None else float(get_cluster(db, org_id, s.cluster_id).target_hit_ratio)


def subject_cost(db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> CostAnswer:
    b = subject_basis(db, kind, org_id, subject_id)
    return cost_answer(
        Subject(type=kind, id=subject_id),
        b,
        subject_prices(db, kind, org_id, subject_id),
        target=subject_target(db, kind, org_id, subject_id),
    )
