"""The SQL of one snapshot's processing (snapshot_tasks.process): a few SQLAlchemy Core statements,
not ORM objects, every one naming the partition column, curves read and written as binary float8
arrays (hitcurve.core.pgarray).

Why (issue 19, bench/README.md "Fleet simulator"): the curve mathematics is ~3 ms of a snapshot;
through the ORM its ~20 statements cost ~30 ms more, most of it turning 6,000-12,000 array
elements into Python floats and back (the classes, the previous windows' curves) and one round trip
per alert. Here the classes' and the chosen previous curve's arrays arrive as one bytes object each
(`array_send`), the server curve leaves as binary arrays, the server's facts come in one statement
and its alerts go in one."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Row, func, literal_column, select, text, tuple_
from sqlalchemy.orm import Session

from hitcurve.core.pgarray import Float8Array, decode_float8, float8_array_sql
from hitcurve.crud import notifications
from hitcurve.models import Server, ServerCurve, Snapshot, SnapshotClass
from hitcurve_worker import alerts as rules
from hitcurve_worker.merge import ClassRow
from hitcurve_worker.notification_tasks import remember

# What process() reads of the snapshot row (never the stored gzip payload, ~20 KB).
_SNAPSHOT_COLUMNS = (
    Snapshot.id,
    Snapshot.org_id,
    Snapshot.server_id,
    Snapshot.instance_id,
    Snapshot.window_start,
    Snapshot.window_end,
    Snapshot.status,
    Snapshot.get_hits,
    Snapshot.get_misses,
    Snapshot.measured_hit_ratio,
    Snapshot.cmd_get,
    Snapshot.loss_ratio,
    Snapshot.memory_full,
    Snapshot.basis,
    Snapshot.stats_model,
    Snapshot.total_malloced,
    Snapshot.limit_maxbytes,
    Snapshot.ttl_aware,
    Snapshot.ttl_sizes_bytes,
    Snapshot.ttl_hit_ratios,
)


def lock_snapshot(db: Session, snapshot_id: uuid.UUID, window_end: datetime | None) -> Row[Any] | None:
    """The snapshot's row, locked for this transaction (window_end None: every partition)."""
    bound = [Snapshot.window_end == window_end] if window_end is not None else []
    return db.execute(
        select(*_SNAPSHOT_COLUMNS).where(Snapshot.id == snapshot_id, *bound).with_for_update()
    ).first()


def _binary(column: Any, name: str) -> Any:
    return literal_column(float8_array_sql(f"{column.table.name}.{column.name}")).label(name)


def class_rows(db: Session, snapshot_id: uuid.UUID, window_end: datetime) -> list[ClassRow]:
    """(id, chunk_size, pages, current_items, requests, sizes, hit ratios, ghost reach, ghost
    filters) per class in class order, the curves as lists of floats (merge.ClassRow, the layout
    merge.row_from_protocol makes from a snapshot's JSON)."""
    rows = db.execute(
        select(
            SnapshotClass.class_id,
            SnapshotClass.chunk_size,
            SnapshotClass.pages,
            SnapshotClass.current_items,
            SnapshotClass.requests,
            _binary(SnapshotClass.sizes_items, "xs"),
            _binary(SnapshotClass.hit_ratios, "ys"),
            SnapshotClass.ghost_reach_items,
            SnapshotClass.ghost_filters,
        )
        .where(SnapshotClass.snapshot_id == snapshot_id, SnapshotClass.window_end == window_end)
        .order_by(SnapshotClass.class_id)
    ).all()
    out = []
    for r in rows:
        xs, ys = decode_float8(r.xs), decode_float8(r.ys)
        out.append(
            (
                r.class_id,
                r.chunk_size,
                r.pages,
                r.current_items,
                r.requests,
                [] if xs is None else xs.tolist(),
                [] if ys is None else ys.tolist(),
                r.ghost_reach_items,
                r.ghost_filters,
            )
        )
    return out


