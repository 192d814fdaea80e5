"""What the cost answer reads of a subject's recent windows (hitcurve.cost.prices): its reads per
second and the agents' measured miss-to-set time, each server over the span before its newest
window. Scoped by org_id."""

import uuid
from collections.abc import Sequence
from datetime import timedelta
from typing import Any, NamedTuple

from sqlalchemy import and_, func, select
from sqlalchemy.orm import Session

from hitcurve.models import Snapshot

# The span of windows before each server's newest that its rates are taken over.
RATE_SPAN = timedelta(hours=1)


class WindowRates(NamedTuple):
    reads_per_second: float | None  # summed over the servers; None without windows
    refills: int  # misses refilled by a SET the agents timed
    refill_seconds_mean: float | None  # their mean miss-to-set time (None: none timed)
    per_server: dict[uuid.UUID, float] | None = None  # reads per second of each server with windows


def _recent(org_id: uuid.UUID, server_ids: Sequence[uuid.UUID]) -> tuple[Any, Any]:
    last = (
        select(Snapshot.server_id, func.max(Snapshot.window_end).label("last"))
        .where(Snapshot.org_id == org_id, Snapshot.server_id.in_(server_ids))
        .group_by(Snapshot.server_id)
        .subquery()
    )
    return last, and_(
        Snapshot.org_id == org_id,
        Snapshot.server_id == last.c.server_id,
        Snapshot.window_end > last.c.last - RATE_SPAN,
    )


def window_rates(db: Session, org_id: uuid.UUID, server_ids: Sequence[uuid.UUID]) -> WindowRates:
    if not server_ids:
        return WindowRates(None, 0, None, {})
    last, recent = _recent(org_id, server_ids)
    seconds = func.sum(func.extract("epoch", Snapshot.window_end - Snapshot.window_start))
    rows = db.execute(
        select(Snapshot.server_id, func.sum(Snapshot.cmd_get), seconds)
        .join(last, recent)
        .group_by(Snapshot.server_id)
    ).all()
    by_server = {sid: float(g) / float(s) for sid, g, s in rows if s and float(s) > 0}
    per = list(by_server.values())
    # lookups the agent timed and their summed cost, over the windows' classes (stored per
    # snapshot at ingest: hitcurve.ingest.snapshot_rows)
    timed = db.execute(
        select(func.sum(Snapshot.cost_count), func.sum(Snapshot.cost_us_total))
        .join(last, recent)
        .where(Snapshot.cost_count > 0, Snapshot.cost_us_total.is_not(None))
    ).one()
    n, total_us = int(timed[0] or 0), float(timed[1] or 0.0)
    return WindowRates(sum(per) if per else None, n, total_us / n / 1e6 if n else None, by_server)
