"""What agents upload: snapshots (their slab classes packed in one column) and sampled trace chunks.

Both carry a processing state the worker owns: `pending` when stored (and, if the broker was
reachable, enqueued), then `processed`, `failed` (will be retried) or `parked` (gave up after
too many attempts, kept for inspection). `attempts` counts worker tries; `enqueued_at` is the
last time the backend or the worker's re-enqueue job handed the id to Celery.
"""

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    LargeBinary,
    PrimaryKeyConstraint,
    String,
    Text,
    Uuid,
    text,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from hitcurve.models.base import Base
from hitcurve.models.common import FloatArray, now_col, org_fk

WORK_STATES = ("pending", "processed", "failed", "parked")
# What a window's curve rests on: memcached's watch stream, or its `stats` counters alone (the
# agent's Che + Zipf model where `watch` is refused).
BASES = ("watch", "stats_only")


class Snapshot(Base):
    """Partitioned by day on window_end (hitcurve.core.partitions): the key carries the partition
    column and the organization (docs/scaling.md); the mapper's identity is the agent's id alone."""

    __tablename__ = "snapshots"
    __table_args__ = (
        PrimaryKeyConstraint("id", "window_end", "org_id"),
        CheckConstraint(f"status IN {WORK_STATES!r}", name="status"),
        CheckConstraint(f"basis IN {BASES!r}", name="basis"),
        Index("ix_snapshots_server_window", "server_id", "window_end"),
        # /health's upload-to-curve lag reads the newest processed snapshots (core/workers.py)
        Index("ix_snapshots_processed_at", "processed_at", postgresql_where=text("processed_at IS NOT NULL")),
        Index(
            "ix_snapshots_pending",
            "status",
            "received_at",
            postgresql_where=text("status IN ('pending','failed')"),
        ),
        {"postgresql_partition_by": "RANGE (window_end)"},
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid)  # the agent's snapshot_id
    org_id: Mapped[uuid.UUID] = org_fk()
    server_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("servers.id", ondelete="CASCADE"), nullable=False
    )
    agent_key_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("agent_keys.id", ondelete="SET NULL")
    )
    instance_id: Mapped[str] = mapped_column(String(100), nullable=False)
    window_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    window_end: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    received_at: Mapped[datetime] = now_col()
    limit_maxbytes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    curve_points: Mapped[int] = mapped_column(Integer, nullable=False)
    cmd_get: Mapped[int] = mapped_column(BigInteger, nullable=False)
    get_hits: Mapped[int] = mapped_column(BigInteger, nullable=False)
    get_misses: Mapped[int] = mapped_column(BigInteger, nullable=False)
    bytes_used: Mapped[int] = mapped_column(BigInteger, nullable=False)
    curr_items: Mapped[int] = mapped_column(BigInteger, nullable=False)
    measured_hit_ratio: Mapped[float | None] = mapped_column(Float)
    loss_ratio: Mapped[float] = mapped_column(Float, nullable=False)
    flagged: Mapped[bool] = mapped_column(Boolean, nullable=False)
    # why the agent flagged the window (hitcurve.ingest.snapshot_rows.flag_json: its reasons, the
    # self-check's figures, the loss threshold); NULL when not flagged or from older agents
    flag_detail: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # the server's flash tier in the window (the agent's `extstore` object without `stream`,
    # hitcurve.schemas.extstore); NULL without one. Read by hitcurve.sizing.flash.
    extstore: Mapped[dict[str, Any] | None] = mapped_column(JSONB, deferred=True)
    # memcached's memory at the window's end (the agent's optional `memory` object; NULL from
    # older agents): slab pages taken (toward -m), full or still filling, cumulative evictions,
    # and what lives outside -m.
    total_malloced: Mapped[int | None] = mapped_column(BigInteger)
    memory_full: Mapped[bool | None] = mapped_column(Boolean)
    evictions_total: Mapped[int | None] = mapped_column(BigInteger)
    hash_bytes: Mapped[int | None] = mapped_column(BigInteger)
    curr_connections: Mapped[int | None] = mapped_column(BigInteger)
    # `watch`, or `stats_only` (BASES) with the agent's stats_model object (its Che + Zipf curve
    # over items, the fit's parameters and state); NULL for watch windows.
    basis: Mapped[str] = mapped_column(String(16), nullable=False, default="watch", server_default="watch")
    stats_model: Mapped[dict[str, Any] | None] = mapped_column(JSONB)
    # the window's traffic carries TTLs (hitcurve/rules/ttl.py: expiry moves the agent's curve
    # by >= TTL_CURVE_GAP_PP); NULL from agents without the breakdown
    ttl_aware: Mapped[bool | None] = mapped_column(Boolean)
    # the agent's merged TTL-aware curve (bytes -> hit ratio), what sizing rests on when
    # ttl_aware (hitcurve/rules/ttl.py); NULL when the agent sent none
    ttl_sizes_bytes: Mapped[list[float] | None] = mapped_column(FloatArray)
    ttl_hit_ratios: Mapped[list[float] | None] = mapped_column(FloatArray)
    # What the breakdown pages read of the upload (hitcurve.ingest.snapshot_rows.breakdown_json), taken
    # from the validated snapshot at ingest: the pages never decode payload_gzip. NULL when the
    # agent sent no breakdown. Deferred: only the breakdown pages read it.
    breakdown: Mapped[dict[str, Any] | None] = mapped_column(JSONB, deferred=True)
    # The window's slab classes, each with its LRU curve over items (sizes strictly increasing,
    # hit ratios non-decreasing), its TTL-aware curve, ghost reach and lookup costs, packed in
    # one lossless value (hitcurve.ingest.classpack: ~5 KB for 28 classes, where a row per class
    # wrote ~55 KB of WAL). Storage EXTERNAL: it is zlib-compressed already. NULL when the
    # window's classes were thinned by retention. Deferred: the curve pages and the worker read it.
    classes: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    # Over the classes: lookups the agent timed and their summed cost in us (the cost view's
    # per-window rate, hitcurve.crud.costs); NULL when no class timed any.
    cost_count: Mapped[int | None] = mapped_column(BigInteger)
    cost_us_total: Mapped[float | None] = mapped_column(Float)
    # The validated upload as the agent sent it, gzip-compressed JSON (the request body itself when
    # it came gzip). Stored as bytes, not JSONB: PostgreSQL neither parses nor re-compresses it
    # (storage EXTERNAL), which halves its CPU per upload. NULL once retention dropped it, and
    # when HITCURVE_STORE_PAYLOADS keeps only flagged windows' (settings). Deferred: nothing
    # but a person diagnosing a window reads it.
    payload_gzip: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    status: Mapped[str] = mapped_column(
        String(16), nullable=False, default="pending", server_default="pending"
    )
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __mapper_args__ = {"primary_key": [id]}


