"""Notification channels of an organization and the delivery of each alert state change to them."""

import uuid
from datetime import datetime

from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    DateTime,
    ForeignKey,
    Index,
    Integer,
    SmallInteger,
    String,
    Text,
    UniqueConstraint,
    Uuid,
)
from sqlalchemy.orm import Mapped, mapped_column

from hitcurve.models.base import Base
from hitcurve.models.common import now_col, org_fk, uuid_pk

CHANNEL_KINDS = ("webhook", "slack", "pagerduty", "alertmanager")
DELIVERY_EVENTS = ("opened", "resolved", "test")
DELIVERY_STATES = ("pending", "retrying", "delivered", "failed")
SEVERITIES = ("info", "warning", "critical")


class NotificationChannel(Base):
    """Where an organization's alerts go. `secret` signs generic webhooks (HMAC-SHA256, so it is
    kept as is, not hashed; shown once when the channel is created); `routing_key` is the
    PagerDuty integration key. Alerts below `min_severity` are not sent."""

    __tablename__ = "notification_channels"
    __table_args__ = (
        CheckConstraint(f"kind IN {CHANNEL_KINDS!r}", name="kind"),
        CheckConstraint(f"min_severity IN {SEVERITIES!r}", name="min_severity"),
        UniqueConstraint("org_id", "name", name="uq_notification_channels_name"),
    )

    id: Mapped[uuid.UUID] = uuid_pk()
    org_id: Mapped[uuid.UUID] = org_fk()
    name: Mapped[str] = mapped_column(String(100), nullable=False)
    kind: Mapped[str] = mapped_column(String(16), nullable=False)
    url: Mapped[str] = mapped_column(Text, nullable=False)
    secret: Mapped[str | None] = mapped_column(String(128))
    routing_key: Mapped[str | None] = mapped_column(String(128))
    min_severity: Mapped[str] = mapped_column(String(16), nullable=False, default="warning")
    enabled: Mapped[bool] = mapped_column(Boolean, nullable=False, default=True)
    created_at: Mapped[datetime] = now_col()
    created_by: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("users.id", ondelete="SET NULL"))


class AlertDelivery(Base):
    """One alert state change (opened/resolved) for one channel, or a test message. The unique
    (channel, alert, event) makes a state change deliverable once per channel however often the
    worker's task runs; tests have no alert and are never retried."""

    __tablename__ = "alert_deliveries"
    __table_args__ = (
        CheckConstraint(f"event IN {DELIVERY_EVENTS!r}", name="event"),
        CheckConstraint(f"status IN {DELIVERY_STATES!r}", name="status"),
        CheckConstraint("(alert_id IS NULL) = (event = 'test')", name="alert_or_test"),
        UniqueConstraint("channel_id", "alert_id", "event", name="uq_alert_deliveries_change"),
        Index("ix_alert_deliveries_channel", "channel_id", "created_at"),
        Index(
            "ix_alert_deliveries_due", "next_attempt_at", postgresql_where="status IN ('pending', 'retrying')"
        ),
    )

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    org_id: Mapped[uuid.UUID] = org_fk()
    channel_id: Mapped[uuid.UUID] = mapped_column(
        Uuid, ForeignKey("notification_channels.id", ondelete="CASCADE"), nullable=False
    )
    alert_id: Mapped[uuid.UUID | None] = mapped_column(Uuid, ForeignKey("alerts.id", ondelete="CASCADE"))
    event: Mapped[str] = mapped_column(String(16), nullable=False)
    key: Mapped[str] = mapped_column(String(64), nullable=False, unique=True)  # X-Hitcurve-Delivery
    status: Mapped[str] = mapped_column(
        String(16), nullable=False, default="pending", server_default="pending"
    )
    attempts: Mapped[int] = mapped_column(Integer, nullable=False, default=0, server_default="0")
    response_code: Mapped[int | None] = mapped_column(SmallInteger)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = now_col()
    next_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    last_attempt_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    delivered_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))


class InstallSettings(Base):
    """Settings of the whole install (one row, id 1), changed without a restart by its
    administrators (Settings.admin_emails, in the dashboard) or on the host
    (`python -m hitcurve.notify.install_admin`). allow_private_webhooks: notification channels may target
    private, loopback and link-local addresses (hitcurve.notify.outbound); off, the default, they
    are refused. HITCURVE_ALLOW_PRIVATE_WEBHOOKS=true allows them whatever the row says."""

    __tablename__ = "install_settings"
    __table_args__ = (CheckConstraint("id = 1", name="one_row"),)

    id: Mapped[int] = mapped_column(SmallInteger, primary_key=True, default=1)
    allow_private_webhooks: Mapped[bool] = mapped_column(
        Boolean, nullable=False, default=False, server_default="false"
    )
    changed_at: Mapped[datetime | None] = mapped_column(DateTime(timezone=True))
    changed_by: Mapped[str | None] = mapped_column(String(320))  # the e-mail, or "host" for the command
