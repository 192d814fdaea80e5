"""History and accuracy of a server or a cluster over time, downsampled in PostgreSQL into at
most max_points buckets; and the recent accuracy figures the sizing band and server list use.

A subject is a kind ("server" or "cluster") and an id; which servers a kind covers is said here
only (_SUBJECT_SQL), never by callers."""

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import func, select, text
from sqlalchemy.orm import Session

from hitcurve.core.domain import Invalid
from hitcurve.crud.newest import newest
from hitcurve.models import AccuracyRecord, Snapshot
from hitcurve.schemas.api import AccuracyOut, AccuracyPoint, HistoryOut, HistoryPoint
from hitcurve.schemas.sizing import SubjectKind

MAX_SPAN = timedelta(days=400)

# The servers a subject covers (v = servers).
_SUBJECT_SQL: dict[str, str] = {"server": "v.id = :sid", "cluster": "v.cluster_id = :sid"}


def _now() -> datetime:
    return datetime.now(UTC)


def time_range(start: datetime | None, end: datetime | None) -> tuple[datetime, datetime]:
    end = end or _now()
    try:
        start = start or end - timedelta(days=1)
    except OverflowError:
        raise Invalid("invalid_request", "end is too early to have a default start") from None
    if start.tzinfo is None or end.tzinfo is None:
        raise Invalid("invalid_request", "start and end need a time zone (e.g. 2026-11-22T12:00:00Z)")
    if end <= start:
        raise Invalid("invalid_request", "end must be after start")
    if end - start > MAX_SPAN:
        raise Invalid("invalid_request", "at most 400 days per request")
    return start, end


# A window taken while memcached was still filling (the agent's memory object said not full): its
# hit rate rises with the fill (cold misses), and its accuracy record grades a curve that is still
# growing. NULL: an older agent that does not say, counted as settled.
_SETTLED_SQL = "s.memory_full IS NOT FALSE"

_HISTORY_SQL = """
SELECT least(floor(extract(epoch FROM (s.window_end - :start)) / :bw)::bigint, :last) AS b, count(*) AS n,
       sum(s.get_hits)::float8 / nullif(sum(s.get_hits + s.get_misses), 0) AS measured,
       avg(c.predicted_hit_ratio) AS predicted, avg(s.loss_ratio) AS loss, avg(s.bytes_used) AS bytes_used,
       sum(s.flagged::int) AS flagged, max(s.window_end) AS at
FROM snapshots s
JOIN servers v ON v.id = s.server_id AND v.org_id = s.org_id
LEFT JOIN server_curves c ON c.snapshot_id = s.id AND c.org_id = s.org_id
     -- implied by the snapshot, and what lets PostgreSQL prune partitions and use (server_id, window_end)
     AND c.server_id = s.server_id AND c.window_end = s.window_end
     AND c.window_end > :start AND c.window_end <= :end
WHERE s.org_id = :org AND {subject} AND s.window_end > :start AND s.window_end <= :end AND {settled}
GROUP BY b ORDER BY b
"""

_ACCURACY_SQL = """
SELECT least(floor(extract(epoch FROM (a.window_end - :start)) / :bw)::bigint, :last) AS b, count(*) AS n,
       avg(a.predicted_hit_ratio) AS predicted, avg(a.measured_hit_ratio) AS measured, avg(a.error_pp) AS err,
       avg(abs(a.error_pp)) AS abs_err, max(abs(a.error_pp)) AS max_abs_err, max(a.window_end) AS at
FROM accuracy_records a
JOIN servers v ON v.id = a.server_id AND v.org_id = a.org_id {join}
WHERE a.org_id = :org AND {subject} AND a.window_end > :start AND a.window_end <= :end AND {settled}
GROUP BY b ORDER BY b
"""

# the graded window's snapshot, for settled_only (an accuracy record whose snapshot is gone counts)
_ACCURACY_JOIN = """
LEFT JOIN snapshots s ON s.id = a.snapshot_id AND s.org_id = a.org_id AND s.window_end = a.window_end
     AND s.window_end > :start AND s.window_end <= :end"""

_WARMUP_SQL = """
SELECT count(*) FILTER (WHERE NOT ({settled})) AS warming, count(*) AS n
FROM snapshots s
JOIN servers v ON v.id = s.server_id AND v.org_id = s.org_id
WHERE s.org_id = :org AND {subject} AND s.window_end > :start AND s.window_end <= :end
"""


def _buckets(
    db: Session,
    sql: str,
    org_id: uuid.UUID,
    kind: SubjectKind,
    subject_id: uuid.UUID,
    start: datetime | None,
    end: datetime | None,
    max_points: int,
    settled_only: bool = False,
) -> tuple[datetime, datetime, float, list[tuple[datetime, datetime, Any]]]:
    """Run a bucketed query (`sql` with {subject} and {settled}) over [start, end] in max_points
    buckets: (start, end, bucket seconds, [(bucket start, bucket end, row)]). settled_only leaves
    the warm-up windows out (_SETTLED_SQL)."""
    start, end = time_range(start, end)
    bw = (end - start).total_seconds() / max_points
    rows = db.execute(
        text(
            sql.format(
                subject=_SUBJECT_SQL[kind],
                settled=_SETTLED_SQL if settled_only else "true",
                join=_ACCURACY_JOIN if settled_only else "",
            )
        ),
        {"org": org_id, "sid": subject_id, "start": start, "end": end, "bw": bw, "last": max_points - 1},
    ).all()
    out = []
    for r in rows:
        b = min(int(r.b), max_points - 1)
        out.append((start + timedelta(seconds=b * bw), start + timedelta(seconds=(b + 1) * bw), r))
    return start, end, bw, out


