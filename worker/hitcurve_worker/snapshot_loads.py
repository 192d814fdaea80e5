"""The inputs of a batch of snapshots (a drain's claim, or process_snapshot's one), one statement
per kind for the whole batch: the slab classes, the previous curve, the band's history, the
server's facts and memcached's fill, each keyed by the snapshot's position in the batch; and a
cluster's, one statement per kind for all its members (cluster_windows, member_fills).

Why (bench/results/2026-11-27-fleet-fifth-pass.md): a drain's batch of 50 made ~9 round trips per
snapshot through SQLAlchemy; each costs the worker ~0.3-0.5 ms of CPU around a statement
PostgreSQL answers in far less. A claim takes one window per server, so the snapshots of a batch
are of different servers and their look-backs are independent: what one snapshot of the batch
stores is never another's input (a batch of one server's windows is refused, `one_per_server`).
Every statement bounds the partition column on both sides: each snapshot's own bound in its
LATERAL look-back, and the batch's widest as parameters (`floor`; `ceil`, its newest window, for
what came before a window; `horizon`, the latest window an upload can have, for what may be newer),
so PostgreSQL plans only those days. Without an upper bound a look-back also planned and opened
the 7 empty day partitions made ahead of time, for each of its tables: EXPLAIN ANALYZE of the
previous-curve and history look-backs of 3 snapshots on bench/fleet's data took 3.3-21.9 ms to
execute (load 10-20), 0.1-0.35 ms bounded. Curves travel as binary float8 arrays (`array_send`,
hitcurve.core.pgarray)."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, text, true
from sqlalchemy.orm import Session

from hitcurve.crud import curves as curves_crud
from hitcurve.ingest.classpack import unpack_columns
from hitcurve.models import PolicyCorrection, Server, ServerCurve, Snapshot
from hitcurve.schemas.agent import MAX_FUTURE
from hitcurve_worker.cluster_pipeline import MemberWindow
from hitcurve_worker.merge import ClassRow

# The batch's (server, window end) pairs, numbered from 1 in the batch's order (k.i).
_KEYS = (
    "k AS (SELECT * FROM unnest(CAST(:servers AS uuid[]), CAST(:ends AS timestamptz[]))"
    " WITH ORDINALITY AS k(server_id, window_end, i))"
)


def one_per_server(snaps: Sequence[Any]) -> None:
    """A batch holds one window per server (a drain's claim does): its windows' look-backs are
    then independent of what the batch stores."""
    if len({s.server_id for s in snaps}) != len(snaps):
        raise ValueError("a batch holds at most one window per server")


# Past the newest window an upload can have (the protocol refuses windows ending more than
# MAX_FUTURE after their upload) by a day: a margin for the API's and the worker's clocks.
HORIZON = MAX_FUTURE + timedelta(days=1)


def _params(snaps: Sequence[Any], lookback: timedelta) -> dict[str, Any]:
    ends = [s.window_end for s in snaps]
    return {
        "servers": [s.server_id for s in snaps],
        "ends": ends,
        "lookback": lookback,
        "floor": min(ends) - lookback,
        "ceil": max(ends),
        "horizon": max(datetime.now(UTC), max(ends)) + HORIZON,
    }


_CLASSES = text(
    "SELECT s.id, s.classes FROM snapshots s"
    " JOIN unnest(CAST(:ids AS uuid[]), CAST(:ends AS timestamptz[])) AS k(id, window_end)"
    " ON s.id = k.id AND s.window_end = k.window_end"
    " WHERE s.window_end >= :floor AND s.window_end <= :ceil AND s.classes IS NOT NULL"
)


def class_rows(db: Session, snaps: Sequence[Any]) -> dict[uuid.UUID, list[ClassRow]]:
    """Each snapshot's classes in class order (merge.ClassRow: the curves as lists of floats), by
    snapshot id; a snapshot without classes is absent."""
    if not snaps:
        return {}
    ends = [s.window_end for s in snaps]
    rows = db.execute(
        _CLASSES, {"ids": [s.id for s in snaps], "ends": ends, "floor": min(ends), "ceil": max(ends)}
    )
    out: dict[uuid.UUID, list[ClassRow]] = {}
    for r in rows:
        # column lists, not an object per class: the ingest worker's class load was ~10 % of its
        # CPU at 10,000 agents through StoredClass (py-spy under bench/fleet, 2026-12-04)
        packed = unpack_columns(r.classes)
        k = {name: packed.cols[name].tolist() for name in _ROW_COLUMNS}
        reach = [None if v < 0 else v for v in k["ghost_reach_items"]]
        filters = [None if v < 0 else v for v in k["ghost_filters"]]
        rows_ = list(
            zip(
                k["class_id"],
                k["chunk_size"],
                k["pages"],
                k["current_items"],
                k["requests"],
                packed.sizes.tolist(),
                packed.hits.tolist(),
                reach,
                filters,
                strict=True,
            )
        )
        if rows_:
            out[r.id] = rows_
    return out


_ROW_COLUMNS = (
    "class_id",
    "chunk_size",
    "pages",
    "current_items",
    "requests",
    "ghost_reach_items",
    "ghost_filters",
)


# Of each server's newest :recent curves before its window (from window - lookback on), the newest
# of a window with at least :min_reads reads and no loss flag, else the newest; the recent windows
# are read without their curves, the chosen one's arrays in binary.
_PREVIOUS = text(
    f"WITH {_KEYS}"  # noqa: S608 - the batch keys CTE, ours
    " SELECT k.i, c.snapshot_id, c.instance_id, array_send(sc.sizes_bytes) AS xs,"
    " array_send(sc.hit_ratio_calibrated) AS ys, sc.advice -> 'allocation' AS advised"
    " FROM k CROSS JOIN LATERAL ("
    " SELECT n.snapshot_id, n.window_end, n.instance_id FROM ("
    " SELECT r.snapshot_id, r.window_end, s.instance_id,"
    " (coalesce(s.cmd_get, 0) >= :min_reads AND NOT coalesce(s.flagged, false)) AS good"
    " FROM server_curves r JOIN snapshots s ON s.id = r.snapshot_id AND s.window_end = r.window_end"
    " WHERE r.server_id = k.server_id AND r.window_end < k.window_end"
    " AND r.window_end >= k.window_end - CAST(:lookback AS interval)"
    " AND s.window_end >= k.window_end - CAST(:lookback AS interval)"
    " AND r.window_end >= :floor AND s.window_end >= :floor"
    " AND r.window_end < :ceil AND s.window_end < :ceil"
    " ORDER BY r.window_end DESC LIMIT :recent) n"
    " ORDER BY n.good DESC, n.window_end DESC LIMIT 1) c"
    " JOIN server_curves sc ON sc.snapshot_id = c.snapshot_id AND sc.window_end = c.window_end"
    " AND sc.window_end >= :floor AND sc.window_end < :ceil"
)


def previous_curves(
    db: Session, snaps: Sequence[Any], lookback: timedelta, recent: int, min_reads: int
) -> dict[int, Any]:
    """Each snapshot's previous curve (snapshot_id, instance_id, xs, ys: binary, ys None when not
    calibrated; advised: its slab advice's allocation, JSON) by its position in the batch; none
    found: absent."""
    if not snaps:
        return {}
    rows = db.execute(_PREVIOUS, {**_params(snaps, lookback), "recent": recent, "min_reads": min_reads})
    return {r.i - 1: r for r in rows}


# Errors (pp) of each server's earlier calibrated predictions, newest first, not those graded
# while memcached was still filling (as hitcurve.crud.history.recent_errors_pp counts them).
_HISTORY = text(
    f"WITH {_KEYS}"  # noqa: S608 - the batch keys CTE, ours
    " SELECT k.i, h.error_pp FROM k CROSS JOIN LATERAL ("
    " SELECT a.error_pp, a.window_end FROM accuracy_records a"
    " JOIN snapshots s ON s.id = a.snapshot_id AND s.window_end = a.window_end"
    " WHERE a.server_id = k.server_id AND a.window_end < k.window_end"
    " AND a.window_end >= k.window_end - CAST(:lookback AS interval)"
    " AND s.window_end >= k.window_end - CAST(:lookback AS interval)"
    " AND a.window_end >= :floor AND s.window_end >= :floor"
    " AND a.window_end < :ceil AND s.window_end < :ceil"
    " AND a.basis = 'calibrated' AND s.memory_full IS NOT false"
    " ORDER BY a.window_end DESC LIMIT :n) h ORDER BY k.i, h.window_end DESC"
)


def histories(db: Session, snaps: Sequence[Any], lookback: timedelta, n: int) -> list[list[float]]:
    """Each snapshot's band history (at most n errors, newest first), in the batch's order."""
    out: list[list[float]] = [[] for _ in snaps]
    if snaps:
        for r in db.execute(_HISTORY, {**_params(snaps, lookback), "n": n}):
            out[r.i - 1].append(r.error_pp)
    return out


# The server's cluster and name, and its newest stored curve of a later window (NULL: none).
_FACTS = text(
    f"WITH {_KEYS}"  # noqa: S608 - the batch keys CTE, ours
    " SELECT k.i, sv.cluster_id, sv.address, sv.hostname, (SELECT max(r.window_end)"
    " FROM server_curves r WHERE r.server_id = k.server_id AND r.window_end > k.window_end"
    " AND r.window_end > :floor AND r.window_end <= :horizon) AS newer"
    " FROM k JOIN servers sv ON sv.id = k.server_id ORDER BY k.i"
)


def server_facts(db: Session, snaps: Sequence[Any]) -> list[Any]:
    """(cluster_id, address, hostname, newer) of each snapshot's server, in the batch's order."""
    if not snaps:
        return []
    rows = list(db.execute(_FACTS, {**_params(snaps, timedelta(0))}))
    if len(rows) != len(snaps):
        raise LookupError("a snapshot's server is missing")
    return rows


# memcached's fill at the end of each server's newest :n windows from :since on, oldest first (the
# columns of hitcurve.crud.curves.recent_fill, which hitcurve.rules.warmup.state_of reads).
_FILL = text(
    f"WITH {_KEYS}"  # noqa: S608 - the batch keys CTE, ours
    " SELECT k.i, f.* FROM k JOIN servers sv ON sv.id = k.server_id CROSS JOIN LATERAL ("
    " SELECT s.window_end, s.instance_id, s.total_malloced, s.limit_maxbytes, s.memory_full,"
    " s.hash_bytes, s.curr_connections FROM snapshots s"
    " WHERE s.org_id = sv.org_id AND s.server_id = k.server_id"
    " AND s.window_end >= k.window_end - CAST(:lookback AS interval) AND s.window_end >= :floor"
    " AND s.window_end <= :horizon ORDER BY s.window_end DESC LIMIT :n) f ORDER BY k.i, f.window_end"
)


def recent_fills(db: Session, snaps: Sequence[Any], lookback: timedelta, n: int = 60) -> list[list[Any]]:
    """Each snapshot's server's recent fill (hitcurve.crud.curves.recent_fill with since = its
    window - lookback), in the batch's order."""
    out: list[list[Any]] = [[] for _ in snaps]
    if snaps:
        for r in db.execute(_FILL, {**_params(snaps, lookback), "n": n}):
            out[r.i - 1].append(r)
    return out


def corrections(db: Session, server_ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, PolicyCorrection]:
    """The stored policy corrections of these servers (one row each at most), by server."""
    if not server_ids:
        return {}
    rows = db.execute(select(PolicyCorrection).where(PolicyCorrection.server_id.in_(set(server_ids))))
    return {c.server_id: c for c in rows.scalars()}


def _bounded(columns: Sequence[Any], since: datetime | None) -> list[Any]:
    return [c >= since for c in columns] if since is not None else []


def cluster_windows(
    db: Session, org_id: uuid.UUID, member_ids: Sequence[uuid.UUID], since: datetime | None, n: int
) -> dict[uuid.UUID, list[MemberWindow]]:
    """Each member's newest `n` stored curves with their window's reads, loss and -m, oldest first,
    in one statement (a LATERAL top-n per member, each served by the curves' server/window index):
    the members with none are absent. since: only windows ending from then on (the look-back)."""
    if not member_ids:
        return {}
    per = (
        select(
            ServerCurve.server_id,
            ServerCurve.snapshot_id,
            ServerCurve.window_end,
            ServerCurve.sizes_bytes,
            ServerCurve.hit_ratio_calibrated,
            ServerCurve.hit_ratio_proportional,
            ServerCurve.current_bytes,
            ServerCurve.measured_hit_ratio,
            ServerCurve.band_low,
            ServerCurve.band_high,
            Snapshot.cmd_get,
            Snapshot.loss_ratio,
            Snapshot.flagged,
            Snapshot.limit_maxbytes,
        )
        .join(
            Snapshot,
            (Snapshot.id == ServerCurve.snapshot_id) & (Snapshot.window_end == ServerCurve.window_end),
        )
        .where(
            ServerCurve.server_id == Server.id,
            *_bounded([ServerCurve.window_end, Snapshot.window_end], since),
        )
        .order_by(ServerCurve.window_end.desc())
        .limit(n)
        .lateral()
    )
    rows = db.execute(
        select(per)
        .select_from(Server)
        .join(per, true())
        .where(Server.org_id == org_id, Server.id.in_(list(member_ids)))
        .order_by(per.c.server_id, per.c.window_end)
    )
    out: dict[uuid.UUID, list[MemberWindow]] = {}
    for r in rows:
        out.setdefault(r.server_id, []).append(MemberWindow(**r._mapping))
    return out


def member_fills(
    db: Session, org_id: uuid.UUID, member_ids: Sequence[uuid.UUID], since: datetime | None, n: int = 60
) -> dict[uuid.UUID, list[Any]]:
    """Each member's memcached fill over its newest `n` windows (hitcurve.crud.curves.recent_fill
    with since), oldest first, in one statement; the members without a window are absent."""
    return curves_crud.recent_fill_by_server(db, org_id, member_ids, limit=n, since=since)