def previous_curve(db: Session, snap: Any, since: datetime, recent: int, min_reads: int) -> Row[Any] | None:
    """Of the server's newest `recent` curves before this window (from `since` on), the newest of a
    window with at least `min_reads` reads and no loss flag, else the newest: (snapshot_id,
    instance_id, xs, ys) with its sizes and calibrated hit ratios in binary (ys None: not
    calibrated). One statement: the recent windows are read without their curves."""
    good = (func.coalesce(Snapshot.cmd_get, 0) >= min_reads) & ~func.coalesce(Snapshot.flagged, False)
    newest = (
        select(
            ServerCurve.snapshot_id,
            ServerCurve.window_end,
            Snapshot.instance_id,
            good.label("good"),
        )
        .join(
            Snapshot,
            (Snapshot.id == ServerCurve.snapshot_id) & (Snapshot.window_end == ServerCurve.window_end),
        )
        .where(
            ServerCurve.server_id == snap.server_id,
            ServerCurve.window_end < snap.window_end,
            ServerCurve.window_end >= since,
            Snapshot.window_end >= since,
        )
        .order_by(ServerCurve.window_end.desc())
        .limit(recent)
        .subquery()
    )
    chosen = (
        select(newest.c.snapshot_id, newest.c.window_end, newest.c.instance_id)
        .order_by(newest.c.good.desc(), newest.c.window_end.desc())
        .limit(1)
        .subquery()
    )
    row = db.execute(
        select(
            chosen.c.snapshot_id,
            chosen.c.instance_id,
            _binary(ServerCurve.sizes_bytes, "xs"),
            _binary(ServerCurve.hit_ratio_calibrated, "ys"),
        ).join(
            ServerCurve,
            (ServerCurve.snapshot_id == chosen.c.snapshot_id)
            & (ServerCurve.window_end == chosen.c.window_end)
            & (ServerCurve.window_end >= since),
        )
    ).first()
    return row


def server_facts(db: Session, snap: Any) -> Any:
    """(cluster_id, address, hostname, newer): the server's cluster and name, and whether it has a
    stored curve of a later window (reading only the days from this window's on)."""
    newer = (
        select(func.max(ServerCurve.window_end))
        .where(ServerCurve.server_id == snap.server_id, ServerCurve.window_end > snap.window_end)
        .scalar_subquery()
    )
    return db.execute(
        select(Server.cluster_id, Server.address, Server.hostname, newer.label("newer")).where(
            Server.id == snap.server_id
        )
    ).one()


_ARRAYS = (
    "sizes_bytes",
    "hit_ratio_proportional",
    "hit_ratio_optimal",
    "hit_ratio_calibrated",
    "band_low",
    "band_high",
)
_JSON = ("calibration", "advice")
_KEY = ("snapshot_id", "window_end", "org_id")


def _upsert_sql(table: str, columns: Sequence[str], updated: Sequence[str] | None = None) -> str:
    """INSERT ... ON CONFLICT (the natural key) DO UPDATE of `updated` (default: every other
    column), in psycopg's placeholders (sent through the driver: binary arrays, jsonb as text)."""

    def value(c: str) -> str:
        if c in _JSON:
            return f"CAST(%({c})s AS jsonb)"
        if c in _ARRAYS:
            return f"%({c})s::float8[]"
        return f"%({c})s"

    cols = ", ".join(columns)
    vals = ", ".join(value(c) for c in columns)
    sets = ", ".join(f"{c} = EXCLUDED.{c}" for c in (updated or [c for c in columns if c not in _KEY]))
    return (
        f"INSERT INTO {table} ({cols}) VALUES ({vals})"  # noqa: S608 - column names are ours
        f" ON CONFLICT ({', '.join(_KEY)}) DO UPDATE SET {sets}"
    )


