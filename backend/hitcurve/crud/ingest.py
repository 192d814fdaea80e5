"""Ingestion of agent uploads (docs/agent-protocol.md) without HTTP: `parse` (hitcurve.ingest.uploads)
turns a JSON document into the protocol model (hitcurve.schemas.agent); store a snapshot or
trace chunk in one transaction, and hand a snapshot to the worker right after the commit.

Used by the /agent routes, and by the e2e and benchmark seeding (the same storage path)."""

import gzip
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal

from sqlalchemy import literal_column, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.exc import DBAPIError

from hitcurve.core import partitions
from hitcurve.core.audit import audit
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine, get_sessionmaker
from hitcurve.core.domain import Conflict
from hitcurve.core.principal import Principal
from hitcurve.core.tasks import DRAIN_SNAPSHOTS, broker_backing_off, record_enqueued, request_drain
from hitcurve.ingest import tracecodec
from hitcurve.ingest.snapshot_rows import SnapshotRows, snapshot_rows
from hitcurve.ingest.uploads import TraceUpload, parse
from hitcurve.models import Server, Snapshot, TraceChunk
from hitcurve.schemas import agent as proto


@dataclass(frozen=True)
class Stored:
    """What storing an upload did: accepted (new) or duplicate (already stored by this org)."""

    id: uuid.UUID
    status: Literal["accepted", "duplicate"]

    @property
    def accepted(self) -> bool:
        return self.status == "accepted"


def _upsert_server(
    db: Any, org_id: uuid.UUID, values: dict[str, Any], update: dict[str, Any]
) -> tuple[uuid.UUID, bool]:
    stmt = pg_insert(Server).values(org_id=org_id, **values)
    stmt = stmt.on_conflict_do_update(constraint="uq_servers_org_address", set_=update)
    row = db.execute(stmt.returning(Server.id, literal_column("(xmax = 0)").label("inserted"))).one()
    return row.id, bool(row.inserted)


DUPLICATE_SPAN = timedelta(days=1)


def _duplicate(db: Any, model: Any, obj_id: uuid.UUID, org_id: uuid.UUID) -> Stored | None:
    owner = db.execute(select(model.org_id).where(model.id == obj_id).limit(1)).scalar_one_or_none()
    if owner is None:
        return None
    if owner != org_id:
        raise Conflict("id_conflict", "this id is already used; generate a new random UUID")
    return Stored(obj_id, "duplicate")


