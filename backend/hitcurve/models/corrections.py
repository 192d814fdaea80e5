"""Worker output: per server, how much memcached's segmented LRU gains over plain LRU below today's
memory, and over the agent's eviction-fed ghost view above it, simulated on the server's sampled
trace by the worker's policy correction. One row per server,
replaced when enough new trace has arrived; `status` 'insufficient' keeps the reason when there
was too little trace to trust."""

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, CheckConstraint, DateTime, Float, ForeignKey, Integer, String, Text, Uuid
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from hitcurve.models.base import Base
from hitcurve.models.common import FloatArray, now_col, org_fk

CORRECTION_STATES = ("ok", "insufficient")


class PolicyCorrection(Base):
    __tablename__ = "policy_corrections"
    __table_args__ = (CheckConstraint(f"status IN {CORRECTION_STATES!r}", name="status"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    org_id: Mapped[uuid.UUID] = org_fk()
    server_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("servers.id", ondelete="CASCADE"), nullable=False, unique=True
    )
    status: Mapped[str] = mapped_column(String(16), nullable=False)
    reason: Mapped[str | None] = mapped_column(Text)  # why not 'ok'
    policy: Mapped[str] = mapped_column(String(32), nullable=False)  # the simulated memcached policy
    computed_at: Mapped[datetime] = now_col()
    # The trace used: chunk windows, and the newest received_at among its chunks (chunks received
    # later count as new trace for the next recomputation).
    trace_start: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    trace_end: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    received_through: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    chunks: Mapped[int] = mapped_column(Integer, nullable=False, default=0)
    sample_rate: Mapped[float | None] = mapped_column(Float)
    sampled_requests: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)  # replayed
    sampled_gets: Mapped[int] = mapped_column(BigInteger, nullable=False, default=0)  # reads counted
    warmup: Mapped[float | None] = mapped_column(Float)  # share of the replay not counted
    sample_adjust: Mapped[float | None] = mapped_column(Float)  # sampled / expected reads (SHARDS_adj)
    reference_bytes: Mapped[int | None] = mapped_column(BigInteger)  # the server's memory then
    reference_items: Mapped[int | None] = mapped_column(BigInteger)  # and its items
    # Same length: memory each simulated size stands for, LRU and the policy's hit ratio there.
    sizes_bytes: Mapped[list[float] | None] = mapped_column(FloatArray)
    hit_ratio_lru: Mapped[list[float] | None] = mapped_column(FloatArray)
    hit_ratio_policy: Mapped[list[float] | None] = mapped_column(FloatArray)
    # ...and the agent's view there (memcached at reference_items plus the ghost of its evictions;
    # the policy's value up to the reference). NULL on rows stored before revision 0014: no lift.
    hit_ratio_ghost_view: Mapped[list[float] | None] = mapped_column(FloatArray)
    notes: Mapped[list[Any]] = mapped_column(JSONB, nullable=False, default=list)
