"""Sizing answers for autoscalers and people: memory for a target hit ratio, hit ratio at a memory
size, nodes for a cluster target. Each answer names its basis (estimate, calibrated, simulated
policy), the curve's age and an uncertainty band; without a curve: 409 not_enough_data."""

import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Annotated, Literal, TypeVar

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from pydantic import BaseModel, Field
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hitcurve.api.deps import FastReaderDep
from hitcurve.api.routes.inventory import get_cluster, get_server
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.errors import ApiError
from hitcurve.core.ttlcache import TTLCache
from hitcurve.curves import Pchip
from hitcurve.models import (
    AccuracyRecord,
    ClusterCurve,
    Server,
    ServerCurve,
    SimulationResult,
    SimulationRun,
    Snapshot,
)
from hitcurve.schemas.api import Policy

router = APIRouter(prefix="/sizing", tags=["sizing"])
T = TypeVar("T")

# Band half-width when neither the worker's band nor enough accuracy records exist: ROUNDER's worst
# mean absolute error against exact LRU in seed 001, Table 5.1 (5.41 pp), rounded up.
DEFAULT_BAND_PP = 6.0
MIN_ACCURACY_SAMPLES = 3

CurveKind = Literal["best", "calibrated", "optimal", "proportional"]


class Band(BaseModel):
    low: float | None = Field(
        description="pessimistic end (less hit ratio, or more memory); null if unreachable"
    )
    high: float | None = Field(description="optimistic end")
    source: Literal["model", "accuracy_record", "default"] = Field(
        description="model: the worker's band; accuracy_record: ± the mean absolute error of recent "
        "predictions; "
        "default: ± 6 pp"
    )


class CurveInfo(BaseModel):
    computed_at: datetime
    window_end: datetime
    age_seconds: float = Field(description="seconds since the end of the window the curve was measured in")
    current_bytes: int | None
    measured_hit_ratio: float | None
    max_bytes: float = Field(description="largest memory the curve covers")
    max_hit_ratio: float = Field(description="hit ratio at max_bytes")
    stream_loss_ratio: float | None = Field(
        default=None,
        description="server curves: share of memcached's watch events the agent lost in the curve's "
        "window (lost events shorten the measured reuse distances)",
    )
    stream_loss_flagged: bool | None = Field(
        default=None, description="server curves: the loss was above the agent's threshold"
    )


class Subject(BaseModel):
    type: Literal["server", "cluster"]
    id: uuid.UUID


class SizingAnswer(BaseModel):
    subject: Subject
    question: Literal["memory_for_hit_ratio", "hit_ratio_at_memory", "nodes_for_hit_ratio"]
    status: Literal["ok", "unreachable", "beyond_curve"] = Field(
        description="unreachable: the target is above the curve's maximum; "
        "beyond_curve: the memory is past the "
        "curve's last point, hit_ratio is then a lower bound"
    )
    basis: Literal["estimate", "calibrated", "simulated"]
    policy: str | None = Field(description="the replacement policy of a simulated basis")
    target_hit_ratio: float | None = None
    memory_bytes: float | None = None
    hit_ratio: float | None = None
    nodes: int | None = None
    node_size_bytes: int | None = None
    band: Band
    curve: CurveInfo
    message: str

    model_config = {
        "json_schema_extra": {
            "examples": [
                {
                    "subject": {"type": "server", "id": "3f0c2a9e-3f55-4a0e-9a53-0d6a5e1c2b11"},
                    "question": "memory_for_hit_ratio",
                    "status": "ok",
                    "basis": "calibrated",
                    "policy": None,
                    "target_hit_ratio": 0.92,
                    "memory_bytes": 12240656793.6,
                    "hit_ratio": None,
                    "nodes": None,
                    "node_size_bytes": None,
                    "band": {"low": 13421772800.0, "high": 11274289152.0, "source": "model"},
                    "curve": {
                        "computed_at": "2026-11-22T12:01:05Z",
                        "window_end": "2026-11-22T12:01:00Z",
                        "age_seconds": 42.0,
                        "current_bytes": 8589934592,
                        "measured_hit_ratio": 0.8358,
                        "max_bytes": 17179869184.0,
                        "max_hit_ratio": 0.955,
                    },
                    "message": "a hit ratio of 92.0% needs 11.40 GiB (band 10.50–12.50 GiB), "
                    "calibrated curve, 42 s old",
                }
            ]
        }
    }


