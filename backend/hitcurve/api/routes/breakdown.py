"""GET a server's breakdown: per-prefix curves and memory, hot keys, TTL-aware vs
TTL-oblivious memory, expired vs evicted; and the pool-split and TTL what-ifs of one prefix.
Thin: the answers are hitcurve.breakdown's.

Each answer is worked out in a thread of its own pool (at most BREAKDOWN_THREADS per API
process) with its own database session, within BREAKDOWN_BUDGET_S: the event loop, /health and
the sizing answers never wait for it, and a request past its budget is answered 503 with
Retry-After (the thread finishes what it started, bounded by the stored row's size)."""

import uuid
from collections.abc import Callable
from typing import Annotated, TypeVar

import anyio
from fastapi import APIRouter, Query

from hitcurve.api.deps import ReaderDep
from hitcurve.breakdown.split_answer import prefix_split
from hitcurve.breakdown.summary import latest_breakdown
from hitcurve.breakdown.ttl_answer import TTLW_MIN_READS, prefix_ttl
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.errors import ApiError
from hitcurve.crud.inventory import get_server
from hitcurve.schemas.breakdown import BreakdownOut, SplitOut, TtlWhatIfOut

router = APIRouter(tags=["breakdown"])

BREAKDOWN_BUDGET_S = 10.0
BREAKDOWN_THREADS = 2
_threads = anyio.CapacityLimiter(BREAKDOWN_THREADS)
T = TypeVar("T")


async def _budgeted(org_id: uuid.UUID, server_id: uuid.UUID, answer: Callable[..., T | None]) -> T:
    """answer(db, org_id, server_id) in the breakdown threads within the budget; 404 for a
    missing or foreign server and for a server without a breakdown."""

    def work() -> T | None:
        with get_sessionmaker()() as db:
            get_server(db, org_id, server_id)  # 404 for missing and foreign ids alike
            return answer(db, org_id, server_id)

    try:
        with anyio.fail_after(BREAKDOWN_BUDGET_S):
            out = await anyio.to_thread.run_sync(work, limiter=_threads, abandon_on_cancel=True)
    except TimeoutError:
        raise ApiError(
            503,
            "breakdown_busy",
            f"the breakdown answers are busy: this one was not done within {BREAKDOWN_BUDGET_S:.0f} s; retry",
            headers={"Retry-After": "5"},
        ) from None
    if out is None:
        raise ApiError(404, "no_breakdown", NO_BREAKDOWN)
    return out


NO_BREAKDOWN = (
    "no recent snapshot of this server carries a breakdown: its agent is older than the breakdown or runs "
    "with --breakdown 0"
)


@router.get(
    "/servers/{server_id}/breakdown",
    response_model=BreakdownOut,
    summary="Prefixes, hot keys, TTL-aware memory and expired vs evicted (latest window)",
)
async def server_breakdown(
    server_id: uuid.UUID,
    me: ReaderDep,
    target: Annotated[float, Query(gt=0, lt=1, description="hit ratio for the memory answers")] = 0.9,
) -> BreakdownOut:
    return await _budgeted(me.org_id, server_id, lambda db, o, s: latest_breakdown(db, o, s, target))


@router.get(
    "/servers/{server_id}/breakdown/split",
    response_model=SplitOut,
    summary="Pool-split what-if: a prefix in its own pool and the rest in another, against one pool",
    description="Predicted hit ratio if `prefix` had its own memcached pool of `prefix_bytes` and every "
    "other key a pool of `total_bytes - prefix_bytes`, against today's single pool of `total_bytes`, for 100 "
    "splits "
    "of the total, with the best one. From the latest window with a breakdown. The prefix's own curve is "
    "measured on its own sampled requests (what it would get alone in an LRU pool); the rest's is the merged "
    "curve minus the prefix's at the pool's natural partition (hitcurve/breakdown/poolsplit.py). `check` "
    "compares the prefix's curve at the memory it holds today with its measured hit ratio. 422 (located on "
    "the query parameter) for a prefix without a curve ('(other)', or not among the window's top "
    "prefixes), a prefix with fewer than 1000 reads in the window, or prefix_bytes not below total_bytes.",
)
async def server_split(
    server_id: uuid.UUID,
    me: ReaderDep,
    prefix: Annotated[str, Query(min_length=1, max_length=64, description="a prefix of the breakdown")],
    total_bytes: Annotated[
        float | None,
        Query(gt=0, le=2**50, description="memory of the two pools together; default today's limit (-m)"),
    ] = None,
    prefix_bytes: Annotated[
        float | None, Query(gt=0, le=2**50, description="the prefix's pool, for the `chosen` split")
    ] = None,
) -> SplitOut:
    return await _budgeted(
        me.org_id, server_id, lambda db, o, s: prefix_split(db, o, s, prefix, total_bytes, prefix_bytes)
    )


@router.get(
    "/servers/{server_id}/breakdown/ttl",
    response_model=TtlWhatIfOut,
    summary="TTL what-if: with a prefix's TTL at ttl_s, its hit ratio, the server's, the memory for today's",
    description="If every item of `prefix` were stored with a TTL of `ttl_s` seconds: the hit ratio that TTL "
    "allows with no memory limit and the bytes of the prefix's live items (the agent replays the prefix's "
    "sampled reads and stores at 32 TTLs, as cache-aside clients: a miss is refilled); the prefix's and the "
    "server's hit ratio with the prefix in the memory it holds today; and the memory the prefix needs at "
    "`ttl_s` for its hit ratio of today (its TTL-aware curve stretched in size by the live-bytes ratio and "
    "scaled in hit ratio by the allowed-hit-ratio ratio, calibrated on its measured hit ratio: "
    "hitcurve/breakdown/ttlwhatif.py). From the latest window with a breakdown. 422 (located on the query "
    "parameter) for a prefix not among the window's top prefixes (`unknown_prefix`), a prefix without TTL "
    f"data (`no_ttl_data`: an older agent, or no read of a key seen stored), fewer than {TTLW_MIN_READS} "
    "sampled reads (`too_few_reads`), or a TTL outside the replayed grid (`ttl_out_of_range`, 1 ... 65536 s "
    "today).",
)
async def server_ttl_whatif(
    server_id: uuid.UUID,
    me: ReaderDep,
    prefix: Annotated[str, Query(min_length=1, max_length=64, description="a prefix of the breakdown")],
    ttl_s: Annotated[
        int,
        Query(ge=1, le=2**32, description="the prefix's TTL to try, whole seconds (as memcached takes it)"),
    ],
) -> TtlWhatIfOut:
    return await _budgeted(me.org_id, server_id, lambda db, o, s: prefix_ttl(db, o, s, prefix, ttl_s))
