"""Clusters (named groups of servers with a price and a target) and memcached servers."""

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    CheckConstraint,
    DateTime,
    Float,
    ForeignKey,
    String,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from hitcurve.models.base import Base
from hitcurve.models.common import now_col, org_fk, uuid_pk


class Cluster(Base):
    __tablename__ = "clusters"
    __table_args__ = (
        UniqueConstraint("org_id", "name", name="uq_clusters_org_name"),
        CheckConstraint("target_hit_ratio >= 0 AND target_hit_ratio <= 1", name="target_hit_ratio"),
        CheckConstraint("price_per_gb_month >= 0", name="price"),
        CheckConstraint("miss_cost_per_million IS NULL OR miss_cost_per_million >= 0", name="miss_cost"),
        CheckConstraint("cpu_price_per_hour IS NULL OR cpu_price_per_hour >= 0", name="cpu_price"),
        CheckConstraint("miss_cost_source IN ('entered', 'measured')", name="miss_cost_source"),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = org_fk()
    name: Mapped[str] = mapped_column(String(200), nullable=False)
    price_per_gb_month: Mapped[float] = mapped_column(Float, nullable=False, default=0.0)
    target_hit_ratio: Mapped[float] = mapped_column(Float, nullable=False, default=0.9)
    # Memory of one node, used by "how many nodes" answers when the caller gives none.
    node_size_bytes: Mapped[int | None] = mapped_column(BigInteger)
    # What a miss costs (hitcurve.cost): "entered" reads miss_cost_per_million (money per million
    # misses); "measured" prices the agents' mean miss-to-set time as CPU time at cpu_price_per_hour.
    miss_cost_per_million: Mapped[float | None] = mapped_column(Float)
    cpu_price_per_hour: Mapped[float | None] = mapped_column(Float)
    miss_cost_source: Mapped[str] = mapped_column(
        String(16), nullable=False, default="entered", server_default="entered"
    )
    # Prefixes whose misses cost apart from the rest: {prefix: money per million misses}
    # (hitcurve.cost.prefixes; at most cost.prefixes.MAX_PRICED_PREFIXES, checked by the API).
    prefix_miss_costs: Mapped[dict[str, float] | None] = mapped_column(JSONB)
    created_at: Mapped[datetime] = now_col()
    updated_at: Mapped[datetime] = now_col()


class Server(Base):
    """One memcached server, registered on the first upload that names its address."""

    __tablename__ = "servers"
    __table_args__ = (UniqueConstraint("org_id", "address", name="uq_servers_org_address"),)

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = org_fk()
    cluster_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("clusters.id", ondelete="SET NULL"), index=True
    )
    address: Mapped[str] = mapped_column(String(300), nullable=False)
    instance_id: Mapped[str] = mapped_column(String(100), nullable=False)
    # Null until the first snapshot (a trace chunk may register a server before it).
    version: Mapped[str | None] = mapped_column(String(64))
    limit_maxbytes: Mapped[int | None] = mapped_column(BigInteger)
    settings: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)
    hostname: Mapped[str | None] = mapped_column(String(255))
    agent_version: Mapped[str | None] = mapped_column(String(64))
    agent_key_id: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("agent_keys.id", ondelete="SET NULL")
    )
    first_seen_at: Mapped[datetime] = now_col()
    last_seen_at: Mapped[datetime] = now_col()
    last_snapshot_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
