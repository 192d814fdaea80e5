"""Sizing answers for autoscalers and people (HTTP only; the answer is hitcurve.sizing): memory for
a target hit ratio, hit ratio at a memory size, nodes for a cluster target. Without a curve: 409
not_enough_data."""

import uuid
from collections.abc import Callable
from typing import Annotated, TypeVar

from fastapi import APIRouter, Query
from fastapi.concurrency import run_in_threadpool
from sqlalchemy.orm import Session

from hitcurve import sizing
from hitcurve.api.deps import FastReaderDep
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.errors import ApiError
from hitcurve.core.ttlcache import refresh_in_background
from hitcurve.crud.inventory import get_cluster
from hitcurve.schemas.api import Policy
from hitcurve.schemas.sizing import CurveKind, NotEnoughData, SizingAnswer, Subject

router = APIRouter(prefix="/sizing", tags=["sizing"])
T = TypeVar("T")

_ERRORS: dict[int | str, dict[str, object]] = {
    404: {"description": "no such server or cluster in your organization"},
    409: {"model": NotEnoughData, "description": "no curve yet (code not_enough_data)"},
    422: {"description": "invalid parameters"},
}

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
    """The fitted curve from the cache on the event loop, else computed in a worker thread. A
    cached curve past half its life is recomputed in the background meanwhile (refresh ahead):
    an autoscaler polling a subject never waits for the database after its first answer."""
    cache = sizing.basis_cache()
    hit = cache.get(key)
    if hit is not None and cache.due(key):

        def fresh() -> object:
            with get_sessionmaker()() as db:
                return sizing.attempt(lambda: compute(db))

        refresh_in_background(cache, key, fresh)
    if isinstance(hit, ApiError):
        raise hit
    if hit is not None:
        return hit

    def run() -> T:
        with get_sessionmaker()() as db:
            return sizing.cached(key, lambda: compute(db))

    return await run_in_threadpool(run)


async def _server(
    org_id: uuid.UUID, server_id: uuid.UUID, curve: CurveKind, policy: str | None
) -> sizing.Basis:
    return await _basis(
        sizing.server_key(org_id, server_id, curve, policy),
        lambda db: sizing.server_basis(db, org_id, server_id, curve, policy),
    )


async def _cluster(
    org_id: uuid.UUID, cluster_id: uuid.UUID, policy: str | None
) -> tuple[sizing.Basis, sizing.ClusterFacts]:
    return await _basis(
        sizing.cluster_key(org_id, cluster_id, policy),
        lambda db: sizing.cluster_basis(db, org_id, cluster_id, policy),
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
    return sizing.memory_answer(Subject(type="server", id=server_id), b, target_hit_ratio)


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
    return sizing.ratio_answer(Subject(type="server", id=server_id), b, float(memory_bytes))


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
    return sizing.memory_answer(Subject(type="cluster", id=cluster_id), b, target)


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
    return sizing.ratio_answer(Subject(type="cluster", id=cluster_id), b, float(memory_bytes))


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
    return sizing.nodes_answer(Subject(type="cluster", id=cluster_id), b, cc, size, target, policy)
