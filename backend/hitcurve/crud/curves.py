"""Stored curves and the snapshots they came from: the one place that says which curve is a
subject's latest (server curves by window end, cluster curves by computation time), and the
stored curves over time. Every query is scoped by org_id."""

import uuid
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import String as SqlString
from sqlalchemy import Uuid, column, func, select, text, true, values
from sqlalchemy.dialects.postgresql import distinct_on
from sqlalchemy.orm import Session, aliased

from hitcurve.crud.newest import FIRST_SPAN, newest
from hitcurve.ingest.classpack import StoredClass, unpack
from hitcurve.models import (
    ClusterCurve,
    Server,
    ServerCurve,
    SimulationResult,
    SimulationRun,
    Snapshot,
)
from hitcurve.schemas.sizing import SubjectKind


def latest_server_curve(db: Session, org_id: uuid.UUID, server_id: uuid.UUID) -> ServerCurve | None:
    return db.execute(
        select(ServerCurve)
        .where(ServerCurve.org_id == org_id, ServerCurve.server_id == server_id)
        .order_by(ServerCurve.window_end.desc())
        .limit(1)
    ).scalar_one_or_none()


def latest_cluster_curve(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID) -> ClusterCurve | None:
    return db.execute(
        select(ClusterCurve)
        .where(ClusterCurve.org_id == org_id, ClusterCurve.cluster_id == cluster_id)
        .order_by(ClusterCurve.computed_at.desc())
        .limit(1)
    ).scalar_one_or_none()


def recent_cluster_curves(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, limit: int = 30
) -> list[Any]:
    """(window_end, sizes_bytes, hit_ratios, server_count, current_bytes) of the cluster's newest
    `limit` curves,
    one per window (the newest computed of each window end), oldest first: what the recommended
    limit's hysteresis runs over (hysteresis.recommend_periodic, anchored on the window ends)."""
    newest = (
        select(
            ClusterCurve.window_end,
            ClusterCurve.sizes_bytes,
            ClusterCurve.hit_ratios,
            ClusterCurve.server_count,
            ClusterCurve.current_bytes,
        )
        .where(ClusterCurve.org_id == org_id, ClusterCurve.cluster_id == cluster_id)
        .order_by(ClusterCurve.window_end.desc(), ClusterCurve.computed_at.desc())
        .ext(distinct_on(ClusterCurve.window_end))
        .limit(limit)
    )
    rows = db.execute(newest).all()
    return list(reversed(rows))


def latest_cluster_curves(
    db: Session, org_id: uuid.UUID, cluster_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, ClusterCurve]:
    """latest_cluster_curve of each cluster, in one query."""
    return {
        cc.cluster_id: cc
        for cc in db.execute(
            select(ClusterCurve)
            .where(ClusterCurve.org_id == org_id, ClusterCurve.cluster_id.in_(cluster_ids))
            .order_by(ClusterCurve.cluster_id, ClusterCurve.computed_at.desc())
            .ext(distinct_on(ClusterCurve.cluster_id))
        ).scalars()
    }


def latest_snapshot(db: Session, org_id: uuid.UUID, server_id: uuid.UUID) -> Snapshot | None:
    return db.execute(
        select(Snapshot)
        .where(Snapshot.org_id == org_id, Snapshot.server_id == server_id)
        .order_by(Snapshot.window_end.desc())
        .limit(1)
    ).scalar_one_or_none()


def latest_snapshot_facts(
    db: Session, org_id: uuid.UUID, server_ids: Sequence[uuid.UUID]
) -> dict[uuid.UUID, Any]:
    """Per server: (loss_ratio, measured_hit_ratio, basis, cmd_get) of its latest snapshot, in one
    query."""
    return {
        r.server_id: r
        for r in db.execute(
            select(
                Snapshot.server_id,
                Snapshot.loss_ratio,
                Snapshot.measured_hit_ratio,
                Snapshot.basis,
                Snapshot.cmd_get,
            )
            .where(Snapshot.org_id == org_id, Snapshot.server_id.in_(server_ids))
            .order_by(Snapshot.server_id, Snapshot.window_end.desc())
            .ext(distinct_on(Snapshot.server_id))
        ).all()
    }


