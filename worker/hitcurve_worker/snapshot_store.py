"""The writes of a batch of snapshots' processing (snapshot_tasks.work) and a drain's claim, lock
and final update: SQLAlchemy Core statements and driver SQL, not ORM objects, every one naming the
partition column, curves written as binary float8 arrays (hitcurve.core.pgarray); the batch's
reads are snapshot_loads'.

Why (bench/results/2026-11-25-fleet-first-pass.md and 2026-11-27-fleet-fifth-pass.md): the curve
mathematics is ~3 ms of a snapshot; through the ORM its ~20 statements cost ~30 ms more, most of it
turning 6,000-12,000 array elements into Python floats and back and one round trip per alert; per
snapshot, even lean statements cost the worker ~0.3-0.5 ms each. Here a batch's server curves and
accuracy records go in one executemany per table (one pipelined round trip) and the alerts of all
its servers in one statement."""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Row, delete, select, text, tuple_
from sqlalchemy.orm import Session

from hitcurve.core.pgarray import Float8Array
from hitcurve.crud import notifications
from hitcurve.models import ClusterCurve, Snapshot
from hitcurve.rules import alerts as rules
from hitcurve_worker.cluster_pipeline import ClusterOutcome
from hitcurve_worker.notification_tasks import remember
from hitcurve_worker.snapshot_loads import HORIZON

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


def _curve_params(server_curve: dict[str, Any]) -> dict[str, Any]:
    """A server curve's columns as driver parameters: arrays binary, jsonb as text."""
    return {
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


def _upsert_many(
    db: Session, table: str, rows: Sequence[dict[str, Any]], updated: Sequence[str] | None
) -> None:
    """The rows upserted with one executemany per column set (psycopg sends them in one pipeline:
    one round trip, not one per row)."""
    groups: dict[tuple[str, ...], list[dict[str, Any]]] = {}
    for r in rows:
        groups.setdefault(tuple(r), []).append(r)
    conn = db.connection()
    for columns, same in groups.items():
        conn.exec_driver_sql(_upsert_sql(table, list(columns), updated), same)


def store_rows(db: Session, rows: Sequence[tuple[dict[str, Any], dict[str, Any] | None]]) -> None:
    """Upsert each window's accuracy record (only its graded values on a conflict, as before) and
    its server curve (every column), keyed on (snapshot_id, window_end, org_id): (server curve,
    accuracy or None) per window, one statement per table for them all."""
    _upsert_many(db, "accuracy_records", [acc for _, acc in rows if acc is not None], _ACCURACY_UPDATED)
    _upsert_many(db, "server_curves", [_curve_params(sc) for sc, _ in rows], None)


# The open alerts of many subjects (org, cluster, server), each (kind) opened or refreshed while it
# fires and resolved when not, in one statement. One open alert per (org, kind, subject): the
# partial unique index uq_alerts_open_subject (a statement must not name one twice). Returns the
# alerts that opened or resolved here (their deliveries).
_ALERTS = text(
    "WITH v AS (SELECT * FROM unnest(CAST(:orgs AS uuid[]), CAST(:cls AS uuid[]), CAST(:svs AS uuid[]),"
    " CAST(:kinds AS text[]), CAST(:sevs AS text[]), CAST(:msgs AS text[]), CAST(:dets AS jsonb[]))"
    " AS v(org, cl, sv, kind, sev, msg, det)),"
    " o AS (SELECT * FROM unnest(CAST(:off_orgs AS uuid[]), CAST(:off_cls AS uuid[]),"
    " CAST(:off_svs AS uuid[]), CAST(:off_kinds AS text[])) AS o(org, cl, sv, kind)),"
    " opened AS (INSERT INTO alerts (id, org_id, cluster_id, server_id, kind, severity, message, details,"
    " state, first_seen_at, last_seen_at)"
    " SELECT gen_random_uuid(), org, cl, sv, kind, sev, msg, det, 'open', :at, :at FROM v"
    " ON CONFLICT (org_id, kind, coalesce(cluster_id, '00000000-0000-0000-0000-000000000000'::uuid),"
    " coalesce(server_id, '00000000-0000-0000-0000-000000000000'::uuid)) WHERE state = 'open'"
    " DO UPDATE SET severity = EXCLUDED.severity, message = EXCLUDED.message, details = EXCLUDED.details,"
    " last_seen_at = GREATEST(alerts.last_seen_at, EXCLUDED.last_seen_at)"
    " RETURNING id, org_id, cluster_id, server_id, kind, severity, (xmax = 0) AS inserted),"
    " resolved AS (UPDATE alerts a SET state = 'resolved', resolved_at = :at FROM o"
    " WHERE a.org_id = o.org AND a.kind = o.kind AND a.state = 'open'"
    " AND a.cluster_id IS NOT DISTINCT FROM o.cl AND a.server_id IS NOT DISTINCT FROM o.sv"
    " RETURNING a.id, a.org_id, a.cluster_id, a.server_id, a.kind, a.severity)"
    " SELECT id, org_id, cluster_id, server_id, kind, severity, 'opened' AS event FROM opened WHERE inserted"
    " UNION ALL SELECT id, org_id, cluster_id, server_id, kind, severity, 'resolved' FROM resolved"
)

# An alert's subject: (org, cluster or None, server or None).
Subject = tuple[uuid.UUID, uuid.UUID | None, uuid.UUID | None]


def _ids(xs: Sequence[uuid.UUID | None]) -> list[str | None]:
    return [None if x is None else str(x) for x in xs]


def upsert_alerts_of(
    db: Session, changes: Sequence[tuple[Subject, Sequence[tuple[str, rules.Firing | None]]]], at: datetime
) -> None:
    """Open or refresh the one open alert of each (subject, kind) while it fires (a Firing);
    resolve it when not (None): many subjects in one statement. An alert that opens or resolves
    here gets a delivery row per notification channel (in this transaction, in the order of
    `changes`); the caller enqueues them after its commit (notification_tasks)."""
    flat = [(subj, k, f) for subj, kinds in changes for k, f in kinds]
    if not flat:
        return
    on = [(subj, k, f) for subj, k, f in flat if f is not None]
    off = [(subj, k) for subj, k, f in flat if f is None]
    rows = db.execute(
        _ALERTS,
        {
            "orgs": _ids([s[0] for s, _, _ in on]),
            "cls": _ids([s[1] for s, _, _ in on]),
            "svs": _ids([s[2] for s, _, _ in on]),
            "kinds": [k for _, k, _ in on],
            "sevs": [f.severity for _, _, f in on],
            "msgs": [f.message for _, _, f in on],
            "dets": [json.dumps(f.details, default=str) for _, _, f in on],
            "off_orgs": _ids([s[0] for s, _ in off]),
            "off_cls": _ids([s[1] for s, _ in off]),
            "off_svs": _ids([s[2] for s, _ in off]),
            "off_kinds": [k for _, k in off],
            "at": at,
        },
    ).all()
    order = {(subj, k): i for i, (subj, k, _) in enumerate(flat)}
    for r in sorted(rows, key=lambda r: order[((r.org_id, r.cluster_id, r.server_id), r.kind)]):
        remember(db, notifications.queue_change(db, r.org_id, r.id, r.event, r.severity, at))


def upsert_alerts(
    db: Session,
    org_id: uuid.UUID,
    changes: Sequence[tuple[str, rules.Firing | None]],
    at: datetime,
    *,
    cluster_id: uuid.UUID | None = None,
    server_id: uuid.UUID | None = None,
) -> None:
    """upsert_alerts_of for one subject."""
    upsert_alerts_of(db, [((org_id, cluster_id, server_id), changes)], at)


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
    " WHERE status = 'pending' AND window_end >= :since AND window_end <= :until),"
    " cand AS (SELECT s.id, s.window_end FROM snapshots s JOIN pend p"
    " ON s.id = p.id AND s.window_end = p.window_end AND s.window_end >= :since AND s.window_end <= :until"
    " WHERE p.k = 1 AND s.status = 'pending' AND s.attempts < :max_attempts"
    " ORDER BY p.received_at LIMIT :n FOR UPDATE OF s SKIP LOCKED)"
    " UPDATE snapshots u SET attempts = u.attempts + 1 FROM cand"
    " WHERE u.id = cand.id AND u.window_end = cand.window_end AND u.window_end >= :since"
    " AND u.window_end <= :until"
    " RETURNING u.id, u.window_end"
)