# One statement stores a snapshot: the server row (registered or refreshed), the snapshot with its
# classes packed in one value (hitcurve.ingest.classpack) and, if kept, its gzip payload, and the
# audit entry of a first registration. A duplicate id
# writes nothing, not even the server row (the NOT EXISTS guards the first insert), so several
# uploads' statements can share one transaction (group commit, crud/ingest_group.py); the
# caller still rolls back when the id turned out stored by a concurrent transaction (the ON
# CONFLICT), which refreshed the server row.
#
# snapshots is partitioned by day on window_end (hitcurve.core.partitions), so its key is
# (id, window_end, org_id): the NOT EXISTS makes an id already stored for a window within
# DUPLICATE_SPAN of this one a duplicate whatever its window or organization (a retry repeats its
# window; the agent's ids are random UUIDs), reading only those days' partitions (2-3, not all).
#
# Sent through the driver (psycopg placeholders): the packed classes and the gzip payload are
# bytea parameters in binary.
STORE_SNAPSHOT = """
WITH srv AS (
    INSERT INTO servers (id, org_id, address, instance_id, version, limit_maxbytes, settings, hostname,
                         agent_version, agent_key_id, first_seen_at, last_seen_at, last_snapshot_at)
    SELECT %(server_id)s, %(org_id)s, %(address)s, %(instance_id)s, %(version)s, %(limit_maxbytes)s,
           CAST(%(settings)s AS jsonb), %(hostname)s, %(agent_version)s, %(key_id)s,
           %(now)s, %(now)s, %(now)s
    WHERE NOT EXISTS (SELECT 1 FROM snapshots d WHERE d.id = %(id)s
                      AND d.window_end BETWEEN %(dup_from)s AND %(dup_to)s)
    ON CONFLICT ON CONSTRAINT uq_servers_org_address DO UPDATE SET
        instance_id = EXCLUDED.instance_id, version = EXCLUDED.version,
        limit_maxbytes = EXCLUDED.limit_maxbytes, settings = EXCLUDED.settings, hostname = EXCLUDED.hostname,
        agent_version = EXCLUDED.agent_version, agent_key_id = EXCLUDED.agent_key_id,
        last_seen_at = EXCLUDED.last_seen_at, last_snapshot_at = EXCLUDED.last_snapshot_at
    RETURNING id, (xmax = 0) AS inserted
), snap AS (
    INSERT INTO snapshots (id, org_id, server_id, agent_key_id, instance_id, window_start, window_end,
                           received_at, limit_maxbytes, curve_points, cmd_get, get_hits, get_misses,
                           bytes_used, curr_items, measured_hit_ratio, loss_ratio, flagged, payload_gzip,
                           status, attempts, enqueued_at, total_malloced, memory_full, evictions_total,
                           hash_bytes, curr_connections, basis, stats_model, ttl_aware,
                           ttl_sizes_bytes, ttl_hit_ratios, breakdown, flag_detail, extstore, classes,
                           cost_count, cost_us_total)
    SELECT %(id)s, %(org_id)s, srv.id, %(key_id)s, %(instance_id)s, %(window_start)s, %(window_end)s, %(now)s,
           %(limit_maxbytes)s, %(curve_points)s, %(cmd_get)s, %(get_hits)s, %(get_misses)s, %(bytes_used)s,
           %(curr_items)s, %(measured_hit_ratio)s, %(loss_ratio)s, %(flagged)s, %(payload_gzip)s,
           'pending', 0, %(enqueued_at)s, %(total_malloced)s, %(memory_full)s, %(evictions_total)s,
           %(hash_bytes)s, %(curr_connections)s, %(basis)s, CAST(%(stats_model)s AS jsonb),
           %(ttl_aware)s, %(ttl_sizes_bytes)s::float8[], %(ttl_hit_ratios)s::float8[],
           CAST(%(breakdown)s AS jsonb), CAST(%(flag_detail)s AS jsonb), CAST(%(extstore)s AS jsonb),
           %(classes)s, %(cost_count)s, %(cost_us_total)s
    FROM srv
    ON CONFLICT (id, window_end, org_id) DO NOTHING
    RETURNING id, org_id, window_end
), aud AS (
    INSERT INTO audit_log (org_id, actor_key_id, action, target_type, target_id, details, at)
    SELECT %(org_id)s, %(key_id)s, 'server.registered', 'server', srv.id::text,
           jsonb_build_object('address', CAST(%(address)s AS text)), %(now)s
    FROM srv JOIN snap ON true WHERE srv.inserted
    RETURNING 1
)
SELECT (SELECT id FROM snap) AS stored, (SELECT count(*) FROM aud) AS audited
"""


def gzip_payload(doc: bytes) -> bytes:
    """The stored form of a payload that did not arrive gzip-compressed."""
    return gzip.compress(doc, compresslevel=1, mtime=0)


def store_params(
    agent: Principal,
    rows: SnapshotRows,
    doc: bytes | str,
    gzipped: bytes | None,
    now: datetime,
    marked: datetime | None,
) -> dict[str, Any]:
    """The store statement's parameters: the snapshot's own (rows) and who sent it when. The
    agent's document is kept as HITCURVE_STORE_PAYLOADS says (all, flagged windows', none)."""
    keep = get_settings().store_payloads
    if keep == "none" or (keep == "flagged" and not rows.params["flagged"]):
        gzipped = None
    elif gzipped is None:
        gzipped = gzip_payload(doc.encode() if isinstance(doc, str) else doc)
    return {
        **rows.params,
        "server_id": uuid.uuid4(),
        "org_id": agent.org_id,
        "key_id": agent.key_id,
        "now": now,
        "enqueued_at": marked,
        "dup_from": rows.window_end - DUPLICATE_SPAN,
        "dup_to": rows.window_end + DUPLICATE_SPAN,
        "payload_gzip": gzipped,
    }


def duplicate_snapshot(agent: Principal, snapshot_id: uuid.UUID) -> Stored:
    """The answer for a snapshot id the store statement found stored: duplicate (this org's,
    idempotent), or 409 when another organization's upload has it."""
    with get_sessionmaker()() as db:
        return _duplicate(db, Snapshot, snapshot_id, agent.org_id) or Stored(snapshot_id, "duplicate")