def packed_classes(
    db: Session, org_id: uuid.UUID, snapshot_id: uuid.UUID, window_end: datetime
) -> list[StoredClass]:
    """A snapshot's slab classes in class order (read from its window's partition only); none
    when it has none stored (thinned by retention, or not this organization's)."""
    packed = db.execute(
        select(Snapshot.classes).where(
            Snapshot.id == snapshot_id, Snapshot.window_end == window_end, Snapshot.org_id == org_id
        )
    ).scalar_one_or_none()
    return [] if packed is None else unpack(packed)


def snapshot_classes(db: Session, org_id: uuid.UUID, snap: Snapshot) -> list[StoredClass]:
    """The snapshot's slab classes in class order."""
    return packed_classes(db, org_id, snap.id, snap.window_end)


def snapshot_loss(db: Session, curve: ServerCurve) -> Any:
    """(loss_ratio, flagged) of the snapshot a curve was computed from, or None."""
    return db.execute(
        select(Snapshot.loss_ratio, Snapshot.flagged).where(
            Snapshot.id == curve.snapshot_id, Snapshot.window_end == curve.window_end
        )
    ).one_or_none()


def snapshot_bases(db: Session, org_id: uuid.UUID, snapshot_ids: Sequence[uuid.UUID]) -> set[str]:
    """The bases (watch, stats_only) of these snapshots: what a cluster curve's inputs rest on."""
    if not snapshot_ids:
        return set()
    return set(
        db.execute(
            select(Snapshot.basis).where(Snapshot.org_id == org_id, Snapshot.id.in_(snapshot_ids)).distinct()
        ).scalars()
    )


def snapshot_ttl_models(db: Session, org_id: uuid.UUID, snapshot_ids: Sequence[uuid.UUID]) -> list[bool]:
    """Per stored server curve of these snapshots: whether its model is the agent's merged
    TTL-aware curve (calibration.ttl_aware): what a cluster curve's inputs rest on."""
    if not snapshot_ids:
        return []
    cals = db.execute(
        select(ServerCurve.calibration).where(
            ServerCurve.org_id == org_id, ServerCurve.snapshot_id.in_(snapshot_ids)
        )
    ).scalars()
    return [bool((c or {}).get("ttl_aware")) for c in cals]


def _curves_with_windows() -> Any:
    """Stored server curves, each with its window's reads, stream loss, flag and basis."""
    return select(
        ServerCurve,
        Snapshot.cmd_get,
        Snapshot.loss_ratio,
        Snapshot.flagged,
        Snapshot.basis,
        Snapshot.flag_detail,
    ).join(
        Snapshot,
        (Snapshot.id == ServerCurve.snapshot_id) & (Snapshot.window_end == ServerCurve.window_end),
    )


def recent_server_windows(db: Session, org_id: uuid.UUID, server_id: uuid.UUID, limit: int = 30) -> list[Any]:
    """The server's newest `limit` stored curves with their window's reads, stream loss and basis
    (watch or stats_only), oldest first: what an answer weighs (quiet and lossy windows) and what
    the recommended limit's hysteresis runs over."""
    rows = newest(
        db,
        _curves_with_windows().where(ServerCurve.org_id == org_id, ServerCurve.server_id == server_id),
        ServerCurve.window_end,
        limit,
        joined=(Snapshot.window_end,),
    )
    return list(reversed(rows))


def recent_server_windows_by_server(
    db: Session, org_id: uuid.UUID, server_ids: Sequence[uuid.UUID], limit: int = 30
) -> dict[uuid.UUID, list[Any]]:
    """`recent_server_windows` of several servers in one query (a LATERAL top-`limit` per server,
    as recent_fill_by_server): the same rows, each with its ServerCurve and its window's reads,
    loss, flag and basis, oldest first, by server id. A cluster answer reads its members' windows
    this way, one statement however many members it has."""
    if not server_ids:
        return {}
    per = (
        _curves_with_windows()
        .where(ServerCurve.org_id == org_id, ServerCurve.server_id == Server.id)
        .order_by(ServerCurve.window_end.desc())
    )
    return _top_per_server(
        db,
        org_id,
        server_ids,
        per,
        limit,
        ServerCurve.window_end,
        joined=(Snapshot.window_end,),
        entity=ServerCurve,
    )


