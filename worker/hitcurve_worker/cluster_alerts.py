"""A cluster's alerts from its sizing answer (snapshot_tasks.update_cluster calls this after
storing the cluster curve of a window): the alert rules (hitcurve.rules.alerts) evaluated on the
very answer the API, the dashboard, the e-mail and /metrics give for the cluster's target
(hitcurve.sizing: cluster_basis + memory_answer, computed fresh, not the API's cached one)."""

from __future__ import annotations

import uuid
from datetime import datetime

from sqlalchemy.orm import Session

from hitcurve.core.domain import NotEnoughDataError
from hitcurve.models import Cluster
from hitcurve.rules import alerts as rules
from hitcurve.rules import knowledge, shortage
from hitcurve.schemas.sizing import SizingAnswer, Subject
from hitcurve.sizing.answers import memory_answer
from hitcurve.sizing.cluster import cluster_basis
from hitcurve_worker import snapshot_store as store


def cluster_answer(db: Session, org_id: uuid.UUID, cluster: Cluster) -> SizingAnswer | None:
    """The cluster's answer for its target, as GET /sizing/clusters/{id}/memory gives it (None
    without a curve)."""
    try:
        basis, _ = cluster_basis(db, org_id, cluster.id, None)
    except NotEnoughDataError:
        return None
    return memory_answer(Subject(type="cluster", id=cluster.id), basis, float(cluster.target_hit_ratio))


def answer_memory(ans: SizingAnswer, allocated: float, margin: float) -> shortage.Memory | None:
    """Today's -m against the answer (hitcurve.rules.shortage.judge on the answer's own fields, so
    the alert follows its memory_state), `allocated` being the answer's current_memory_limit_bytes,
    else the members' -m summed (agents that send no memory object)."""
    return shortage.judge(
        ans.status,
        allocated,
        ans.nodes,
        ans.recommended_memory_limit_bytes,
        ans.band.memory_limit_bytes_min,
        ans.band.memory_limit_bytes_max,
        margin,
        ans.stable is not False,
    )


def alerts_for(
    ans: SizingAnswer | None,
    name: str,
    price_per_gb_month: float,
    th: rules.Thresholds,
    limits_bytes: float = 0.0,
) -> list[tuple[str, rules.Firing | None]]:
    """The cluster alerts of an answer (pure): one per cause (rules.sizing, rules.savings), in the
    -m to set (the recommended limit per node, times the nodes) against the nodes' limits summed
    (current_memory_limit_bytes; `limits_bytes`, the members' -m in the cluster curve's windows,
    when the agents send no memory object); none while the answer is unknown (hitcurve.rules.knowledge: a
    member's memcached filling, or the agents have not yet seen out to the target)."""
    below = short = saving = None
    allocated = float((ans.current_memory_limit_bytes if ans is not None else None) or limits_bytes)
    if ans is not None and knowledge.known(ans.status) and ans.target_hit_ratio is not None:
        subject, target = f"cluster {name}", float(ans.target_hit_ratio)
        nodes = ans.nodes or 1
        measured = ans.curve.measured_hit_ratio
        rec = ans.recommended_memory_limit_bytes
        memory = answer_memory(ans, allocated, th.shortfall_margin)
        reach = float((ans.memory_limit_bytes_at_least or 0) * nodes)
        below, short = rules.sizing(
            subject,
            measured,
            target,
            memory,
            float(ans.curve.max_hit_ratio),
            reach,
            th,
            unreachable=ans.status == "unreachable",
        )
        if measured is not None and measured >= target:
            needed = float(rec * nodes) if rec is not None else None
            saving = rules.savings(subject, needed, allocated, target, price_per_gb_month, th)
    return [(rules.BELOW_TARGET, below), (rules.MEMORY_SHORT, short), (rules.SAVINGS, saving)]


def cluster_alerts(
    db: Session, org_id: uuid.UUID, cluster: Cluster, at: datetime, limits_bytes: float = 0.0
) -> None:
    """Open, refresh or resolve the cluster's alerts from its answer, in one statement."""
    changes = alerts_for(
        cluster_answer(db, org_id, cluster),
        cluster.name,
        float(cluster.price_per_gb_month),
        rules.Thresholds.from_env(),
        limits_bytes,
    )
    store.upsert_alerts(db, org_id, changes, at, cluster_id=cluster.id)