class TraceChunk(Base):
    """Sampled requests for the policy simulator. `data` is the records in the columnar
    `data_format` (see hitcurve.ingest.tracecodec: "npz-v1" = numpy savez_compressed of the columns)."""

    __tablename__ = "trace_chunks"
    __table_args__ = (
        CheckConstraint(f"status IN {WORK_STATES!r}", name="status"),
        Index("ix_trace_chunks_server_start", "server_id", "window_start"),
        Index(
            "ix_trace_chunks_pending",
            "status",
            "received_at",
            postgresql_where=text("status IN ('pending','failed')"),
        ),
    )

    id: Mapped[uuid.UUID] = mapped_column(Uuid, primary_key=True)  # the agent's chunk_id
    org_id: Mapped[uuid.UUID] = org_fk()
    server_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("servers.id", ondelete="CASCADE"), nullable=False
    )
    agent_key_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("agent_keys.id", ondelete="SET NULL")
    )
    instance_id: Mapped[str] = mapped_column(String(100), nullable=False)
    seq: Mapped[int] = mapped_column(BigInteger, nullable=False)
    window_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    window_end: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    sample_rate: Mapped[float] = mapped_column(Float, nullable=False)
    record_count: Mapped[int] = mapped_column(Integer, nullable=False)
    data_format: Mapped[str] = mapped_column(String(16), nullable=False, default="npz-v1")
    data: Mapped[bytes] = mapped_column(LargeBinary, nullable=False)
    received_at: Mapped[datetime] = now_col()
    status: Mapped[str] = mapped_column(
        String(16), nullable=False, default="pending", server_default="pending"
    )
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
