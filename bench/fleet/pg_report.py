"""What the fleet's uploads cost PostgreSQL, read from the instance's own statistics
over the run: pg_stat_statements (loaded by scripts/services.sh for the `fleet` instance; the
extension is created here in its own schema, `pgss`, so `public` stays the migrations'), WAL
volume and full-page images (pg_stat_wal), checkpoints (pg_stat_bgwriter) and autovacuum runs.
`begin` resets the statement statistics and returns the counters; `end` returns the differences
per accepted upload, the statements that took the most time and those that wrote the most WAL."""

from __future__ import annotations

from typing import Any

import psycopg

SCHEMA = "pgss"  # written out in the statements below
_COUNTERS = (
    "SELECT (SELECT wal_records FROM pg_stat_wal), (SELECT wal_fpi FROM pg_stat_wal),"
    " (SELECT wal_bytes FROM pg_stat_wal), checkpoints_timed, checkpoints_req, buffers_checkpoint,"
    " buffers_backend, (SELECT coalesce(sum(autovacuum_count), 0) FROM pg_stat_user_tables),"
    " (SELECT coalesce(sum(autoanalyze_count), 0) FROM pg_stat_user_tables) FROM pg_stat_bgwriter"
)
_NAMES = (
    "wal_records",
    "wal_fpi",
    "wal_bytes",
    "checkpoints_timed",
    "checkpoints_req",
    "buffers_checkpoint",
    "buffers_backend",
    "autovacuums",
    "autoanalyzes",
)
_TOP = (
    "SELECT query, calls, total_exec_time, total_plan_time, rows, shared_blks_hit, shared_blks_read,"
    " shared_blks_dirtied, wal_fpi, wal_bytes FROM pgss.pg_stat_statements"
    " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
    " ORDER BY total_exec_time + total_plan_time DESC LIMIT %s"
)
# The same statements, those that wrote the most WAL first (what the write path costs the primary).
_TOP_WAL = _TOP.replace("ORDER BY total_exec_time + total_plan_time DESC", "ORDER BY wal_bytes DESC")


def _loaded(conn: psycopg.Connection[Any]) -> bool:
    row = conn.execute("SHOW shared_preload_libraries").fetchone()
    return row is not None and "pg_stat_statements" in row[0]


def begin(url: str) -> dict[str, Any]:
    """The counters now; the statement statistics reset (when the library is loaded)."""
    with psycopg.connect(url, autocommit=True) as conn:
        statements = _loaded(conn)
        if statements:
            conn.execute(f"CREATE SCHEMA IF NOT EXISTS {SCHEMA}")
            conn.execute(f"CREATE EXTENSION IF NOT EXISTS pg_stat_statements SCHEMA {SCHEMA}")
            conn.execute(f"SELECT {SCHEMA}.pg_stat_statements_reset()")
        row = conn.execute(_COUNTERS).fetchone()
        assert row is not None
        settings = dict(
            conn.execute(
                "SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY(%s)",
                (
                    [
                        "fsync",
                        "synchronous_commit",
                        "full_page_writes",
                        "wal_compression",
                        "shared_buffers",
                        "max_wal_size",
                        "checkpoint_timeout",
                        "autovacuum",
                    ],
                ),
            ).fetchall()
        )
    return {
        "counters": dict(zip(_NAMES, map(int, row), strict=True)),
        "statements": statements,
        "settings": settings,
    }


def end(url: str, start: dict[str, Any], uploads: int, top: int = 12) -> dict[str, Any]:
    """Per accepted upload: WAL records, full-page images and bytes, buffers written by
    checkpoints and by backends; checkpoints and autovacuum runs in all; the `top` statements by
    time (execution + planning) with their calls, ms, rows and WAL per upload."""
    n = max(1, uploads)
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(_COUNTERS).fetchone()
        assert row is not None
        delta = {k: int(v) - start["counters"][k] for k, v in zip(_NAMES, row, strict=True)}
        out: dict[str, Any] = {
            "settings": start["settings"],
            "per_upload": {
                "wal_records": round(delta["wal_records"] / n, 1),
                "wal_fpi": round(delta["wal_fpi"] / n, 2),
                "wal_kb": round(delta["wal_bytes"] / n / 1e3, 1),
                "buffers_checkpoint": round(delta["buffers_checkpoint"] / n, 2),
                "buffers_backend": round(delta["buffers_backend"] / n, 2),
            },
            "in_all": {
                k: delta[k] for k in ("checkpoints_timed", "checkpoints_req", "autovacuums", "autoanalyzes")
            },
        }
        if start["statements"]:
            out["statements"] = [_statement(r, n) for r in conn.execute(_TOP, (top,))]
            out["statements_by_wal"] = [_statement(r, n) for r in conn.execute(_TOP_WAL, (top,))]
            wal = conn.execute(
                "SELECT coalesce(sum(wal_bytes), 0), coalesce(sum(wal_records), 0)"
                " FROM pgss.pg_stat_statements"
                " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ).fetchone()
            assert wal is not None
            out["statement_wal_kb_per_upload"] = round(float(wal[0]) / n / 1e3, 1)
            out["statement_wal_records_per_upload"] = round(float(wal[1]) / n, 1)
            total = conn.execute(
                "SELECT sum(total_exec_time + total_plan_time) FROM pgss.pg_stat_statements"
                " WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())"
            ).fetchone()
            out["statement_ms_per_upload"] = round(float((total or [0])[0] or 0) / n, 2)
    return out


def _statement(row: Any, n: int) -> dict[str, Any]:
    """One pg_stat_statements row (_TOP's columns) per upload."""
    q, calls, exec_ms, plan_ms, rows, hit, read, dirtied, wfpi, wbytes = row
    return {
        "query": " ".join(q.split())[:160],
        "calls_per_upload": round(calls / n, 3),
        "ms_per_upload": round((exec_ms + plan_ms) / n, 3),
        "plan_ms_per_upload": round(plan_ms / n, 3),
        "ms_per_call": round((exec_ms + plan_ms) / max(1, calls), 3),
        "rows_per_call": round(rows / max(1, calls), 1),
        "blocks_hit_read_dirtied_per_upload": [round(x / n, 1) for x in (hit, read, dirtied)],
        "wal_kb_per_upload": round(float(wbytes) / n / 1e3, 2),
        "wal_fpi_per_upload": round(wfpi / n, 3),
    }


def _line(s: dict[str, Any]) -> str:
    return (
        f"  {s['ms_per_upload']:7.3f} ms/upload {s['calls_per_upload']:6.3f} calls/upload"
        f" {s['wal_kb_per_upload']:6.2f} KB WAL {s['wal_fpi_per_upload']:5.2f} FPI"
        f"  {s['query'][:100]}"
    )


def lines(report: dict[str, Any]) -> list[str]:
    """The report as a few printable lines."""
    out = [
        "postgresql: " + ", ".join(f"{k} {v}" for k, v in report["settings"].items()),
        "postgresql per upload: " + ", ".join(f"{k} {v}" for k, v in report["per_upload"].items()),
        "postgresql in all: " + ", ".join(f"{k} {v}" for k, v in report["in_all"].items()),
    ]
    if "statements" in report:
        out.append(f"statements: {report['statement_ms_per_upload']} ms per upload in all; the most:")
        out.extend(_line(s) for s in report["statements"])
    if "statements_by_wal" in report:
        out.append(
            f"statements: {report['statement_wal_kb_per_upload']} KB of WAL"
            f" ({report['statement_wal_records_per_upload']} records) per upload in all; the most WAL:"
        )
        out.extend(_line(s) for s in report["statements_by_wal"])
    return out
