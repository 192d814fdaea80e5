"""Worker output: merged and calibrated curves per server snapshot, the accuracy record, cluster
curves. Curves are PostgreSQL double precision arrays sharing one x axis (`sizes_bytes`,
strictly increasing); every y array has the same length as its x axis.

All three are partitioned by day (hitcurve.core.partitions): server curves and accuracy records on
their snapshot's window_end, cluster curves on computed_at. Keys carry the partition column and
the organization (docs/scaling.md); snapshot ids are logical references (no foreign key between
partitioned tables; the retention job removes a snapshot's rows together)."""

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    DateTime,
    Float,
    ForeignKey,
    Index,
    Integer,
    PrimaryKeyConstraint,
    String,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from hitcurve.models.base import Base
from hitcurve.models.common import FloatArray, now_col, org_fk


class ServerCurve(Base):
    __tablename__ = "server_curves"
    __table_args__ = (
        PrimaryKeyConstraint("id", "window_end", "org_id"),
        UniqueConstraint("snapshot_id", "window_end", "org_id", name="uq_server_curves_snapshot_id"),
        Index("ix_server_curves_server_window", "server_id", "window_end"),
        {"postgresql_partition_by": "RANGE (window_end)"},
    )

    id: Mapped[int] = mapped_column(BigInteger, autoincrement=True)
    org_id: Mapped[uuid.UUID] = org_fk()
    server_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("servers.id", ondelete="CASCADE"), nullable=False
    )
    snapshot_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    window_end: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    sizes_bytes: Mapped[list[float]] = mapped_column(FloatArray, nullable=False)
    hit_ratio_proportional: Mapped[list[float]] = mapped_column(
        FloatArray, nullable=False
    )  # classes keep their share
    hit_ratio_optimal: Mapped[list[float] | None] = mapped_column(FloatArray)  # best page allocation
    hit_ratio_calibrated: Mapped[list[float] | None] = mapped_column(
        FloatArray
    )  # fitted to the measured ratio
    band_low: Mapped[list[float] | None] = mapped_column(FloatArray)
    band_high: Mapped[list[float] | None] = mapped_column(FloatArray)
    current_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    measured_hit_ratio: Mapped[float | None] = mapped_column(Float)
    predicted_hit_ratio: Mapped[float | None] = mapped_column(Float)  # the curve at current_bytes
    calibration: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)
    advice: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)  # rebalancing advice
    computed_at: Mapped[datetime] = now_col()

    __mapper_args__ = {"primary_key": [id]}


class AccuracyRecord(Base):
    """The continuous accuracy record: what an earlier curve predicted for this window's
    memory versus what memcached measured in it."""

    __tablename__ = "accuracy_records"
    __table_args__ = (
        PrimaryKeyConstraint("id", "window_end", "org_id"),
        UniqueConstraint("snapshot_id", "window_end", "org_id", name="uq_accuracy_records_snapshot_id"),
        Index("ix_accuracy_records_server_window", "server_id", "window_end"),
        {"postgresql_partition_by": "RANGE (window_end)"},
    )

    id: Mapped[int] = mapped_column(BigInteger, autoincrement=True)
    org_id: Mapped[uuid.UUID] = org_fk()
    server_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("servers.id", ondelete="CASCADE"), nullable=False
    )
    snapshot_id: Mapped[uuid.UUID] = mapped_column(Uuid, nullable=False)
    # the earlier window whose curve made the prediction (may be gone after downsampling)
    predicted_from_snapshot_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)
    window_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    window_end: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    memory_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    predicted_hit_ratio: Mapped[float] = mapped_column(Float, nullable=False)
    measured_hit_ratio: Mapped[float] = mapped_column(Float, nullable=False)
    error_pp: Mapped[float] = mapped_column(Float, nullable=False)  # (predicted - measured) * 100
    basis: Mapped[str] = mapped_column(String(16), nullable=False, default="calibrated")
    computed_at: Mapped[datetime] = now_col()

    __mapper_args__ = {"primary_key": [id]}


class ClusterCurve(Base):
    """A cluster's curve from its servers' latest curves: hit ratio versus total memory, and
    versus node count at node_size_bytes."""

    __tablename__ = "cluster_curves"
    __table_args__ = (
        PrimaryKeyConstraint("id", "computed_at", "org_id"),
        Index("ix_cluster_curves_cluster_computed", "cluster_id", "computed_at"),
        {"postgresql_partition_by": "RANGE (computed_at)"},
    )

    id: Mapped[int] = mapped_column(BigInteger, autoincrement=True)
    org_id: Mapped[uuid.UUID] = org_fk()
    cluster_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("clusters.id", ondelete="CASCADE"), nullable=False
    )
    computed_at: Mapped[datetime] = now_col()
    window_end: Mapped[datetime] = mapped_column(
        DateTime(timezone=True), nullable=False
    )  # oldest input's end
    basis: Mapped[str] = mapped_column(String(16), nullable=False, default="calibrated")
    sizes_bytes: Mapped[list[float]] = mapped_column(FloatArray, nullable=False)
    hit_ratios: Mapped[list[float]] = mapped_column(FloatArray, nullable=False)
    band_low: Mapped[list[float] | None] = mapped_column(FloatArray)
    band_high: Mapped[list[float] | None] = mapped_column(FloatArray)
    current_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    measured_hit_ratio: Mapped[float | None] = mapped_column(Float)
    node_size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    node_counts: Mapped[list[int] | None] = mapped_column(ARRAY(Integer, dimensions=1))
    node_hit_ratios: Mapped[list[float] | None] = mapped_column(FloatArray)
    server_count: Mapped[int] = mapped_column(Integer, nullable=False)
    inputs: Mapped[dict[str, Any]] = mapped_column(
        JSONB, nullable=False, default=dict
    )  # server -> snapshot used

    __mapper_args__ = {"primary_key": [id]}
