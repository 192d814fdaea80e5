"""Every model module is imported here so Base.metadata knows all tables (Alembic needs it)."""

from hitcurve.models.base import Base

__all__ = ["Base"]