def recent_window_facts_by_server(
    db: Session, org_id: uuid.UUID, server_ids: Sequence[uuid.UUID], limit: int
) -> dict[uuid.UUID, list[Any]]:
    """`recent_server_windows` of several servers in one query, without the curves' points (a LATERAL
    top-`limit` per server, oldest first): window_end, cmd_get, loss_ratio, flagged, basis,
    measured_hit_ratio, ttl_aware (the calibration's flag, JSON) and the lengths of the stored sizes
    and calibrated/proportional hit ratios, so the servers list applies the answers' good-window
    rule (hitcurve.rules.windows) to a page of servers without loading their curves."""
    if not server_ids:
        return {}
    per = (
        select(
            ServerCurve.window_end,
            Snapshot.cmd_get,
            Snapshot.loss_ratio,
            Snapshot.flagged,
            Snapshot.basis,
            ServerCurve.measured_hit_ratio,
            ServerCurve.calibration["ttl_aware"].label("ttl_aware"),
            func.coalesce(func.cardinality(ServerCurve.sizes_bytes), 0).label("n_sizes"),
            func.coalesce(func.cardinality(ServerCurve.hit_ratio_calibrated), 0).label("n_calibrated"),
            func.coalesce(func.cardinality(ServerCurve.hit_ratio_proportional), 0).label("n_proportional"),
        )
        .join(
            Snapshot,
            (Snapshot.id == ServerCurve.snapshot_id) & (Snapshot.window_end == ServerCurve.window_end),
        )
        .where(ServerCurve.org_id == org_id, ServerCurve.server_id == Server.id)
        .order_by(ServerCurve.window_end.desc())
    )
    return _top_per_server(
        db, org_id, server_ids, per, limit, ServerCurve.window_end, joined=(Snapshot.window_end,)
    )


def _top_per_server(
    db: Session,
    org_id: uuid.UUID,
    server_ids: Sequence[uuid.UUID],
    per: Any,
    limit: int,
    column: Any,
    joined: tuple[Any, ...] = (),
    since: datetime | None = None,
    entity: Any = None,
) -> dict[uuid.UUID, list[Any]]:
    """`per` (a select correlated on Server.id, newest first by `column`, a partition column) as a
    LATERAL top-`limit` for each of the servers, in one query: their rows oldest first, by server id.

    As `newest` (hitcurve.crud.newest) does for one subject: asked first with `column` (and the
    partition columns `joined` to it) bounded FIRST_SPAN before now, so PostgreSQL plans and locks
    the last days' partitions, not every day of the retention; only the servers with fewer than
    `limit` rows in that span (new, silent for a day) are asked once more without the bound.
    since: the caller's own lower bound (then asked once, with it, as given).
    entity: the mapped class `per` selects whole; each row then holds it under its class name (as
    a select of the entity does), beside `per`'s other columns."""

    def top(stmt: Any, ids: Sequence[uuid.UUID]) -> dict[uuid.UUID, list[Any]]:
        lateral = stmt.limit(limit).lateral()
        cols: list[Any] = [lateral]
        if entity is not None:
            own = {c.key for c in entity.__table__.columns}
            cols = [
                aliased(entity, lateral, name=entity.__name__),
                *(c for c in lateral.c if c.key not in own),
            ]
        rows = db.execute(
            select(Server.id.label("server_id"), *cols)
            .join(lateral, true())
            .where(Server.org_id == org_id, Server.id.in_(list(ids)))
            .order_by(Server.id, lateral.c.window_end)
        )
        out: dict[uuid.UUID, list[Any]] = {}
        for row in rows:
            out.setdefault(row.server_id, []).append(row)
        return out

    if since is not None:
        return top(per.where(*(c >= since for c in (column, *joined))), server_ids)
    bound = datetime.now(UTC) - FIRST_SPAN
    found = top(per.where(*(c >= bound for c in (column, *joined))), server_ids)
    short = [s for s in server_ids if len(found.get(s, ())) < limit]
    if short:
        found.update(top(per, short))
    return found


# memcached's fill at a window's end, as recent_fill and recent_fill_by_server return it
FILL_COLUMNS = (
    Snapshot.window_end,
    Snapshot.instance_id,
    Snapshot.total_malloced,
    Snapshot.limit_maxbytes,
    Snapshot.memory_full,
    Snapshot.hash_bytes,
    Snapshot.curr_connections,
    Snapshot.evictions_total,
    Snapshot.curr_items,
)


