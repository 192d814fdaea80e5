"""The policy comparison in money from the database: a finished simulation run's results, its
subject's prices and target (cost.subject), then cost.policies. GET /simulations/{id}/cost."""

import uuid
from collections import defaultdict

from sqlalchemy.orm import Session

from hitcurve.core.domain import Conflict, NotEnoughDataError
from hitcurve.cost import policies
from hitcurve.cost.answer import money
from hitcurve.cost.subject import subject_basis, subject_prices, subject_target
from hitcurve.crud.operations import simulation_run
from hitcurve.rules.percent import hit_rate as pct
from hitcurve.schemas.cost import PolicyCostAnswer, PolicyMoneyOut
from hitcurve.schemas.sizing import SubjectKind
from hitcurve.sizing.prose import hb


def _best(rows: list[policies.Money], field: str) -> tuple[str, float] | None:
    """The policy (not LRU) with the largest saving in `field`, and that saving."""
    priced = [(r.policy, getattr(r, field)) for r in rows if r.policy != policies.BASE]
    priced = [(p, v) for p, v in priced if v is not None]
    return max(priced, key=lambda pv: pv[1]) if priced else None


def _words(rows: list[policies.Money], target: float | None, at: float) -> str:
    parts = []
    mem = _best(rows, "memory_saving_per_month") if target is not None else None
    if mem is not None and target is not None:
        who, saving = mem
        parts.append(
            f"at {pct(target)} {who} needs the least memory, {money(saving)} a month less than LRU"
            if saving > 0
            else f"at {pct(target)} no policy needs less memory than LRU"
        )
    miss = _best(rows, "misses_saving_per_month")
    if miss is not None:
        who, saving = miss
        parts.append(
            f"at {hb(at)} {who}'s misses cost the least, {money(saving)} a month less than LRU's"
            if saving > 0
            else f"at {hb(at)} no policy's misses cost less than LRU's"
        )
    return "; ".join(parts) or "no saving can be priced: set the cluster's prices (memory, and a miss cost)"


def policy_cost(
    db: Session, org_id: uuid.UUID, run_id: uuid.UUID, at_bytes: float | None
) -> PolicyCostAnswer:
    run = simulation_run(db, org_id, run_id)
    if run.status != "done":
        raise Conflict("simulation_not_finished", f"the simulation is {run.status}: no results to price yet")
    kind: SubjectKind = "cluster" if run.cluster_id is not None else "server"
    sid = run.cluster_id if run.cluster_id is not None else run.server_id
    assert sid is not None
    prices = subject_prices(db, kind, org_id, sid)
    target = subject_target(db, kind, org_id, sid)
    if at_bytes is None:
        try:
            at_bytes = float(subject_basis(db, kind, org_id, sid).info.current_bytes or 0) or None
        except NotEnoughDataError:
            at_bytes = None
        at_bytes = at_bytes or float(max(run.sizes_bytes))
    by: dict[str, list[policies.Point]] = defaultdict(list)
    details: dict[str, object] = {}
    for r in run.results:
        by[r.policy].append(policies.Point(r.size_bytes, r.hit_ratio, r.recompute_cost_total_us))
        details = details or r.details
    rate, span = details.get("sample_rate"), details.get("span_seconds")
    sample = policies.Sample(
        float(rate) if isinstance(rate, int | float) else None,
        float(span) if isinstance(span, int | float) else None,
    )
    rows = policies.compare(
        by, sample, target if target is not None else 1.0, at_bytes, prices.memory_per_gib_month,
        prices.miss_cost_source or "entered", prices.miss_cost_per_million, prices.reads_per_second,
        prices.cpu_price_per_hour,
    )  # fmt: skip
    if target is None:  # no target: no memory-for-target column
        rows = [
            policies.Money(
                r.policy,
                None,
                None,
                None,
                None,
                r.hit_ratio_at,
                r.misses_per_month_at,
                r.misses_saving_per_month,
            )
            for r in rows
        ]
    return PolicyCostAnswer(
        run_id=str(run.id), target_hit_ratio=target, memory_bytes=at_bytes, prices=prices,
        rows=[PolicyMoneyOut(**r.__dict__) for r in rows], message=_words(rows, target, at_bytes),
    )  # fmt: skip