class NotEnoughData(BaseModel):
    detail: str
    code: Literal["not_enough_data"]


_ERRORS: dict[int | str, dict[str, object]] = {
    404: {"description": "no such server or cluster in your organization"},
    409: {"model": NotEnoughData, "description": "no curve yet (code not_enough_data)"},
    422: {"description": "invalid parameters"},
}


@dataclass
class Basis:
    main: Pchip
    low: Pchip
    high: Pchip
    band_source: str
    basis: str
    policy: str | None
    info: CurveInfo
    note: str | None = None  # how the curve was made, for the message (e.g. the policy correction)

    def fresh_info(self) -> CurveInfo:
        """The curve's facts with its age as of now (a Basis may come from the cache)."""
        return self.info.model_copy(update={"age_seconds": (_now() - self.info.window_end).total_seconds()})


@dataclass
class ClusterFacts:
    target_hit_ratio: float
    node_size_bytes: int | None
    curve_node_size: int | None
    node_counts: list[int] | None
    node_hit_ratios: list[float] | None


_cache: TTLCache | None = None


def basis_cache() -> TTLCache:
    """Fitted curves per (org, subject, options) for Settings.hot_cache_ttl_s: a hot sizing request
    then needs no database query. Only answers and not-enough-data errors are kept, never 404s."""
    global _cache
    ttl = get_settings().hot_cache_ttl_s
    if _cache is None or _cache.ttl_s != ttl:
        _cache = TTLCache(ttl)
    return _cache


def cached(key: tuple[object, ...], compute: Callable[[], T]) -> T:
    def attempt() -> object:
        try:
            return compute()
        except ApiError as exc:
            if exc.code == "not_enough_data":
                return exc  # remembered like an answer
            raise

    value = basis_cache().get_or_compute(key, attempt)
    if isinstance(value, ApiError):
        raise value
    return value


def _now() -> datetime:
    return datetime.now(UTC)


def _clean(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    """Keep points with finite, strictly increasing sizes > 0; clip ratios to [0, 1], running max."""
    ox: list[float] = []
    oy: list[float] = []
    top = 0.0
    for x, y in zip(xs, ys, strict=False):
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)) or x <= 0:
            continue
        if ox and x <= ox[-1]:
            continue
        top = max(top, min(1.0, max(0.0, y)))
        ox.append(float(x))
        oy.append(top)
    return ox, oy


def _fit(xs: list[float] | None, ys: list[float] | None) -> Pchip | None:
    if not xs or not ys or len(xs) != len(ys):
        return None
    cx, cy = _clean(xs, ys)
    return Pchip.fit(cx, cy) if cx else None


def _shifted(xs: list[float], ys: list[float], pp: float) -> tuple[Pchip, Pchip]:
    cx, cy = _clean(xs, ys)
    return (
        Pchip.fit(cx, [max(0.0, y - pp / 100) for y in cy]),
        Pchip.fit(cx, [min(1.0, y + pp / 100) for y in cy]),
    )


def _accuracy_pp(db: Session, org_id: uuid.UUID, server_ids: list[uuid.UUID]) -> float | None:
    if not server_ids:
        return None
    since = _now() - timedelta(days=7)
    n, mae = db.execute(
        select(func.count(), func.avg(func.abs(AccuracyRecord.error_pp))).where(
            AccuracyRecord.org_id == org_id,
            AccuracyRecord.server_id.in_(server_ids),
            AccuracyRecord.window_end > since,
        )
    ).one()
    return float(mae) if n >= MIN_ACCURACY_SAMPLES and mae is not None else None


def _band(
    db: Session,
    org_id: uuid.UUID,
    server_ids: list[uuid.UUID],
    xs: list[float],
    ys: list[float],
    low: list[float] | None,
    high: list[float] | None,
) -> tuple[Pchip, Pchip, str]:
    lo, hi = _fit(xs, low), _fit(xs, high)
    if lo is not None and hi is not None:
        return lo, hi, "model"
    pp = _accuracy_pp(db, org_id, server_ids)
    lo, hi = _shifted(xs, ys, pp if pp is not None else DEFAULT_BAND_PP)
    return lo, hi, "accuracy_record" if pp is not None else "default"