def recent_fill(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, limit: int = 60, since: datetime | None = None
) -> list[Any]:
    """memcached's fill at the end of the server's newest `limit` windows, oldest first:
    (window_end, instance_id, total_malloced, limit_maxbytes, memory_full, hash_bytes,
    curr_connections, evictions_total, curr_items). since: only windows ending from then on (the
    worker's bounded look-back)."""
    rows = newest(
        db,
        select(*FILL_COLUMNS).where(Snapshot.org_id == org_id, Snapshot.server_id == server_id),
        Snapshot.window_end,
        limit,
        since,
    )
    return list(reversed(rows))


def recent_fill_by_server(
    db: Session,
    org_id: uuid.UUID,
    server_ids: Sequence[uuid.UUID],
    limit: int = 60,
    since: datetime | None = None,
) -> dict[uuid.UUID, list[Any]]:
    """`recent_fill` of several servers in one query (the servers list, /metrics, a cluster's
    nodes, the worker's cluster curve): a LATERAL top-`limit` per server, each served by
    ix_snapshots_server_window as `recent_fill` is, never a scan of a server's whole history.
    since: only windows ending from then on (the worker's bounded look-back)."""
    if not server_ids:
        return {}
    per = (
        select(*FILL_COLUMNS)
        .where(Snapshot.org_id == org_id, Snapshot.server_id == Server.id)
        .order_by(Snapshot.window_end.desc())
    )
    return _top_per_server(db, org_id, server_ids, per, limit, Snapshot.window_end, since=since)


def attach_evictions(db: Session, org_id: uuid.UUID, server_id: uuid.UUID, instance_id: str) -> int | None:
    """memcached's evictions_total at the first stored window of this memcached instance: where the
    agent's count of evictions since it attached starts (hitcurve.knowledge). None when that
    window does not say."""
    row = db.execute(
        select(Snapshot.evictions_total)
        .where(
            Snapshot.org_id == org_id, Snapshot.server_id == server_id, Snapshot.instance_id == instance_id
        )
        .order_by(Snapshot.window_end)
        .limit(1)
    ).first()
    return None if row is None or row[0] is None else int(row[0])


def attach_evictions_by_server(
    db: Session, org_id: uuid.UUID, instances: dict[uuid.UUID, str]
) -> dict[uuid.UUID, int | None]:
    """`attach_evictions` of several servers in one query, each for its own memcached instance
    ({server id: instance id}): a LATERAL first window per pair, planned as the one-server query."""
    if not instances:
        return {}
    pairs = values(column("sid", Uuid), column("iid", SqlString), name="pairs").data(list(instances.items()))
    first = (
        select(Snapshot.evictions_total)
        .where(
            Snapshot.org_id == org_id, Snapshot.server_id == pairs.c.sid, Snapshot.instance_id == pairs.c.iid
        )
        .order_by(Snapshot.window_end)
        .limit(1)
        .lateral()
    )
    out: dict[uuid.UUID, int | None] = dict.fromkeys(instances)
    for sid, ev in db.execute(select(pairs.c.sid, first.c.evictions_total).join(first, true())):
        out[sid] = None if ev is None else int(ev)
    return out


def snapshot_class_facts(
    db: Session, org_id: uuid.UUID, snapshot_id: uuid.UUID, window_end: datetime
) -> list[StoredClass]:
    """Each slab class of a snapshot: its chunk_size, items and pages are the -m model's input."""
    return packed_classes(db, org_id, snapshot_id, window_end)


def latest_simulation(
    db: Session, org_id: uuid.UUID, policy: str, kind: SubjectKind, subject_id: uuid.UUID
) -> tuple[SimulationRun, list[tuple[int, float]]] | None:
    """The newest finished simulation of a policy for a server or cluster, with its (size, hit
    ratio) results in size order."""
    column = SimulationRun.server_id if kind == "server" else SimulationRun.cluster_id
    run = db.execute(
        select(SimulationRun)
        .where(
            SimulationRun.org_id == org_id,
            SimulationRun.status == "done",
            SimulationRun.policies.contains([policy]),
            column == subject_id,
        )
        .order_by(SimulationRun.finished_at.desc().nulls_last())
        .limit(1)
    ).scalar_one_or_none()
    if run is None:
        return None
    rows = db.execute(
        select(SimulationResult.size_bytes, SimulationResult.hit_ratio)
        .where(
            SimulationResult.run_id == run.id,
            SimulationResult.org_id == org_id,
            SimulationResult.policy == policy,
        )
        .order_by(SimulationResult.size_bytes)
    ).all()
    return run, [(r[0], r[1]) for r in rows]


