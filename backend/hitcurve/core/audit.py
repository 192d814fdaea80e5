"""Audit log writes: called inside the transaction of the action they record."""

import uuid
from typing import Any

from sqlalchemy.orm import Session

from hitcurve.models import AuditLog


def audit(
    db: Session,
    action: str,
    *,
    org_id: uuid.UUID | None = None,
    user_id: uuid.UUID | None = None,
    key_id: uuid.UUID | None = None,
    target_type: str | None = None,
    target_id: Any = None,
    ip: str | None = None,
    **details: Any,
) -> None:
    db.add(
        AuditLog(
            org_id=org_id,
            actor_user_id=user_id,
            actor_key_id=key_id,
            action=action,
            target_type=target_type,
            target_id=None if target_id is None else str(target_id),
            ip=ip,
            details=details,
        )
    )
