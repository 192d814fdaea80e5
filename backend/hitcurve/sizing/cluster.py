"""A cluster's Basis loaded from the database: its latest stored curve (or a finished policy
simulation), its nodes' fill and memory, the recommended limit's history, the band's stream-loss
and ghost terms from its members' windows; and each server's fill for the lists and /metrics."""

import uuid

from sqlalchemy.orm import Session

from hitcurve.core.domain import NotEnoughDataError
from hitcurve.crud import curves as curves_crud
from hitcurve.crud.history import recent_errors_pp
from hitcurve.crud.inventory import cluster_server_ids, get_cluster
from hitcurve.rules import hysteresis, warmup, windows
from hitcurve.rules.curves import fit_stored
from hitcurve.sizing.band import set_band
from hitcurve.sizing.basis import Basis, ClusterFacts, stored_curve_basis
from hitcurve.sizing.recent_windows import one_model, window_curves
from hitcurve.sizing.server import server_basis, simulated_basis
from hitcurve.sizing.sight import RATE_ROWS, cluster_sight


def server_fills(
    db: Session, org_id: uuid.UUID, server_ids: list[uuid.UUID]
) -> dict[uuid.UUID, warmup.FillState]:
    """Is each server's memcached still filling? One query for all of them; a server without a
    window is absent. The servers list and /metrics state it per server, as the sizing answer
    does; a cluster answer combines its nodes'."""
    rows = curves_crud.recent_fill_by_server(db, org_id, server_ids, limit=RATE_ROWS)
    return {sid: state for sid, r in rows.items() if (state := warmup.state_of(r)) is not None}


def _cluster_facts(db: Session, org_id: uuid.UUID, server_ids: list[uuid.UUID], b: Basis) -> None:
    """A cluster's fill and memory from its nodes: warming while any node is, limits and bytes in
    use summed over the nodes (the cluster curve's x is the cluster's total memory)."""
    states = list(server_fills(db, org_id, server_ids).values())
    b.fill = warmup.combined(states)
    if b.fill is not None:
        b.nodes = len(states)
        b.limit_bytes = b.fill.limit_bytes
        b.used_bytes = b.fill.used_bytes