def store_snapshot(
    agent: Principal,
    snap: proto.Snapshot | SnapshotRows,
    doc: bytes | str,
    enqueue: bool = False,
    gzipped: bytes | None = None,
) -> Stored:
    """Store a validated snapshot (the protocol model, or its rows as the API's decoder returns
    them, hitcurve.ingest.snapshot_rows): accepted when new, duplicate when already stored.

    doc: its JSON text; gzipped: the same, gzip-compressed, when the request body came that way
    (stored as received, so nothing is compressed twice).

    enqueue: hand the snapshot to the worker right after the commit, on the same connection and
    thread (no background task, no second pool checkout): a drain of the pending snapshots is
    queued unless one already is (hitcurve.core.tasks.request_drain). enqueued_at is written with the row
    when the broker is not known to be down, and cleared again if publishing fails, which saves
    an UPDATE transaction per upload. If the process dies between the commit and the publish,
    the row is `pending` with enqueued_at = received_at, which the worker's re-enqueue job
    (coalesce(enqueued_at, received_at) < cutoff) treats exactly like a null enqueued_at."""
    rows = snap if isinstance(snap, SnapshotRows) else snapshot_rows(snap)
    now = datetime.now(UTC)
    marked = now if enqueue and not broker_backing_off() else None
    window_end = rows.window_end
    params = store_params(agent, rows, doc, gzipped, now, marked)
    with get_engine().connect() as conn:
        try:
            row = conn.exec_driver_sql(STORE_SNAPSHOT, params).one()
        except DBAPIError as exc:
            # The window's day has no partition yet (the worker's job creates them ahead; this
            # covers a stopped beat): create it and the next day's, then store once more.
            if not partitions.missing_partition(exc):
                raise
            conn.rollback()
            day = partitions.day_of(window_end)
            partitions.ensure(conn, [day, partitions.day_of(now), day + timedelta(days=1)])
            conn.commit()
            row = conn.exec_driver_sql(STORE_SNAPSHOT, params).one()
        if row.stored is None:  # the id is already stored: undo a concurrent duplicate's server refresh
            conn.rollback()
            return duplicate_snapshot(agent, rows.snapshot_id)
        conn.commit()
        if enqueue:
            record_enqueued(conn, DRAIN_SNAPSHOTS, Snapshot, rows.snapshot_id, marked, request_drain())
    return Stored(rows.snapshot_id, "accepted")


def store_trace(agent: Principal, chunk: TraceUpload) -> Stored:
    """Store a decoded trace chunk (hitcurve.ingest.uploads; the caller enqueues it when accepted)."""
    now = datetime.now(UTC)
    with get_sessionmaker()() as db:
        dup = _duplicate(db, TraceChunk, chunk.chunk_id, agent.org_id)
        if dup is not None:
            return dup
        server_id, inserted = _upsert_server(
            db,
            agent.org_id,
            {
                "address": chunk.address,
                "instance_id": chunk.instance_id,
                "agent_key_id": agent.key_id,
                "last_seen_at": now,
            },
            {"last_seen_at": now},
        )
        row = db.execute(
            pg_insert(TraceChunk)
            .values(
                id=chunk.chunk_id,
                org_id=agent.org_id,
                server_id=server_id,
                agent_key_id=agent.key_id,
                instance_id=chunk.instance_id,
                seq=chunk.seq,
                window_start=chunk.start,
                window_end=chunk.end,
                sample_rate=chunk.sample_rate,
                record_count=chunk.record_count,
                data_format=tracecodec.FORMAT,
                data=chunk.data,
                received_at=now,
                status="pending",
            )
            .on_conflict_do_nothing(index_elements=["id"])
            .returning(TraceChunk.id)
        ).scalar_one_or_none()
        if row is None:
            db.rollback()
            return Stored(chunk.chunk_id, "duplicate")
        if inserted:
            audit(
                db,
                "server.registered",
                org_id=agent.org_id,
                key_id=agent.key_id,
                target_type="server",
                target_id=server_id,
                address=chunk.address,
            )
        db.commit()
    return Stored(chunk.chunk_id, "accepted")


__all__ = [
    "Stored",
    "TraceUpload",
    "duplicate_snapshot",
    "gzip_payload",
    "parse",
    "store_params",
    "store_snapshot",
    "store_trace",
]
