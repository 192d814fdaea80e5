"""The cost answer of a server or a cluster from the database: the same cached basis the /sizing
routes answer from (sizing.cache), the subject's prices (cost.prices), then cost.answer. The
API's /sizing/.../cost, the weekly report and /metrics call subject_cost."""

import uuid

from sqlalchemy.orm import Session

from hitcurve.cost.answer import cost_answer
from hitcurve.cost.prefixes import Terms, server_terms
from hitcurve.cost.prices import cluster_prices
from hitcurve.crud.costs import window_rates
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


def subject_terms(
    db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID, b: Basis, prices: CostPrices
) -> Terms | None:
    """The cluster's priced prefixes over the subject's servers (cost.prefixes); None when the
    cluster prices none, or when there is no miss cost or read rate to price the rest at."""
    if prices.miss_cost_per_million is None or prices.reads_per_second is None:
        return None
    if kind == "cluster":
        c, ids = get_cluster(db, org_id, subject_id), cluster_server_ids(db, org_id, subject_id)
    else:
        s = get_server(db, org_id, subject_id)
        if s.cluster_id is None:
            return None
        c, ids = get_cluster(db, org_id, s.cluster_id), [subject_id]
    if not c.prefix_miss_costs:
        return None
    reads = window_rates(db, org_id, ids).per_server or {}
    subject_bytes = float(b.info.current_bytes or 0) if kind == "cluster" else None
    return server_terms(db, org_id, reads, c.prefix_miss_costs, subject_bytes or None)


def subject_cost(db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> CostAnswer:
    b = subject_basis(db, kind, org_id, subject_id)
    prices = subject_prices(db, kind, org_id, subject_id)
    return cost_answer(
        Subject(type=kind, id=subject_id),
        b,
        prices,
        target=subject_target(db, kind, org_id, subject_id),
        terms=subject_terms(db, kind, org_id, subject_id, b, prices),
    )