def cluster_basis(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, policy: str | None
) -> tuple[Basis, ClusterFacts]:
    cluster = get_cluster(db, org_id, cluster_id)
    server_ids = cluster_server_ids(db, org_id, cluster_id)
    c = curves_crud.latest_cluster_curve(db, org_id, cluster_id)
    facts = ClusterFacts(
        target_hit_ratio=cluster.target_hit_ratio,
        node_size_bytes=cluster.node_size_bytes,
        curve_node_size=c.node_size_bytes if c else None,
        node_counts=list(c.node_counts) if c and c.node_counts else None,
        node_hit_ratios=list(c.node_hit_ratios) if c and c.node_hit_ratios else None,
    )
    if policy is not None:
        sim = simulated_basis(
            db,
            org_id,
            policy,
            "cluster",
            cluster_id,
            server_ids,
            c.current_bytes if c else None,
            c.measured_hit_ratio if c else None,
        )
        _cluster_facts(db, org_id, server_ids, sim)
        return sim, facts
    if len(server_ids) == 1 and c is not None and c.server_count == 1:
        # A cluster of one server is that server: its answer, band and recommended limit are the
        # server's own (the cluster curve resamples the server's, and its own hysteresis replay
        # once said -m 72 beside the server's -m 69)
        b = server_basis(db, org_id, server_ids[0], "best", None)
        b.nodes = 1
        return b, facts
    if c is None:
        # with servers assigned, "assign servers" sent the operator to do what is done (the demo's
        # first minute): say what the curve waits for instead
        whose = "server's" if len(server_ids) == 1 else "servers'"
        raise NotEnoughDataError(
            f"no curve for this cluster yet: the worker makes it from its {len(server_ids)} "
            f"{whose} first processed snapshots; ask again once their agents have uploaded"
            if server_ids
            else "no curve for this cluster yet: assign servers that upload snapshots and wait for the worker"
        )
    main = fit_stored(c.sizes_bytes, c.hit_ratios)
    if main is None:
        raise NotEnoughDataError("the latest curve of this cluster has no usable points")
    basis = "calibrated" if c.basis == "calibrated" else "estimate"
    b = stored_curve_basis(c, main, basis)
    _cluster_facts(db, org_id, server_ids, b)
    # the recommended limit: the same anchored replay as a server's (hysteresis.recommend_periodic)
    # over the cluster's recent curves, one per window
    rows = curves_crud.recent_cluster_curves(db, org_id, cluster_id, hysteresis.HISTORY_WINDOWS)
    # only windows summing as many nodes as the newest: a window of another membership answers
    # another -m per node (the seeded web-cache's one-node windows, divided over today's 2 nodes,
    # recommended -m 227 beside the answer's "-m 834 on each of 2 nodes")
    rows = [r for r in rows if r.server_count == c.server_count]
    fitted = [(r.window_end.timestamp(), fit_stored(r.sizes_bytes, r.hit_ratios)) for r in rows]
    pairs = [(t, f) for t, f in fitted if f is not None]
    first = hysteresis.needed_from([t for t, _ in pairs])
    b.history = [f for _, f in pairs[first:]]
    b.history_ends = [t for t, _ in pairs[first:]]
    currents = {r.window_end.timestamp(): float(r.current_bytes or 0) for r in rows}
    b.history_current = [currents[t] for t in b.history_ends]
    # the curve's inputs: {member server id: the snapshot its window came from}. The members'
    # ghosts and sight are read by server id: read by the snapshot ids they found no member, and
    # the three-node demo's curve counted as seen whole from its first full window ("needs more
    # than 861 MiB, the most the curve covers", a memory alert) while each member's said unknown
    used = (c.inputs or {}).get("servers") or {}
    ids, members = [], []
    for k, v in used.items():
        try:
            ids.append(uuid.UUID(str(v)))
            members.append(uuid.UUID(str(k)))
        except ValueError:
            continue
    bases = curves_crud.snapshot_bases(db, org_id, ids)
    if "stats_only" in bases:
        b.data_basis = "stats_only" if bases == {"stats_only"} else "mixed"
    _members_ghost(db, org_id, members or server_ids, b)
    cluster_sight(db, org_id, members or server_ids, b)
    set_band(b, recent_errors_pp(db, org_id, server_ids))
    # TTL-aware when every member's curve in it is
    ttl = curves_crud.snapshot_ttl_models(db, org_id, ids)
    b.ttl_aware = bool(ttl) and all(ttl)
    return b, facts


# At most this many members' windows set a cluster band's stream-loss and ghost terms (bounded
# queries per cluster answer, which is cached like the rest of it).
BAND_MEMBERS = 32


def _members_ghost(db: Session, org_id: uuid.UUID, member_ids: list[uuid.UUID], b: Basis) -> None:
    """A cluster band's stream-loss and ghost terms from its members' recent windows, taken as a
    server's answer takes them (use_windows): the loss their ghosts remember, reads-weighted over
    the members, and the ghosts' reach as a multiple of today's memory (the cluster's x is its
    members' memory summed) with the members' fewest filters. Without them a cluster's band above
    today was the drift's alone: a one-server cluster said 64.7-70.9 MiB where its server said
    64.3-79.1 MiB (the demo)."""
    loss = reads_all = ratio = reads_reach = 0.0
    filters: list[int] = []
    seen = with_reach = 0
    members = sorted(member_ids, key=str)[:BAND_MEMBERS]
    recent = curves_crud.recent_server_windows_by_server(db, org_id, members, hysteresis.HISTORY_WINDOWS)
    for sid in members:
        rows = recent.get(sid, [])
        wins = window_curves(one_model(rows, "best"), "best")
        comb = windows.combine(wins)
        if comb is None:
            continue
        seen += 1
        reads = float(sum(max(w.reads, 1) for w in wins))
        loss += max(comb.loss_ratio, windows.ghost_loss(wins)) * reads
        reads_all += reads
        w = comb.newest
        if w.ghost_reach_bytes and w.current_bytes > 0:
            with_reach += 1
            ratio += w.ghost_reach_bytes / w.current_bytes * reads
            reads_reach += reads
        if w.ghost_filters:
            filters.append(w.ghost_filters)
    if not seen:
        return
    b.ghost_loss_ratio = loss / reads_all
    today = float(b.info.current_bytes or 0)
    if with_reach == seen and today > 0:
        b.ghost_reach_bytes = today * ratio / reads_reach
        b.ghost_filters = min(filters) if len(filters) == seen else None