def claim_pending(
    db: Session, since: datetime, n: int, max_attempts: int
) -> list[tuple[uuid.UUID, datetime]]:
    """Claim up to n pending snapshots for a drain (_CLAIM), committed: (id, window_end) each.
    Bounded above too (the latest window an upload can have, snapshot_loads.HORIZON), so the
    claim plans the claimable days and not also the empty ones made ahead of time."""
    until = max(datetime.now(UTC), since) + HORIZON
    params = {"since": since, "until": until, "n": n, "max_attempts": max_attempts}
    rows = [(r.id, r.window_end) for r in db.execute(_CLAIM, params)]
    db.commit()
    return rows


def lock_claimed(db: Session, keys: Sequence[tuple[uuid.UUID, datetime]]) -> list[Any]:
    """The claimed snapshots still pending, locked for this transaction, oldest window first; one
    another drain locked in the meantime (it claimed it too) is skipped: that drain does it."""
    if not keys:
        return []
    since, until = min(k[1] for k in keys), max(k[1] for k in keys)
    return list(
        db.execute(
            select(*_SNAPSHOT_COLUMNS)
            .where(
                tuple_(Snapshot.id, Snapshot.window_end).in_(list(keys)),
                Snapshot.window_end >= since,
                Snapshot.window_end <= until,
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
    " AND s.window_end <= :until"
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
                "until": max(k[1] for k in keys),
            },
        )


def store_cluster(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, out: ClusterOutcome, at: datetime
) -> ClusterCurve:
    """A cluster's computed curve replacing the one of the same (window end, basis) (the caller
    holds the cluster's advisory lock; its alerts follow, cluster_alerts)."""
    c = out.curve
    db.execute(
        delete(ClusterCurve).where(
            ClusterCurve.cluster_id == cluster_id,
            ClusterCurve.window_end == c["window_end"],
            ClusterCurve.basis == c["basis"],
        )
    )
    row = ClusterCurve(org_id=org_id, cluster_id=cluster_id, computed_at=at, **c)
    db.add(row)
    return row
