"""When a subscription is due: its period ends at the latest (weekday, hour_utc) not after now."""

from __future__ import annotations

from datetime import datetime, timedelta


def period_end(now: datetime, weekday: int, hour_utc: int) -> datetime:
    """The latest moment <= now that falls on `weekday` (0 = Monday) at `hour_utc`:00 UTC."""
    at = now.replace(minute=0, second=0, microsecond=0, hour=hour_utc)
    at -= timedelta(days=(at.weekday() - weekday) % 7)
    if at > now:
        at -= timedelta(days=7)
    return at


def period_of(now: datetime, weekday: int, hour_utc: int) -> tuple[datetime, datetime]:
    end = period_end(now, weekday, hour_utc)
    return end - timedelta(days=7), end