CLOCK_SLACK = timedelta(hours=1)

# The latest curve of each time bucket (stored curves over time, downsampled).
_CURVES_SQL = """
SELECT DISTINCT ON (b) id FROM (
  SELECT id, window_end, computed_at,
         least(floor(extract(epoch FROM (window_end - :start)) / :bw)::bigint, :last) AS b
  FROM {table}
  WHERE org_id = :org AND {column} = :sid AND window_end > :start AND window_end <= :end{prune}
) t
ORDER BY b, window_end DESC, computed_at DESC, id DESC
"""
_CURVE_TABLES: dict[str, tuple[str, str, str]] = {
    "server": ("server_curves", "server_id", ""),
    # cluster curves are partitioned on computed_at, which is after window_end (the oldest
    # input's end; agents' clocks may run CLOCK_SLACK ahead): the bound skips older partitions
    "cluster": ("cluster_curves", "cluster_id", " AND computed_at >= :cstart"),
}


def _curve_ids(
    db: Session,
    kind: SubjectKind,
    org_id: uuid.UUID,
    subject_id: uuid.UUID,
    start: datetime,
    end: datetime,
    bw: float,
    max_curves: int,
) -> list[int]:
    table, column, prune = _CURVE_TABLES[kind]
    return [
        r.id
        for r in db.execute(
            text(_CURVES_SQL.format(table=table, column=column, prune=prune)),
            {
                "org": org_id,
                "sid": subject_id,
                "start": start,
                "cstart": start - CLOCK_SLACK,
                "end": end,
                "bw": bw,
                "last": max_curves - 1,
            },
        ).all()
    ]


def server_curves_over_time(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, start: datetime, end: datetime, bw: float, n: int
) -> list[ServerCurve]:
    """The latest stored curve of each of n buckets of bw seconds from start, oldest first."""
    ids = _curve_ids(db, "server", org_id, server_id, start, end, bw, n)
    return list(
        db.execute(
            select(ServerCurve)
            .where(
                ServerCurve.org_id == org_id,
                ServerCurve.id.in_(ids),
                ServerCurve.window_end > start,
                ServerCurve.window_end <= end,
            )
            .order_by(ServerCurve.window_end, ServerCurve.id)
        ).scalars()
    )


def cluster_curves_over_time(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, start: datetime, end: datetime, bw: float, n: int
) -> list[ClusterCurve]:
    """The latest stored curve of each of n buckets of bw seconds from start, oldest first."""
    ids = _curve_ids(db, "cluster", org_id, cluster_id, start, end, bw, n)
    return list(
        db.execute(
            select(ClusterCurve)
            .where(
                ClusterCurve.org_id == org_id,
                ClusterCurve.id.in_(ids),
                ClusterCurve.window_end > start,
                ClusterCurve.window_end <= end,
                ClusterCurve.computed_at >= start - CLOCK_SLACK,  # see _CURVE_TABLES
            )
            .order_by(ClusterCurve.window_end, ClusterCurve.id)
        ).scalars()
    )


def recent_extstore(db: Session, org_id: uuid.UUID, server_id: uuid.UUID, limit: int) -> list[Any]:
    """The newest `limit` windows of the server's newest memcached instance, newest first: (window
    start and end, get_hits, extstore), extstore NULL where that window had no flash tier."""
    last = latest_snapshot(db, org_id, server_id)
    if last is None:
        return []
    return list(
        db.execute(
            select(Snapshot.window_start, Snapshot.window_end, Snapshot.get_hits, Snapshot.extstore)
            .where(
                Snapshot.org_id == org_id,
                Snapshot.server_id == server_id,
                Snapshot.instance_id == last.instance_id,
            )
            .order_by(Snapshot.window_end.desc())
            .limit(limit)
        ).all()
    )
