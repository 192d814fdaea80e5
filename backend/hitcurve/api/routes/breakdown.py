"""GET a server's breakdown (issue 16): per-prefix curves and memory, hot keys, TTL-aware vs
TTL-oblivious memory, expired vs evicted; and the pool-split and TTL what-ifs of one prefix.
Thin: the work is in crud/breakdown.py."""

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from hitcurve.api.deps import DbDep, ReaderDep
from hitcurve.core.errors import ApiError
from hitcurve.crud.breakdown import latest_breakdown, prefix_split
from hitcurve.crud.inventory import get_server
from hitcurve.crud.ttlwhatif import TTLW_MIN_READS, prefix_ttl
from hitcurve.schemas.breakdown import BreakdownOut, SplitOut, TtlWhatIfOut

router = APIRouter(tags=["breakdown"])

NO_BREAKDOWN = (
    "no recent snapshot of this server carries a breakdown: its agent is older than the breakdown or runs "
    "with --breakdown 0"
)


@router.get(
    "/servers/{server_id}/breakdown",
    response_model=BreakdownOut,
    summary="Prefixes, hot keys, TTL-aware memory and expired vs evicted (latest window)",
)
def server_breakdown(
    server_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    target: Annotated[float, Query(gt=0, lt=1, description="hit ratio for the memory answers")] = 0.9,
) -> BreakdownOut:
    get_server(db, me.org_id, server_id)  # 404 for missing and foreign ids alike
    out = latest_breakdown(db, me.org_id, server_id, target)
    if out is None:
        raise ApiError(404, "no_breakdown", NO_BREAKDOWN)
    return out


@router.get(
    "/servers/{server_id}/breakdown/split",
    response_model=SplitOut,
    summary="Pool-split what-if: a prefix in its own pool and the rest in another, against one pool",
    description="Predicted hit ratio if `prefix` had its own memcached pool of `prefix_bytes` and every "
    "other key a pool of `total_bytes - prefix_bytes`, against today's single pool of `total_bytes`, for 100 "
    "splits "
    "of the total, with the best one. From the latest window with a breakdown. The prefix's own curve is "
    "measured on its own sampled requests (what it would get alone in an LRU pool); the rest's is the merged "
    "curve minus the prefix's at the pool's natural partition (hitcurve/poolsplit.py). `check` compares the "
    "prefix's curve at the memory it holds today with its measured hit ratio. 422 (located on the query "
    "parameter) for a prefix without a curve ('(other)', or not among the window's top prefixes), a prefix "
    "with fewer than 1000 reads in the window, or prefix_bytes not below total_bytes.",
)
def server_split(
    server_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    prefix: Annotated[str, Query(min_length=1, max_length=64, description="a prefix of the breakdown")],
    total_bytes: Annotated[
        float | None,
        Query(gt=0, le=2**50, description="memory of the two pools together; default today's limit (-m)"),
    ] = None,
    prefix_bytes: Annotated[
        float | None, Query(gt=0, le=2**50, description="the prefix's pool, for the `chosen` split")
    ] = None,
) -> SplitOut:
    get_server(db, me.org_id, server_id)
    out = prefix_split(db, me.org_id, server_id, prefix, total_bytes, prefix_bytes)
    if out is None:
        raise ApiError(404, "no_breakdown", NO_BREAKDOWN)
    return out


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
    "hitcurve/ttlwhatif.py). From the latest window with a breakdown. 422 (located on the query parameter) "
    "for a prefix not among the window's top prefixes (`unknown_prefix`), a prefix without TTL data "
    f"(`no_ttl_data`: an older agent, or no read of a key seen stored), fewer than {TTLW_MIN_READS} sampled "
    "reads (`too_few_reads`), or a TTL outside the replayed grid (`ttl_out_of_range`, 1 ... 65536 s today).",
)
def server_ttl_whatif(
    server_id: uuid.UUID,
    me: ReaderDep,
    db: DbDep,
    prefix: Annotated[str, Query(min_length=1, max_length=64, description="a prefix of the breakdown")],
    ttl_s: Annotated[
        int,
        Query(ge=1, le=2**32, description="the prefix's TTL to try, whole seconds (as memcached takes it)"),
    ],
) -> TtlWhatIfOut:
    get_server(db, me.org_id, server_id)
    out = prefix_ttl(db, me.org_id, server_id, prefix, ttl_s)
    if out is None:
        raise ApiError(404, "no_breakdown", NO_BREAKDOWN)
    return out