def _not_enough(msg: str) -> ApiError:
    return ApiError(409, "not_enough_data", msg)


def _simulated(
    db: Session,
    org_id: uuid.UUID,
    policy: str,
    server_id: uuid.UUID | None,
    cluster_id: uuid.UUID | None,
    server_ids: list[uuid.UUID],
    current: int | None,
    measured: float | None,
) -> Basis:
    q = select(SimulationRun).where(
        SimulationRun.org_id == org_id,
        SimulationRun.status == "done",
        SimulationRun.policies.contains([policy]),
    )
    q = (
        q.where(SimulationRun.server_id == server_id)
        if server_id
        else q.where(SimulationRun.cluster_id == cluster_id)
    )
    run = db.execute(q.order_by(SimulationRun.finished_at.desc().nulls_last()).limit(1)).scalar_one_or_none()
    if run is None:
        raise _not_enough(
            f"no finished simulation of policy {policy} for this subject yet: POST /api/v1/simulations"
        )
    rows = db.execute(
        select(SimulationResult.size_bytes, SimulationResult.hit_ratio)
        .where(
            SimulationResult.run_id == run.id,
            SimulationResult.org_id == org_id,
            SimulationResult.policy == policy,
        )
        .order_by(SimulationResult.size_bytes)
    ).all()
    main = _fit([float(r[0]) for r in rows], [r[1] for r in rows])
    if main is None:
        raise _not_enough(f"the latest simulation of {policy} has no results")
    xs, ys = list(main.x), list(main.y)
    lo, hi, src = _band(db, org_id, server_ids, xs, ys, None, None)
    finished = run.finished_at or run.created_at
    return Basis(
        main,
        lo,
        hi,
        src,
        "simulated",
        policy,
        CurveInfo(
            computed_at=finished,
            window_end=run.window_end,
            age_seconds=(_now() - run.window_end).total_seconds(),
            current_bytes=current,
            measured_hit_ratio=measured,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
    )


def _pick(
    kind: CurveKind, calibrated: list[float] | None, optimal: list[float] | None, proportional: list[float]
) -> tuple[list[float], str]:
    if kind in ("best", "calibrated") and calibrated:
        return calibrated, "calibrated"
    if kind == "calibrated":
        raise _not_enough("no calibrated curve yet (it needs a measured hit ratio); use curve=proportional")
    if kind == "optimal":
        if not optimal:
            raise _not_enough("no optimal-allocation curve for this subject")
        return optimal, "estimate"
    return proportional, "estimate"


def server_basis(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, kind: CurveKind, policy: str | None
) -> Basis:
    c = db.execute(
        select(ServerCurve)
        .where(ServerCurve.org_id == org_id, ServerCurve.server_id == server_id)
        .order_by(ServerCurve.window_end.desc())
        .limit(1)
    ).scalar_one_or_none()
    if c is None:
        get_server(db, org_id, server_id)  # 404 for unknown and foreign ids
    if policy is not None:
        return _simulated(
            db,
            org_id,
            policy,
            server_id,
            None,
            [server_id],
            c.current_bytes if c else None,
            c.measured_hit_ratio if c else None,
        )
    if c is None:
        raise _not_enough(
            "no curve for this server yet: its agent must upload snapshots and the worker process them"
        )
    ys, basis = _pick(kind, c.hit_ratio_calibrated, c.hit_ratio_optimal, c.hit_ratio_proportional)
    main = _fit(c.sizes_bytes, ys)
    if main is None:
        raise _not_enough("the latest curve of this server has no usable points")
    lo, hi, src = _band(db, org_id, [server_id], c.sizes_bytes, ys, c.band_low, c.band_high)
    b = _stored_curve_basis(c, main, lo, hi, src, basis)
    loss = db.execute(
        select(Snapshot.loss_ratio, Snapshot.flagged).where(Snapshot.id == c.snapshot_id)
    ).one_or_none()
    if loss is not None:
        b.info = b.info.model_copy(
            update={"stream_loss_ratio": float(loss.loss_ratio), "stream_loss_flagged": bool(loss.flagged)}
        )
        if loss.flagged:
            warn = (
                f"the agent lost {loss.loss_ratio:.1%} of memcached's events in this window: "
                "hit ratios above today's memory may be under-estimated"
            )
            b.note = f"{b.note}; {warn}" if b.note else warn
    return b


def cluster_basis(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, policy: str | None
) -> tuple[Basis, ClusterFacts]:
    cluster = get_cluster(db, org_id, cluster_id)
    server_ids = list(
        db.execute(
            select(Server.id).where(Server.org_id == org_id, Server.cluster_id == cluster_id)
        ).scalars()
    )
    c = db.execute(
        select(ClusterCurve)
        .where(ClusterCurve.org_id == org_id, ClusterCurve.cluster_id == cluster_id)
        .order_by(ClusterCurve.computed_at.desc())
        .limit(1)
    ).scalar_one_or_none()
    facts = ClusterFacts(
        target_hit_ratio=cluster.target_hit_ratio,
        node_size_bytes=cluster.node_size_bytes,
        curve_node_size=c.node_size_bytes if c else None,
        node_counts=list(c.node_counts) if c and c.node_counts else None,
        node_hit_ratios=list(c.node_hit_ratios) if c and c.node_hit_ratios else None,
    )
    if policy is not None:
        return _simulated(
            db,
            org_id,
            policy,
            None,
            cluster_id,
            server_ids,
            c.current_bytes if c else None,
            c.measured_hit_ratio if c else None,
        ), facts
    if c is None:
        raise _not_enough(
            "no curve for this cluster yet: assign servers that upload snapshots and wait for the worker"
        )
    main = _fit(c.sizes_bytes, c.hit_ratios)
    if main is None:
        raise _not_enough("the latest curve of this cluster has no usable points")
    lo, hi, src = _band(db, org_id, server_ids, c.sizes_bytes, c.hit_ratios, c.band_low, c.band_high)
    basis = "calibrated" if c.basis == "calibrated" else "estimate"
    return _stored_curve_basis(c, main, lo, hi, src, basis), facts


def _stored_curve_basis(
    c: ServerCurve | ClusterCurve, main: Pchip, lo: Pchip, hi: Pchip, src: str, basis: str
) -> Basis:
    """The answer basis for a curve the worker stored (server or cluster): fit, band, age."""
    note = None
    if isinstance(c, ServerCurve) and basis == "calibrated":
        # The worker adds memcached's segmented-LRU gain (simulated on the sampled trace) below
        # today's memory before calibrating, when it had enough trace (calibration.policy_correction).
        corr = (c.calibration or {}).get("policy_correction") or {}
        if corr.get("applied"):
            reads = int(corr.get("sampled_gets") or 0)
            note = f"corrected for memcached's segmented LRU from {reads:,} sampled reads"
    return Basis(
        main,
        lo,
        hi,
        src,
        basis,
        None,
        CurveInfo(
            computed_at=c.computed_at,
            window_end=c.window_end,
            age_seconds=(_now() - c.window_end).total_seconds(),
            current_bytes=c.current_bytes,
            measured_hit_ratio=c.measured_hit_ratio,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
        note,
    )


def _gib(b: float | None) -> str:
    """Bytes for people: GiB from 1 GiB up, MiB below."""
    if b is None:
        return "?"
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.1f} MiB"


def _describe(b: Basis) -> str:
    what = f"simulated {b.policy}" if b.basis == "simulated" else b.basis
    note = f" ({b.note})" if b.note else ""
    return f"{what} curve{note}, {(_now() - b.info.window_end).total_seconds():.0f} s old"


def memory_answer(subject: Subject, b: Basis, target: float) -> SizingAnswer:
    mem = b.main.inverse(target)
    band = Band(low=b.low.inverse(target), high=b.high.inverse(target), source=b.band_source)
    if mem is None:
        msg = (
            f"a hit ratio of {target:.1%} is above what the curve reaches ({b.main.y_max:.1%} at "
            f"{_gib(b.main.x_max)}); unreachable on this basis"
        )
        status = "unreachable"
    else:
        msg = (
            f"a hit ratio of {target:.1%} needs {_gib(mem)} "
            f"(band {_gib(band.high)}–{_gib(band.low)}), {_describe(b)}"
        )
        status = "ok"
    return SizingAnswer(
        subject=subject,
        question="memory_for_hit_ratio",
        status=status,
        basis=b.basis,
        policy=b.policy,
        target_hit_ratio=target,
        memory_bytes=mem,
        band=band,
        curve=b.fresh_info(),
        message=msg,
    )


def ratio_answer(subject: Subject, b: Basis, memory: float) -> SizingAnswer:
    hr = b.main(memory)
    band = Band(low=b.low(memory), high=b.high(memory), source=b.band_source)
    if memory > b.main.x_max:
        status = "beyond_curve"
        msg = (
            f"{_gib(memory)} is past the curve's last point ({_gib(b.main.x_max)}); "
            "the hit ratio is at least "
            f"{hr:.1%}, {_describe(b)}"
        )
    else:
        status = "ok"
        msg = (
            f"{_gib(memory)} gives a hit ratio of {hr:.1%} "
            f"(band {band.low:.1%}–{band.high:.1%}), {_describe(b)}"
        )
    return SizingAnswer(
        subject=subject,
        question="hit_ratio_at_memory",
        status=status,
        basis=b.basis,
        policy=b.policy,
        memory_bytes=memory,
        hit_ratio=hr,
        band=band,
        curve=b.fresh_info(),
        message=msg,
    )


Target = Annotated[
    float, Query(ge=0, le=1, allow_inf_nan=False, description="hit ratio in [0, 1], e.g. 0.92")
]
Memory = Annotated[int, Query(ge=0, le=2**53, description="bytes")]
PolicyQ = Annotated[
    Policy | None,
    Query(description="answer from a finished policy simulation instead of the LRU-based estimate"),
]
CurveQ = Annotated[
    CurveKind, Query(description="best: calibrated when available, else the proportional estimate")
]


async def _basis(key: tuple[object, ...], compute: Callable[[Session], T]) -> T:
    """The fitted curve from the cache on the event loop, else computed in a worker thread."""
    hit = basis_cache().get(key)
    if isinstance(hit, ApiError):
        raise hit
    if hit is not None:
        return hit

    def run() -> T:
        with get_sessionmaker()() as db:
            return cached(key, lambda: compute(db))

    return await run_in_threadpool(run)


async def _server(org_id: uuid.UUID, server_id: uuid.UUID, curve: CurveKind, policy: str | None) -> Basis:
    return await _basis(
        ("server", org_id, server_id, curve, policy),
        lambda db: server_basis(db, org_id, server_id, curve, policy),
    )


async def _cluster(
    org_id: uuid.UUID, cluster_id: uuid.UUID, policy: str | None
) -> tuple[Basis, ClusterFacts]:
    return await _basis(
        ("cluster", org_id, cluster_id, policy), lambda db: cluster_basis(db, org_id, cluster_id, policy)
    )


@router.get(
    "/servers/{server_id}/memory",
    response_model=SizingAnswer,
    responses=_ERRORS,
    summary="Memory a server needs for a target hit ratio",
)
async def server_memory(
    server_id: uuid.UUID,
    target_hit_ratio: Target,
    me: FastReaderDep,
    policy: PolicyQ = None,
    curve: CurveQ = "best",
) -> SizingAnswer:
    b = await _server(me.org_id, server_id, curve, policy)
    return memory_answer(Subject(type="server", id=server_id), b, target_hit_ratio)


@router.get(
    "/servers/{server_id}/hit-ratio",
    response_model=SizingAnswer,
    responses=_ERRORS,
    summary="Hit ratio a server would have with a given memory",
)
async def server_ratio(
    server_id: uuid.UUID,
    memory_bytes: Memory,
    me: FastReaderDep,
    policy: PolicyQ = None,
    curve: CurveQ = "best",
) -> SizingAnswer:
    b = await _server(me.org_id, server_id, curve, policy)
    return ratio_answer(Subject(type="server", id=server_id), b, float(memory_bytes))


@router.get(
    "/clusters/{cluster_id}/memory",
    response_model=SizingAnswer,
    responses=_ERRORS,
    summary="Total memory a cluster needs for a target hit ratio (default: the cluster's target)",
)
async def cluster_memory(
    cluster_id: uuid.UUID,
    me: FastReaderDep,
    target_hit_ratio: Annotated[float | None, Query(ge=0, le=1, allow_inf_nan=False)] = None,
    policy: PolicyQ = None,
) -> SizingAnswer:
    b, facts = await _cluster(me.org_id, cluster_id, policy)
    target = target_hit_ratio if target_hit_ratio is not None else facts.target_hit_ratio
    return memory_answer(Subject(type="cluster", id=cluster_id), b, target)


@router.get(
    "/clusters/{cluster_id}/hit-ratio",
    response_model=SizingAnswer,
    responses=_ERRORS,
    summary="Hit ratio of a cluster with a given total memory",
)
async def cluster_ratio(
    cluster_id: uuid.UUID, memory_bytes: Memory, me: FastReaderDep, policy: PolicyQ = None
) -> SizingAnswer:
    b, _ = await _cluster(me.org_id, cluster_id, policy)
    return ratio_answer(Subject(type="cluster", id=cluster_id), b, float(memory_bytes))


def _node_size_default(org_id: uuid.UUID, cluster_id: uuid.UUID) -> int | None:
    with get_sessionmaker()() as db:
        return get_cluster(db, org_id, cluster_id).node_size_bytes


_NODE_SIZE_REQUIRED = "give node_size_bytes (the cluster has no default node size)"


@router.get(
    "/clusters/{cluster_id}/nodes",
    response_model=SizingAnswer,
    responses=_ERRORS,
    summary="Nodes of a given size a cluster needs for a target hit ratio (default: the cluster's target)",
)
async def cluster_nodes(
    cluster_id: uuid.UUID,
    me: FastReaderDep,
    node_size_bytes: Annotated[int | None, Query(gt=0, le=2**50)] = None,
    target_hit_ratio: Annotated[float | None, Query(ge=0, le=1, allow_inf_nan=False)] = None,
    policy: PolicyQ = None,
) -> SizingAnswer:
    try:
        b, cc = await _cluster(me.org_id, cluster_id, policy)
    except ApiError as exc:
        if exc.code != "not_enough_data" or node_size_bytes is not None:
            raise
        # say what is missing in the request before saying what is missing in the data
        if await run_in_threadpool(_node_size_default, me.org_id, cluster_id) is None:
            raise ApiError(422, "node_size_required", _NODE_SIZE_REQUIRED) from None
        raise
    size = node_size_bytes or cc.node_size_bytes
    if size is None:
        raise ApiError(422, "node_size_required", _NODE_SIZE_REQUIRED)
    target = target_hit_ratio if target_hit_ratio is not None else cc.target_hit_ratio
    ans = memory_answer(Subject(type="cluster", id=cluster_id), b, target)
    nodes: int | None = None
    if (
        policy is None
        and cc.curve_node_size == size
        and cc.node_counts
        and cc.node_hit_ratios
        and len(cc.node_counts) == len(cc.node_hit_ratios)
    ):
        # The worker's node curve accounts for how keys spread over nodes; prefer it when it fits.
        nodes = next(
            (n for n, h in sorted(zip(cc.node_counts, cc.node_hit_ratios, strict=True)) if h >= target), None
        )
    if nodes is None and ans.memory_bytes is not None:
        nodes = max(1, math.ceil(ans.memory_bytes / size))

    def count(mem: float | None) -> float | None:
        return None if mem is None else float(max(1, math.ceil(mem / size)))

    band = Band(low=count(ans.band.low), high=count(ans.band.high), source=ans.band.source)
    if nodes is None:
        msg = ans.message
        status = "unreachable"
    else:
        msg = f"a hit ratio of {target:.1%} needs {nodes} node(s) of {_gib(size)}, {_describe(b)}"
        status = "ok"
    return ans.model_copy(
        update=dict(
            question="nodes_for_hit_ratio",
            nodes=nodes,
            node_size_bytes=size,
            status=status,
            band=band,
            message=msg,
        )
    )