def history(
    db: Session,
    org_id: uuid.UUID,
    kind: SubjectKind,
    subject_id: uuid.UUID,
    start: datetime | None,
    end: datetime | None,
    max_points: int,
    settled_only: bool = False,
) -> HistoryOut:
    start, end, bw, rows = _buckets(
        db, _HISTORY_SQL, org_id, kind, subject_id, start, end, max_points, settled_only
    )
    points = []
    for b0, b1, r in rows:
        points.append(
            HistoryPoint(
                start=b0,
                end=b1,
                at=r.at,
                samples=r.n,
                measured_hit_ratio=r.measured,
                predicted_hit_ratio=r.predicted,
                loss_ratio=r.loss,
                bytes_used=float(r.bytes_used) if r.bytes_used is not None else None,
                flagged=int(r.flagged or 0),
            )
        )
    return HistoryOut(start=start, end=end, bucket_seconds=bw, points=points)


def accuracy(
    db: Session,
    org_id: uuid.UUID,
    kind: SubjectKind,
    subject_id: uuid.UUID,
    start: datetime | None,
    end: datetime | None,
    max_points: int,
    settled_only: bool = False,
) -> AccuracyOut:
    start, end, bw, rows = _buckets(
        db, _ACCURACY_SQL, org_id, kind, subject_id, start, end, max_points, settled_only
    )
    points: list[AccuracyPoint] = []
    total = 0
    weighted_abs = 0.0
    worst: float | None = None
    for b0, b1, r in rows:
        points.append(
            AccuracyPoint(
                start=b0,
                end=b1,
                at=r.at,
                samples=r.n,
                predicted_hit_ratio=r.predicted,
                measured_hit_ratio=r.measured,
                error_pp=r.err,
                abs_error_pp=r.abs_err,
            )
        )
        total += r.n
        weighted_abs += r.abs_err * r.n
        worst = r.max_abs_err if worst is None else max(worst, r.max_abs_err)
    return AccuracyOut(
        start=start,
        end=end,
        bucket_seconds=bw,
        samples=total,
        mean_abs_error_pp=weighted_abs / total if total else None,
        max_abs_error_pp=worst,
        points=points,
    )


def warmup_windows(
    db: Session, org_id: uuid.UUID, kind: SubjectKind, subject_id: uuid.UUID, start: datetime, end: datetime
) -> tuple[int, int]:
    """(warm-up windows, all windows) of the subject's servers in (start, end]: the windows that
    history and accuracy with settled_only leave out, and how many there were in all."""
    r = db.execute(
        text(_WARMUP_SQL.format(subject=_SUBJECT_SQL[kind], settled=_SETTLED_SQL)),
        {"org": org_id, "sid": subject_id, "start": start, "end": end},
    ).one()
    return int(r.warming), int(r.n)


def recent_errors_pp(
    db: Session, org_id: uuid.UUID, server_ids: Sequence[uuid.UUID], limit: int = 60
) -> list[float]:
    """The servers' newest `limit` accuracy-record errors (pp), newest first: the band's drift
    term. Records graded in a window while memcached was still filling are left out: its hit rate
    then rises with the fill (cold misses), not by the curve's error (the accuracy benchmark's
    -14.6 and -9.6 pp came from such windows; on full memcached its records are within 3.7 pp)."""
    stmt = (
        select(AccuracyRecord.error_pp)
        .join(
            Snapshot,
            (Snapshot.id == AccuracyRecord.snapshot_id) & (Snapshot.window_end == AccuracyRecord.window_end),
        )
        .where(
            AccuracyRecord.org_id == org_id,
            AccuracyRecord.server_id.in_(server_ids),
            Snapshot.memory_full.is_not(False),  # NULL: an older agent that does not say
        )
    )
    rows = newest(db, stmt, AccuracyRecord.window_end, limit, joined=(Snapshot.window_end,))
    return [float(r.error_pp) for r in rows]


def mae_by_server(
    db: Session, org_id: uuid.UUID, server_ids: Sequence[uuid.UUID], start: datetime, end: datetime
) -> dict[uuid.UUID, float]:
    """Per server: the mean absolute error of its accuracy records in (start, end]."""
    return dict(
        db.execute(
            select(AccuracyRecord.server_id, func.avg(func.abs(AccuracyRecord.error_pp)))
            .where(
                AccuracyRecord.org_id == org_id,
                AccuracyRecord.server_id.in_(server_ids),
                AccuracyRecord.window_end > start,
                AccuracyRecord.window_end <= end,
            )
            .group_by(AccuracyRecord.server_id)
        ).all()
    )
