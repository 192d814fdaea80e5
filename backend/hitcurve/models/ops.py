"""Alerts, policy simulation runs and results, weekly report subscriptions, the audit log."""

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
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    Uuid,
    text,
)
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from hitcurve.models.base import Base
from hitcurve.models.common import now_col, org_fk, uuid_pk

ALERT_SEVERITIES = ("info", "warning", "critical")
ALERT_STATES = ("open", "resolved")
RUN_STATES = ("pending", "running", "done", "failed")
NIL_UUID = "00000000-0000-0000-0000-000000000000"


class Alert(Base):
    """At most one open alert per (org, kind, subject): the worker updates last_seen_at of the
    open one instead of inserting another (enforced by a partial unique index)."""

    __tablename__ = "alerts"
    __table_args__ = (
        CheckConstraint(f"severity IN {ALERT_SEVERITIES!r}", name="severity"),
        CheckConstraint(f"state IN {ALERT_STATES!r}", name="state"),
        Index(
            "uq_alerts_open_subject",
            "org_id",
            "kind",
            text(f"coalesce(cluster_id, '{NIL_UUID}'::uuid)"),
            text(f"coalesce(server_id, '{NIL_UUID}'::uuid)"),
            unique=True,
            postgresql_where=text("state = 'open'"),
        ),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = org_fk()
    # a deleted cluster's alerts stay, resolved, named by details["cluster_name"] (crud.inventory)
    cluster_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("clusters.id", ondelete="SET NULL"))
    server_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("servers.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(
        String(64), nullable=False
    )  # e.g. below_target, stream_loss, stale_agent
    severity: Mapped[str] = mapped_column(String(16), nullable=False)
    message: Mapped[str] = mapped_column(Text, nullable=False)
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)
    state: Mapped[str] = mapped_column(String(16), nullable=False, default="open", server_default="open")
    first_seen_at: Mapped[datetime] = now_col()
    last_seen_at: Mapped[datetime] = now_col()
    resolved_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    acknowledged_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    acknowledged_by: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("users.id", ondelete="SET NULL")
    )


class SimulationRun(Base):
    """A request to replay a subject's sampled traces through replacement policies at sizes."""

    __tablename__ = "simulation_runs"
    __table_args__ = (
        CheckConstraint(f"status IN {RUN_STATES!r}", name="status"),
        CheckConstraint("progress >= 0 AND progress <= 1", name="progress"),
        CheckConstraint("(cluster_id IS NULL) <> (server_id IS NULL)", name="one_subject"),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = org_fk()
    cluster_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("clusters.id", ondelete="CASCADE"))
    server_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("servers.id", ondelete="CASCADE"))
    policies: Mapped[list[str]] = mapped_column(ARRAY(String(32), dimensions=1), nullable=False)
    sizes_bytes: Mapped[list[int]] = mapped_column(ARRAY(BigInteger, dimensions=1), nullable=False)
    window_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    window_end: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    status: Mapped[str] = mapped_column(
        String(16), nullable=False, default="pending", server_default="pending"
    )
    progress: Mapped[float] = mapped_column(Float, nullable=False, default=0.0, server_default="0")
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    requested_by: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("users.id", ondelete="SET NULL"))
    requested_by_token: Mapped[uuid.UUID | None] = mapped_column(
        Uuid, ForeignKey("api_tokens.id", ondelete="SET NULL")
    )
    created_at: Mapped[datetime] = now_col()
    enqueued_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    started_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    finished_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class SimulationResult(Base):
    __tablename__ = "simulation_results"
    __table_args__ = (UniqueConstraint("run_id", "policy", "size_bytes", name="uq_simulation_results_cell"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    org_id: Mapped[uuid.UUID] = org_fk()
    run_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("simulation_runs.id", ondelete="CASCADE"), nullable=False, index=True
    )
    policy: Mapped[str] = mapped_column(String(32), nullable=False)
    size_bytes: Mapped[int] = mapped_column(BigInteger, nullable=False)
    hit_ratio: Mapped[float] = mapped_column(Float, nullable=False)
    byte_hit_ratio: Mapped[float | None] = mapped_column(Float)
    recompute_cost_total_us: Mapped[float | None] = mapped_column(Float)
    recompute_cost_p99_us: Mapped[float | None] = mapped_column(Float)
    requests: Mapped[int] = mapped_column(BigInteger, nullable=False)
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)
    computed_at: Mapped[datetime] = now_col()


class ReportSubscription(Base):
    """A weekly e-mail report to `email` about one cluster (or the whole org when cluster_id is null),
    sent once the recipient confirmed (confirmed_at)."""

    __tablename__ = "report_subscriptions"
    __table_args__ = (
        CheckConstraint("weekday >= 0 AND weekday <= 6", name="weekday"),
        CheckConstraint("hour_utc >= 0 AND hour_utc <= 23", name="hour_utc"),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = org_fk()
    user_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("users.id", ondelete="CASCADE"))
    cluster_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("clusters.id", ondelete="CASCADE"))
    email: Mapped[str] = mapped_column(String(320), nullable=False)
    weekday: Mapped[int] = mapped_column(SmallInteger, nullable=False, default=0)  # 0 = Monday
    hour_utc: Mapped[int] = mapped_column(SmallInteger, nullable=False, default=8)
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    created_at: Mapped[datetime] = now_col()
    last_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    # No report goes out before its recipient confirmed: the signed link of the confirmation mail,
    # or the subscribing user's own address (proved at sign-up). A changed address starts over.
    confirmed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    confirmation_sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class ReportDelivery(Base):
    """One sent (or failed) report per subscription and period; the unique key makes sending idempotent."""

    __tablename__ = "report_deliveries"
    __table_args__ = (
        UniqueConstraint("subscription_id", "period_start", name="uq_report_deliveries_period"),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    org_id: Mapped[uuid.UUID] = org_fk()
    subscription_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("report_subscriptions.id", ondelete="CASCADE"), nullable=False
    )
    period_start: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    period_end: Mapped[datetime] = mapped_column(DateTime(timezone=True), nullable=False)
    status: Mapped[str] = mapped_column(String(16), nullable=False, default="pending")
    error: Mapped[str | None] = mapped_column(Text)
    sent_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    created_at: Mapped[datetime] = now_col()


class AuditLog(Base):
    """Security-relevant actions. org_id is null only for events with no organization yet
    (e.g. a failed log-in for an unknown e-mail)."""

    __tablename__ = "audit_log"
    __table_args__ = (Index("ix_audit_log_org_at", "org_id", "at"),)

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    org_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("organizations.id", ondelete="CASCADE"))
    actor_user_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("users.id", ondelete="SET NULL"))
    actor_key_id: Mapped[uuid.UUID | None] = mapped_column(Uuid)  # agent key or API token id
    action: Mapped[str] = mapped_column(String(64), nullable=False)
    target_type: Mapped[str | None] = mapped_column(String(32))
    target_id: Mapped[str | None] = mapped_column(String(64))
    ip: Mapped[str | None] = mapped_column(String(64))
    details: Mapped[dict[str, Any]] = mapped_column(JSONB, nullable=False, default=dict)
    at: Mapped[datetime] = now_col()
