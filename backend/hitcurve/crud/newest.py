"""Newest-N rows of a day-partitioned table without planning every day.

"A server's newest 60 accuracy records" names no time, so PostgreSQL plans (and locks) every day
partition of the table: 400 at the default retention, for a few rows of the last hours
(docs/storage.md). `newest` asks first with a lower bound on the partition column, FIRST_SPAN
before now: when the bound already holds `limit` rows they are exactly the newest `limit` (the
bound has no upper end, so nothing newer lies outside it). Only a subject with fewer rows in that
span (new, silent for a day, or sparse) is asked once more without the bound, as before.
"""

from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy.orm import Session

# One day: a server uploading once a minute has 1,440 windows in it, far above the 20-60 rows
# these queries want; the bound plans today's and yesterday's partitions.
FIRST_SPAN = timedelta(days=1)


def newest(
    db: Session,
    stmt: Any,
    column: Any,
    limit: int,
    since: datetime | None = None,
    joined: tuple[Any, ...] = (),
) -> list[Any]:
    """stmt's newest `limit` rows by `column` (a partition column), newest first. since: the
    caller's own lower bound (then asked once, with it, as given). joined: the partition columns
    of joined tables that equal `column`; they get the same bound (PostgreSQL carries an equality
    across a join, not a range, so each table's partitions are pruned only by its own bound)."""
    ordered = stmt.order_by(column.desc()).limit(limit)

    def bounded(t: datetime) -> Any:
        return ordered.where(*(c >= t for c in (column, *joined)))

    if since is not None:
        return list(db.execute(bounded(since)).all())
    rows = list(db.execute(bounded(datetime.now(UTC) - FIRST_SPAN)).all())
    if len(rows) >= limit:
        return rows
    return list(db.execute(ordered).all())