_ACCURACY_UPDATED = (
    "predicted_from_snapshot_id",
    "memory_bytes",
    "predicted_hit_ratio",
    "measured_hit_ratio",
    "error_pp",
    "basis",
)


def store_rows(db: Session, server_curve: dict[str, Any], accuracy: dict[str, Any] | None) -> None:
    """Upsert the window's accuracy record (only its graded values on a conflict, as before) and
    its server curve (every column), keyed on (snapshot_id, window_end, org_id)."""
    conn = db.connection()
    if accuracy is not None:
        sql = _upsert_sql("accuracy_records", list(accuracy), _ACCURACY_UPDATED)
        conn.exec_driver_sql(sql, accuracy)
    params = {
        k: (
            None
            if v is None and k in _ARRAYS
            else Float8Array(v)
            if k in _ARRAYS
            else json.dumps(v)
            if k in _JSON
            else v
        )
        for k, v in server_curve.items()
    }
    conn.exec_driver_sql(_upsert_sql("server_curves", list(params)), params)


# The open alerts of a subject, each (kind) opened or refreshed while it fires and resolved when not,
# in one statement. One open alert per (org, kind, subject): the partial unique index
# uq_alerts_open_subject. Returns the alerts that opened or resolved here (their deliveries).
_ALERTS = text(
    "WITH v AS (SELECT * FROM unnest(CAST(:kinds AS text[]), CAST(:sevs AS text[]), CAST(:msgs AS text[]),"
    " CAST(:dets AS jsonb[])) AS v(kind, sev, msg, det)),"
    " opened AS (INSERT INTO alerts (id, org_id, cluster_id, server_id, kind, severity, message, details,"
    " state, first_seen_at, last_seen_at)"
    " SELECT gen_random_uuid(), :org, CAST(:cl AS uuid), CAST(:sv AS uuid), kind, sev, msg, det, 'open',"
    " :at, :at FROM v"
    " ON CONFLICT (org_id, kind, coalesce(cluster_id, '00000000-0000-0000-0000-000000000000'::uuid),"
    " coalesce(server_id, '00000000-0000-0000-0000-000000000000'::uuid)) WHERE state = 'open'"
    " DO UPDATE SET severity = EXCLUDED.severity, message = EXCLUDED.message, details = EXCLUDED.details,"
    " last_seen_at = GREATEST(alerts.last_seen_at, EXCLUDED.last_seen_at)"
    " RETURNING id, kind, severity, (xmax = 0) AS inserted),"
    " resolved AS (UPDATE alerts SET state = 'resolved', resolved_at = :at WHERE org_id = :org"
    " AND kind = ANY(CAST(:off AS text[])) AND state = 'open'"
    " AND cluster_id IS NOT DISTINCT FROM CAST(:cl AS uuid)"
    " AND server_id IS NOT DISTINCT FROM CAST(:sv AS uuid) RETURNING id, kind, severity)"
    " SELECT id, kind, severity, 'opened' AS event FROM opened WHERE inserted"
    " UNION ALL SELECT id, kind, severity, 'resolved' FROM resolved"
)


def upsert_alerts(
    db: Session,
    org_id: uuid.UUID,
    changes: Sequence[tuple[str, rules.Firing | None]],
    at: datetime,
    *,
    cluster_id: uuid.UUID | None = None,
    server_id: uuid.UUID | None = None,
) -> None:
    """Open or refresh the one open alert of each (kind, subject) while it fires (a Firing);
    resolve it when not (None). An alert that opens or resolves here gets a delivery row per
    notification channel (in this transaction, in the order of `changes`); the caller enqueues
    them after its commit (notification_tasks)."""
    on = [(k, f) for k, f in changes if f is not None]
    rows = db.execute(
        _ALERTS,
        {
            "kinds": [k for k, _ in on],
            "sevs": [f.severity for _, f in on],
            "msgs": [f.message for _, f in on],
            "dets": [json.dumps(f.details, default=str) for _, f in on],
            "off": [k for k, f in changes if f is None],
            "org": org_id,
            "cl": cluster_id,
            "sv": server_id,
            "at": at,
        },
    ).all()
    order = {k: i for i, (k, _) in enumerate(changes)}
    for r in sorted(rows, key=lambda r: order[r.kind]):
        remember(db, notifications.queue_change(db, org_id, r.id, r.event, r.severity, at))


