"""The time-partitioned tables: which they are, how their daily partitions are named,
and creating, listing and dropping them. PostgreSQL declarative partitioning, RANGE on a time
column, one partition per UTC day per table, never per tenant.

Partitions live in their own schema (`partitions`, so the application schema lists only the
parent tables) and are named `<table>_pYYYYMMDD`. Every table's partition of a day has the same
bounds, so a day's snapshots, class curves, server curves and accuracy records are dropped
together. There is no DEFAULT partition: with one, PostgreSQL cannot read the partitions in
time order, and "latest curve of a server" would probe every partition instead of the newest.
So a row whose day has no partition is refused; partitions are created ahead by the worker's
hourly housekeeping job, and an upload that finds its day missing creates it
(`ensure`, idempotent) and retries once (crud.ingest).

Creating a partition is CREATE TABLE + ATTACH PARTITION (with a CHECK constraint matching the
bounds, so the attach scans nothing): it takes a SHARE UPDATE EXCLUSIVE lock on the parent,
which does not block reads or writes. Dropping takes an ACCESS EXCLUSIVE lock briefly;
`lock_timeout` bounds the wait (the job tries again next hour)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from sqlalchemy import text

SCHEMA = "partitions"
# table -> its partition column
PARTITIONED: dict[str, str] = {
    "snapshots": "window_end",
    "server_curves": "window_end",
    "accuracy_records": "window_end",
    "cluster_curves": "computed_at",
}
_NAME = re.compile(r"^(?P<table>[a-z_]+)_p(?P<day>\d{8})$")
LOCK_TIMEOUT = "5s"


def day_of(t: datetime) -> date:
    return t.astimezone(UTC).date()


def start_of(day: date) -> datetime:
    return datetime.combine(day, time(0), tzinfo=UTC)


def name(table: str, day: date) -> str:
    return f"{table}_p{day:%Y%m%d}"


def days(first: date, last: date) -> list[date]:
    return [first + timedelta(days=i) for i in range((last - first).days + 1)]


def existing(conn: Any, table: str) -> dict[date, str]:
    """The day partitions of `table`: day -> partition name."""
    rows = conn.execute(
        text(
            "SELECT c.relname FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid"
            " JOIN pg_class p ON p.oid = i.inhparent JOIN pg_namespace n ON n.oid = p.relnamespace"
            " WHERE p.relname = :t AND n.nspname = current_schema()"
        ),
        {"t": table},
    ).scalars()
    out: dict[date, str] = {}
    for rel in rows:
        m = _NAME.match(rel)
        if m and m["table"] == table:
            out[datetime.strptime(m["day"], "%Y%m%d").date()] = rel
    return out


def ensure(
    conn: Any, wanted: Iterable[date], tables: Iterable[str] | Mapping[str, str] = tuple(PARTITIONED)
) -> list[str]:
    """Create the missing day partitions of `tables` for the `wanted` days; returns what it made.
    `tables`: names of PARTITIONED, or table -> partition column (a migration's tables as of
    its revision).

    Idempotent. Creators are serialised by a transaction-level advisory lock taken only when
    something is missing (the worker's job and an upload that found its day missing may meet):
    the second one waits for the first's commit, then finds the partitions there. Runs in the
    caller's transaction."""
    made: list[str] = []
    wanted = sorted(set(wanted))
    columns = dict(tables) if isinstance(tables, Mapping) else {t: PARTITIONED[t] for t in tables}
    tables = tuple(columns)
    if all(day in existing(conn, t) for t in tables for day in wanted):
        return made
    conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('hitcurve.partitions'))"))
    conn.execute(text(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}"))
    for table in tables:
        column = columns[table]
        have = existing(conn, table)
        for day in wanted:
            if day in have:
                continue
            part = name(table, day)
            lo, hi = start_of(day).isoformat(), start_of(day + timedelta(days=1)).isoformat()
            conn.execute(
                text(
                    f"CREATE TABLE IF NOT EXISTS {SCHEMA}.{part}"
                    f" (LIKE public.{table} INCLUDING DEFAULTS INCLUDING CONSTRAINTS INCLUDING STORAGE,"
                    f" CONSTRAINT {part}_bounds CHECK ({column} >= '{lo}' AND {column} < '{hi}'))"
                )
            )
            conn.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
            conn.execute(
                text(
                    f"ALTER TABLE public.{table} ATTACH PARTITION {SCHEMA}.{part}"
                    f" FOR VALUES FROM ('{lo}') TO ('{hi}')"
                )
            )
            made.append(part)
    return made


def drop(conn: Any, table: str, day: date) -> bool:
    """Drop `table`'s partition of `day` (its rows go with it); False if there was none."""
    part = name(table, day)
    if conn.execute(text("SELECT to_regclass(:q) IS NULL"), {"q": f"{SCHEMA}.{part}"}).scalar_one():
        return False
    conn.execute(text(f"SET LOCAL lock_timeout = '{LOCK_TIMEOUT}'"))
    conn.execute(text(f"DROP TABLE {SCHEMA}.{part}"))
    return True


def comment(conn: Any, table: str, day: date) -> str | None:
    """The note a partition carries (the retention job records what it did to the day there)."""
    return conn.execute(
        text("SELECT obj_description(to_regclass(:q), 'pg_class')"), {"q": f"{SCHEMA}.{name(table, day)}"}
    ).scalar_one_or_none()


def set_comment(conn: Any, table: str, day: date, note: str) -> None:
    conn.execute(
        text(f"COMMENT ON TABLE {SCHEMA}.{name(table, day)} IS " + "'" + note.replace("'", "''") + "'")
    )


def missing_partition(exc: BaseException) -> bool:
    """Whether a database error says a row's day has no partition ("no partition of relation
    ... found for row", SQLSTATE 23514)."""
    orig = getattr(exc, "orig", exc)
    return getattr(orig, "sqlstate", None) == "23514" and "no partition of relation" in str(orig)
