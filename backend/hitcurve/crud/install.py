"""The install's own settings (one row, models.InstallSettings): whether notification channels
may target private addresses, read at each channel save and before each send, so a change takes
effect without a restart. Off unless an administrator or the host turned it on, or the
environment (HITCURVE_ALLOW_PRIVATE_WEBHOOKS=true) allows it for good."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.orm import Session

from hitcurve.core.config import get_settings
from hitcurve.models import InstallSettings

ENV_VAR = "HITCURVE_ALLOW_PRIVATE_WEBHOOKS"


@dataclass(frozen=True)
class PrivateWebhooks:
    allowed: bool  # what the address check applies
    stored: bool  # the install setting
    from_environment: bool  # allowed by ENV_VAR whatever the setting says
    changed_at: datetime | None
    changed_by: str | None


def admins() -> set[str]:
    return {e.strip().lower() for e in get_settings().admin_emails.split(",") if e.strip()}


def is_admin(email: str | None) -> bool:
    return email is not None and email.lower() in admins()


def private_webhooks(db: Session) -> PrivateWebhooks:
    row = db.get(InstallSettings, 1)
    env = get_settings().allow_private_webhooks
    stored = bool(row and row.allow_private_webhooks)
    return PrivateWebhooks(
        env or stored, stored, env, row.changed_at if row else None, row.changed_by if row else None
    )


def private_webhooks_allowed(db: Session) -> bool:
    return private_webhooks(db).allowed


def set_private_webhooks(db: Session, allow: bool, by: str) -> None:
    """Store the setting (in the caller's transaction)."""
    at = datetime.now(UTC)
    values = {"allow_private_webhooks": allow, "changed_at": at, "changed_by": by}
    db.execute(
        insert(InstallSettings)
        .values(id=1, **values)
        .on_conflict_do_update(index_elements=[InstallSettings.id], set_=values)
    )
    db.expire_all()