# A drain's claim (drain_tasks): of the pending snapshots whose window ended since :since, each
# server's earliest (window, arrival, id) -- so a server's windows are claimed in order, one per
# claim, and a server whose earliest is held by another drain (SKIP LOCKED) gives nothing --,
# oldest upload first, at most :n; their attempts counted and committed before the work (as
# reliability.claim_attempt does, so an input that kills the worker is parked after
# MAX_ATTEMPTS; one at MAX_ATTEMPTS waits for the re-enqueue job to park it). The pending rows are
# read through ix_snapshots_pending: the backlog, not the table.
_CLAIM = text(
    "WITH pend AS (SELECT id, window_end, received_at, row_number() OVER (PARTITION BY server_id"
    " ORDER BY window_end, received_at, id) AS k FROM snapshots"
    " WHERE status = 'pending' AND window_end >= :since),"
    " cand AS (SELECT s.id, s.window_end FROM snapshots s JOIN pend p"
    " ON s.id = p.id AND s.window_end = p.window_end AND s.window_end >= :since"
    " WHERE p.k = 1 AND s.status = 'pending' AND s.attempts < :max_attempts"
    " ORDER BY p.received_at LIMIT :n FOR UPDATE OF s SKIP LOCKED)"
    " UPDATE snapshots u SET attempts = u.attempts + 1 FROM cand"
    " WHERE u.id = cand.id AND u.window_end = cand.window_end AND u.window_end >= :since"
    " RETURNING u.id, u.window_end"
)


def claim_pending(
    db: Session, since: datetime, n: int, max_attempts: int
) -> list[tuple[uuid.UUID, datetime]]:
    """Claim up to n pending snapshots for a drain (_CLAIM), committed: (id, window_end) each."""
    rows = [
        (r.id, r.window_end)
        for r in db.execute(_CLAIM, {"since": since, "n": n, "max_attempts": max_attempts})
    ]
    db.commit()
    return rows


def lock_claimed(db: Session, keys: Sequence[tuple[uuid.UUID, datetime]]) -> list[Any]:
    """The claimed snapshots still pending, locked for this transaction, oldest window first; one
    another drain locked in the meantime (it claimed it too) is skipped: that drain does it."""
    if not keys:
        return []
    since = min(k[1] for k in keys)
    return list(
        db.execute(
            select(*_SNAPSHOT_COLUMNS)
            .where(
                tuple_(Snapshot.id, Snapshot.window_end).in_(list(keys)),
                Snapshot.window_end >= since,
                Snapshot.status == "pending",
            )
            .order_by(Snapshot.window_end, Snapshot.id)
            .with_for_update(skip_locked=True)
        ).all()
    )


_MARK_PROCESSED = text(
    "UPDATE snapshots s SET status = 'processed', processed_at = :at, error = NULL"
    " FROM unnest(CAST(:ids AS uuid[]), CAST(:ends AS timestamptz[])) AS k(id, window_end)"
    " WHERE s.id = k.id AND s.window_end = k.window_end AND s.window_end >= :since"
)


def mark_processed(db: Session, keys: Sequence[tuple[uuid.UUID, datetime]], at: datetime) -> None:
    """The batch's snapshots are done, in one statement (the caller commits)."""
    if keys:
        db.execute(
            _MARK_PROCESSED,
            {
                "ids": [k[0] for k in keys],
                "ends": [k[1] for k in keys],
                "at": at,
                "since": min(k[1] for k in keys),
            },
        )
