"""One row of an organization by id, the lookup behind every `/{id}` endpoint: an unknown id and
another organization's id answer the same 404, so no caller can tell them apart. And all of an
organization's rows of a small settings table, oldest first."""

import uuid
from typing import TypeVar

from sqlalchemy import select
from sqlalchemy.orm import Session

from hitcurve.core.domain import NotFound
from hitcurve.models.base import Base

M = TypeVar("M", bound=Base)


def owned(db: Session, model: type[M], org_id: uuid.UUID, row_id: uuid.UUID, what: str) -> M:
    """The row of `model` with this id in this organization, else 404 "<what> not found"."""
    table_id, table_org = getattr(model, "id"), getattr(model, "org_id")  # noqa: B009 (any tenant table)
    row = db.execute(select(model).where(table_id == row_id, table_org == org_id)).scalar_one_or_none()
    if row is None:
        raise NotFound(what)
    return row


def org_rows(db: Session, model: type[M], org_id: uuid.UUID) -> list[M]:
    """Every row of `model` in this organization, oldest first (channels, subscriptions)."""
    table_org, created = getattr(model, "org_id"), getattr(model, "created_at")  # noqa: B009
    return list(db.execute(select(model).where(table_org == org_id).order_by(created)).scalars())
