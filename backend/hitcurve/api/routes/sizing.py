"""Sizing answers for autoscalers and people (HTTP only; the answer is hitcurve.sizing): memory for
a target hit ratio, hit ratio at a memory size, nodes for a cluster target, the cost-optimal size
(hitcurve.cost). Without a curve: 409 not_enough_data."""

import uuid
from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from hitcurve.api.deps import FastReaderDep
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.domain import NotEnoughDataError
from hitcurve.core.errors import ApiError
from hitcurve.core.ttlcache import refresh_in_background
from hitcurve.cost.subject import subject_cost
from hitcurve.crud.inventory import get_cluster
from hitcurve.schemas.api import Policy
from hitcurve.schemas.common import ByteSize, HitRatio
from hitcurve.schemas.cost import CostAnswer
from hitcurve.schemas.sizing import CurveKind, NotEnoughData, SizingAnswer, Subject, SubjectKind
from hitcurve.sizing import answers, cluster, server
from hitcurve.sizing.basis import Basis, ClusterFacts
from hitcurve.sizing.cache import attempt, basis_cache, cached, cluster_key, server_key

router = APIRouter(prefix="/sizing", tags=["sizing"])
T = TypeVar("T")

_ERRORS: dict[int | str, dict[str, object]] = {
    404: {"description": "no such server or cluster in your organization"},
    409: {"model": NotEnoughData, "description": "no curve yet (code not_enough_data)"},
    422: {"description": "invalid parameters"},
}

_RATIO = 'hit ratio in [0, 1], e.g. 0.92, or a percentage with its sign ("92%")'
_BYTES = 'bytes, or a number with a unit: "64MiB", "1.5GiB", "500MB"'
Target = Annotated[HitRatio, Query(ge=0, le=1, allow_inf_nan=False, description=_RATIO)]
OptionalTarget = Annotated[HitRatio | None, Query(ge=0, le=1, allow_inf_nan=False, description=_RATIO)]
Memory = Annotated[ByteSize, Query(ge=0, le=2**53, description=_BYTES)]
PolicyQ = Annotated[
    Policy | None,
    Query(description="answer from a finished policy simulation instead of the LRU-based estimate"),
]
CurveQ = Annotated[
    CurveKind, Query(description="best: calibrated when available, else the proportional estimate")
]


async def _basis(key: tuple[object, ...], compute: Callable[[Session], T]) -> T:
    """The fitted curve from the cache on the event loop, else computed in a worker thread. A
    cached curve past half its life is recomputed in the background meanwhile (refresh ahead):
    an autoscaler polling a subject never waits for the database after its first answer."""
    cache = basis_cache()
    hit = cache.get(key)
    if hit is not None and cache.due(key):

        def fresh() -> object:
            with get_sessionmaker()() as db:
                return attempt(lambda: compute(db))

        refresh_in_background(cache, key, fresh)
    if isinstance(hit, NotEnoughDataError):
        raise hit
    if hit is not None:
        return hit

    def run() -> T:
        with get_sessionmaker()() as db:
            return cached(key, lambda: compute(db))

    return await run_in_threadpool(run)


async def _server(org_id: uuid.UUID, server_id: uuid.UUID, curve: CurveKind, policy: str | None) -> Basis:
    return await _basis(
        server_key(org_id, server_id, curve, policy),
        lambda db: server.server_basis(db, org_id, server_id, curve, policy),
    )


async def _cluster(
    org_id: uuid.UUID, cluster_id: uuid.UUID, policy: str | None
) -> tuple[Basis, ClusterFacts]:
    return await _basis(
        cluster_key(org_id, cluster_id, policy),
        lambda db: cluster.cluster_basis(db, org_id, cluster_id, policy),
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
    return answers.memory_answer(Subject(type="server", id=server_id), b, target_hit_ratio)


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
    return answers.ratio_answer(Subject(type="server", id=server_id), b, float(memory_bytes))


@router.get(
    "/clusters/{cluster_id}/memory",
    response_model=SizingAnswer,
    responses=_ERRORS,
    summary="Total memory a cluster needs for a target hit ratio (default: the cluster's target)",
)
async def cluster_memory(
    cluster_id: uuid.UUID,
    me: FastReaderDep,
    target_hit_ratio: OptionalTarget = None,
    policy: PolicyQ = None,
) -> SizingAnswer:
    b, facts = await _cluster(me.org_id, cluster_id, policy)
    target = target_hit_ratio if target_hit_ratio is not None else facts.target_hit_ratio
    ans = answers.memory_answer(Subject(type="cluster", id=cluster_id), b, target)
    return ans.model_copy(update={"node_size_bytes": facts.node_size_bytes})


@router.get(
    "/clusters/{cluster_id}/hit-ratio",
    response_model=SizingAnswer,
    responses=_ERRORS,
    summary="Hit ratio of a cluster with a given total memory",
)
async def cluster_ratio(
    cluster_id: uuid.UUID, memory_bytes: Memory, me: FastReaderDep, policy: PolicyQ = None
) -> SizingAnswer:
    b, facts = await _cluster(me.org_id, cluster_id, policy)
    ans = answers.ratio_answer(Subject(type="cluster", id=cluster_id), b, float(memory_bytes))
    return ans.model_copy(update={"node_size_bytes": facts.node_size_bytes})


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
    node_size_bytes: Annotated[ByteSize | None, Query(gt=0, le=2**50, description=_BYTES)] = None,
    target_hit_ratio: OptionalTarget = None,
    policy: PolicyQ = None,
) -> SizingAnswer:
    try:
        b, cc = await _cluster(me.org_id, cluster_id, policy)
    except NotEnoughDataError:
        if node_size_bytes is not None:
            raise
        # say what is missing in the request before saying what is missing in the data
        if await run_in_threadpool(_node_size_default, me.org_id, cluster_id) is None:
            raise ApiError(422, "node_size_required", _NODE_SIZE_REQUIRED) from None
        raise
    size = node_size_bytes or cc.node_size_bytes
    if size is None:
        raise ApiError(422, "node_size_required", _NODE_SIZE_REQUIRED)
    target = target_hit_ratio if target_hit_ratio is not None else cc.target_hit_ratio
    return answers.nodes_answer(Subject(type="cluster", id=cluster_id), b, cc, size, target, policy)


def _cost(kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> CostAnswer:
    with get_sessionmaker()() as db:
        return subject_cost(db, kind, org_id, subject_id)


_COST = (
    "total cost per month = memory at the cluster's price + misses x reads x the cluster's miss cost; "
    "the least of it on the sizing curve, with its band and the saving against today"
)


@router.get(
    "/clusters/{cluster_id}/cost",
    response_model=CostAnswer,
    responses=_ERRORS,
    summary="The cost-optimal memory of a cluster",
    description=_COST,
)
async def cluster_cost(cluster_id: uuid.UUID, me: FastReaderDep) -> CostAnswer:
    return await run_in_threadpool(_cost, "cluster", me.org_id, cluster_id)


@router.get(
    "/servers/{server_id}/cost",
    response_model=CostAnswer,
    responses=_ERRORS,
    summary="The cost-optimal memory of a server (at its cluster's prices)",
    description=_COST,
)
async def server_cost(server_id: uuid.UUID, me: FastReaderDep) -> CostAnswer:
    return await run_in_threadpool(_cost, "server", me.org_id, server_id)
