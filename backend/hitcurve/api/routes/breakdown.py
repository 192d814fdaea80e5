"""GET a server's breakdown (issue 16): per-prefix curves and memory, hot keys, TTL-aware vs
TTL-oblivious memory, expired vs evicted. Thin: the work is in crud/breakdown.py."""

import uuid
from typing import Annotated

from fastapi import APIRouter, Query

from hitcurve.api.deps import DbDep, ReaderDep
from hitcurve.core.errors import ApiError
from hitcurve.crud.breakdown import latest_breakdown
from hitcurve.crud.inventory import get_server
from hitcurve.schemas.breakdown import BreakdownOut

router = APIRouter(tags=["breakdown"])


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
        raise ApiError(
            404,
            "no_breakdown",
            "no recent snapshot of this server carries a breakdown: its agent is older than the "
            "breakdown or runs with --breakdown 0",
        )
    return out
