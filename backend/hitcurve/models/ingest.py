"""What agents upload: snapshots (with one row per slab class) and sampled trace chunks.

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
    SmallInteger,
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
    # The validated upload as the agent sent it, gzip-compressed JSON (the request body itself when
    # it came gzip). Stored as bytes, not JSONB: PostgreSQL neither parses nor re-compresses it
    # (storage EXTERNAL), which halves its CPU per upload. NULL once retention dropped it. Deferred:
    # the worker reads the per-class rows, never this.
    payload_gzip: Mapped[bytes | None] = mapped_column(LargeBinary, deferred=True)
    status: Mapped[str] = mapped_column(
        String(16), nullable=False, default="pending", server_default="pending"
    )
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    processed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))

    __mapper_args__ = {"primary_key": [id]}


class SnapshotClass(Base):
    """One slab class of a snapshot: its LRU curve over items (sizes) and its merge weight.

    Partitioned by day on its snapshot's window_end like snapshots; snapshot_id is a logical
    reference (no foreign key between partitioned tables: the retention job removes a snapshot's
    rows from every table together, the worker's hourly housekeeping)."""

    __tablename__ = "snapshot_classes"
    __table_args__ = (
        PrimaryKeyConstraint("snapshot_id", "class_id", "window_end", "org_id"),
        {"postgresql_partition_by": "RANGE (window_end)"},
    )

    org_id: Mapped[uuid.UUID] = org_fk()
    snapshot_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    window_end: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)  # the snapshot's
    class_id: Mapped[int] = mapped_column(SmallInteger, nullable=False)
    chunk_size: Mapped[int] = mapped_column(Integer, nullable=False)
    pages: Mapped[int] = mapped_column(Integer, nullable=False)
    items: Mapped[int] = mapped_column(BigInteger, nullable=False)
    evictions: Mapped[int] = mapped_column(BigInteger, nullable=False)
    requests: Mapped[int] = mapped_column(BigInteger, nullable=False)
    current_items: Mapped[int] = mapped_column(BigInteger, nullable=False)
    # The curve: sizes in items (strictly increasing) and hit ratios (non-decreasing), same length.
    sizes_items: Mapped[list[float]] = mapped_column(FloatArray, nullable=False)
    hit_ratios: Mapped[list[float]] = mapped_column(FloatArray, nullable=False)
    # the class's curve with expiry modelled (SHARDS++, sizes of its own); NULL if not sent
    ttl_sizes_items: Mapped[list[float] | None] = mapped_column(FloatArray)
    ttl_hit_ratios: Mapped[list[float] | None] = mapped_column(FloatArray)
    # the class's `curve.ghost_reach_items` (how far its ghost sees, in items) and
    # `curve.ghost_filters`; NULL when not sent (older agents). The worker's ghost_reach_bytes.
    ghost_reach_items: Mapped[int | None] = mapped_column(BigInteger)
    ghost_filters: Mapped[int | None] = mapped_column(SmallInteger)
    cost_count: Mapped[int | None] = mapped_column(BigInteger)
    cost_mean_us: Mapped[float | None] = mapped_column(Float)
    cost_p50_us: Mapped[float | None] = mapped_column(Float)
    cost_p90_us: Mapped[float | None] = mapped_column(Float)
    cost_p99_us: Mapped[float | None] = mapped_column(Float)

    __mapper_args__ = {"primary_key": [snapshot_id, class_id]}


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
