"""The answer from a stored curve: memory for a target hit ratio, hit ratio at a memory size,
nodes for a cluster target. The API's /sizing routes, the cluster overview and the weekly report
all answer through here, so they cannot disagree.

A Basis is the fitted curve an answer reads (the worker's stored server or cluster curve, or a
finished policy simulation), with its uncertainty band (hitcurve.band: one band, at its stated
confidence, through today's measured point; the curve endpoints draw the same band) and facts;
bases are kept per process for Settings.hot_cache_ttl_s (basis_cache). Interpolation is PCHIP
(hitcurve.curves)."""

import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, TypeVar

from sqlalchemy.orm import Session

from hitcurve import band as band_model
from hitcurve import hysteresis, memlimit, warmup, windows
from hitcurve.core.config import get_settings
from hitcurve.core.errors import ApiError
from hitcurve.core.ttlcache import TTLCache
from hitcurve.crud import curves as curves_crud
from hitcurve.crud.history import recent_errors_pp
from hitcurve.crud.inventory import cluster_server_ids, get_cluster, get_server
from hitcurve.curves import Pchip, clean, fit_stored
from hitcurve.models import Cluster, ClusterCurve, ServerCurve
from hitcurve.percent import hit_rate as pct
from hitcurve.percent import percent
from hitcurve.schemas.sizing import (
    STATS_ONLY_LABEL,
    Band,
    CurveInfo,
    CurveKind,
    DataBasis,
    SizingAnswer,
    Subject,
    SubjectKind,
)
from hitcurve.words import counted

T = TypeVar("T")

# Windows of memcached's fill read per node (the fill rate reaches back warmup.RATE_SPAN_S).
RATE_ROWS = 60
# The answer of a stats-only server says so first (what the dashboard shows, too).
STATS_ONLY_NOTE = (
    f"{STATS_ONLY_LABEL} — memcached refused `watch`, so the curve is a Che + Zipf model fitted to its "
    f"counters; band ±{band_model.STATS_ONLY_PER_DOUBLING_PP:g} pp per doubling from today's memory "
    f"(watch-based curves: ±{band_model.PER_DOUBLING_PP:g} pp)"
)


@dataclass
class Basis:
    main: Pchip
    basis: str
    policy: str | None
    info: CurveInfo
    note: str | None = None  # how the curve was made, for the message (e.g. the policy correction)
    # The band at its stated confidence (hitcurve.band), through today's measured point (set_band).
    conf_low: Pchip | None = None
    conf_high: Pchip | None = None
    band: band_model.BandModel | None = None
    drift: band_model.Drift | None = None
    # the band passes through the measured point: false for a simulated policy (memcached measured
    # its own policy, not the simulated one)
    band_through_measured: bool = True
    # Server facts: memcached's fill, its classes (the -m model), -m today, and earlier windows'
    # curves (the recommended limit's hysteresis runs over their raw answers).
    fill: warmup.FillState | None = None
    classes: list[memlimit.ClassNow] = field(default_factory=list)
    limit_bytes: int | None = None
    used_bytes: int | None = None
    connections: int | None = None
    items_now: int = 0
    history: list[Pchip] = field(default_factory=list)
    # the history's window ends (epoch seconds) when known: the recommended limit's replay is then
    # anchored on a fixed period grid (hysteresis.recommend_periodic)
    history_ends: list[float] = field(default_factory=list)
    # stream loss behind the curve above today's memory (windows.ghost_loss), for the band
    ghost_loss_ratio: float | None = None
    # issue 14: how far the agent's ghost sees now (the newest window used; None: the agent does
    # not say). Past it the curve is held flat, not measured: no "unreachable" there.
    ghost_reach_bytes: float | None = None
    ghost_filters: int | None = None  # the agent's ghost filters then (None: not said)
    windows_used: int | None = None
    windows_note: str | None = None
    # Cluster answers: the nodes the -m is given for (memory_limit_bytes is per node).
    nodes: int | None = None
    # What the curve rests on: memcached's watch stream, or its `stats` counters alone (issue 15)
    data_basis: DataBasis = "watch"
    # issue 16: the curve models expiry (the agent's merged TTL-aware curve, hitcurve/ttl.py)
    ttl_aware: bool = False

    def fresh_info(self) -> CurveInfo:
        """The curve's facts with its age as of now (a Basis may come from the cache)."""
        return self.info.model_copy(update={"age_seconds": (_now() - self.info.window_end).total_seconds()})


@dataclass
class ClusterFacts:
    target_hit_ratio: float
    node_size_bytes: int | None
    curve_node_size: int | None
    node_counts: list[int] | None
    node_hit_ratios: list[float] | None


_cache: TTLCache | None = None


def basis_cache() -> TTLCache:
    """Fitted curves per (org, subject, options) for Settings.hot_cache_ttl_s: a hot sizing request
    then needs no database query. Only answers and not-enough-data errors are kept, never 404s."""
    global _cache
    ttl = get_settings().hot_cache_ttl_s
    if _cache is None or _cache.ttl_s != ttl:
        _cache = TTLCache(ttl)
    return _cache


def attempt(compute: Callable[[], T]) -> T | ApiError:
    """compute(), with a not-enough-data answer returned instead of raised: it is cached like an
    answer (any other error, e.g. a 404, is raised and never cached)."""
    try:
        return compute()
    except ApiError as exc:
        if exc.code == "not_enough_data":
            return exc
        raise


def cached(key: tuple[object, ...], compute: Callable[[], T]) -> T:
    value = basis_cache().get_or_compute(key, lambda: attempt(compute))
    if isinstance(value, ApiError):
        raise value
    return value


def server_key(
    org_id: uuid.UUID, server_id: uuid.UUID, curve: CurveKind, policy: str | None
) -> tuple[object, ...]:
    return ("server", org_id, server_id, curve, policy)


def cluster_key(org_id: uuid.UUID, cluster_id: uuid.UUID, policy: str | None) -> tuple[object, ...]:
    return ("cluster", org_id, cluster_id, policy)


def _now() -> datetime:
    return datetime.now(UTC)


def _fit(xs: list[float] | None, ys: list[float] | None) -> Pchip | None:
    return fit_stored(xs, ys)


def _not_enough(msg: str) -> ApiError:
    return ApiError(409, "not_enough_data", msg)


def _simulated(
    db: Session,
    org_id: uuid.UUID,
    policy: str,
    kind: SubjectKind,
    subject_id: uuid.UUID,
    server_ids: list[uuid.UUID],
    current: int | None,
    measured: float | None,
) -> Basis:
    found = curves_crud.latest_simulation(db, org_id, policy, kind, subject_id)
    if found is None:
        raise _not_enough(
            f"no finished simulation of policy {policy} for this subject yet: POST /api/v1/simulations"
        )
    run, rows = found
    main = _fit([float(r[0]) for r in rows], [r[1] for r in rows])
    if main is None:
        raise _not_enough(f"the latest simulation of {policy} has no results")
    finished = run.finished_at or run.created_at
    b = Basis(
        main,
        "simulated",
        policy,
        CurveInfo(
            computed_at=finished,
            window_end=run.window_end,
            age_seconds=(_now() - run.window_end).total_seconds(),
            current_bytes=current,
            measured_hit_ratio=measured,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
        band_through_measured=False,
    )
    set_band(b, recent_errors_pp(db, org_id, server_ids))
    return b


def _pick(
    kind: CurveKind, calibrated: list[float] | None, optimal: list[float] | None, proportional: list[float]
) -> tuple[list[float], str]:
    if kind in ("best", "calibrated") and calibrated:
        return calibrated, "calibrated"
    if kind == "calibrated":
        raise _not_enough("no calibrated curve yet (it needs a measured hit ratio); use curve=proportional")
    if kind == "optimal":
        if not optimal:
            raise _not_enough("no optimal-allocation curve for this subject")
        return optimal, "estimate"
    return proportional, "estimate"


def server_basis(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, kind: CurveKind, policy: str | None
) -> Basis:
    c = curves_crud.latest_server_curve(db, org_id, server_id)
    if c is None:
        get_server(db, org_id, server_id)  # 404 for unknown and foreign ids
    if policy is not None:
        return _simulated(
            db,
            org_id,
            policy,
            "server",
            server_id,
            [server_id],
            c.current_bytes if c else None,
            c.measured_hit_ratio if c else None,
        )
    if c is None:
        snap = curves_crud.latest_snapshot(db, org_id, server_id)
        if snap is not None and snap.basis == "stats_only":
            state = (snap.stats_model or {}).get("state", "unknown")
            raise _not_enough(
                f"no curve for this server yet: memcached refused `watch`, and the agent's stats-only "
                f"model has no curve ({state}; it needs memcached to be evicting, with reads)"
            )
        raise _not_enough(
            "no curve for this server yet: its agent must upload snapshots and the worker process them"
        )
    ys, basis = _pick(kind, c.hit_ratio_calibrated, c.hit_ratio_optimal, c.hit_ratio_proportional)
    main = _fit(c.sizes_bytes, ys)
    if main is None:
        raise _not_enough("the latest curve of this server has no usable points")
    b = _stored_curve_basis(c, main, basis)
    loss = curves_crud.snapshot_loss(db, c)
    if loss is not None:
        b.info = b.info.model_copy(
            update={"stream_loss_ratio": float(loss.loss_ratio), "stream_loss_flagged": bool(loss.flagged)}
        )
    _server_facts(db, org_id, server_id, kind, b)
    return b


def _curve_ys(c: ServerCurve, kind: CurveKind) -> list[float] | None:
    try:
        return _pick(kind, c.hit_ratio_calibrated, c.hit_ratio_optimal, c.hit_ratio_proportional)[0]
    except ApiError:
        return None


def _window_curves(rows: list[Any], kind: CurveKind) -> list[windows.WindowCurve]:
    """Stored curves with their window's reads and loss (curves_crud.recent_server_windows rows)
    as the windows rules weigh them."""
    wins = []
    for r in rows:
        ys = _curve_ys(r.ServerCurve, kind)
        cx, cy = clean(list(r.ServerCurve.sizes_bytes), ys or [])
        if not cx:
            continue
        wins.append(
            windows.WindowCurve(
                r.ServerCurve.window_end,
                cx,
                cy,
                int(r.cmd_get),
                float(r.loss_ratio),
                bool(r.flagged),
                int(r.ServerCurve.current_bytes),
                r.ServerCurve.measured_hit_ratio,
                _reach((r.ServerCurve.calibration or {}).get("ghost_reach_bytes")),
                band_model.reported_filters((r.ServerCurve.calibration or {}).get("ghost_filters")),
            )
        )
    return wins


def _reach(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and math.isfinite(v) and v > 0 else None


def answer_curve(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID
) -> tuple[ServerCurve | None, str | None, windows.Combined | None]:
    """The stored curve of the newest window a server's answers rest on (a quiet or loss-flagged
    newer window is left out, hitcurve.windows), which windows were left out, and the combined
    curve the answers use (the good recent windows weighed); the curve page draws the combined
    curve, so the chart and the answer never disagree."""
    # the windows the answers read (_server_facts), so the page's measured hit rate is theirs
    rows = _one_model(
        curves_crud.recent_server_windows(db, org_id, server_id, hysteresis.HISTORY_WINDOWS), "best"
    )
    comb = windows.combine(_window_curves(rows, "best"))
    if comb is None:
        return None, None, None
    row = next(r.ServerCurve for r in rows if r.ServerCurve.window_end == comb.newest.window_end)
    return row, comb.describe() if comb.skipped or not comb.reliable else None, comb


def _one_model(rows: list[Any], kind: CurveKind, ttl_of: Callable[[Any], bool] | None = None) -> list[Any]:
    """The windows an answer may weigh together: the newest window's basis (a stats-only model is
    never averaged with measured curves; an agent that regains `watch` moves the answer to watch
    windows) and, but for the optimal curve, its TTL-aware or LRU model (issue 16). ttl_of: a row's
    model (default: its ServerCurve's calibration)."""
    if not rows:
        return rows
    model = ttl_of or (lambda r: _ttl_model(r.ServerCurve))
    rows = [r for r in rows if r.basis == rows[-1].basis]
    if kind != "optimal":
        ttl = model(rows[-1])
        rows = [r for r in rows if model(r) == ttl]
    return rows


def measured_hit_ratios(
    db: Session, org_id: uuid.UUID, server_ids: list[uuid.UUID]
) -> dict[uuid.UUID, float | None]:
    """Each server's measured hit ratio as its answers state it (CurveInfo.measured_hit_ratio:
    hitcurve.windows.measured_over the good recent windows of the answer's model), for a page of
    servers in one query without their curves; a server without a curve is absent. The servers
    list shows this, not the newest window's own (which differed from the card and the API by up
    to 7 pp while memcached filled)."""
    out: dict[uuid.UUID, float | None] = {}
    facts = curves_crud.recent_window_facts_by_server(db, org_id, server_ids, hysteresis.HISTORY_WINDOWS)
    for sid, rows in facts.items():
        # the rows _window_curves keeps for the best curve: stored sizes and a calibrated or
        # proportional curve (the worker stores no curve of non-positive or non-finite sizes)
        model = _one_model(rows, "best", lambda r: bool(r.ttl_aware))
        kept = [r for r in model if r.n_sizes and (r.n_calibrated or r.n_proportional)]
        wins = [
            windows.WindowSummary(
                r.window_end, int(r.cmd_get), float(r.loss_ratio), bool(r.flagged), True, r.measured_hit_ratio
            )
            for r in kept
        ]
        if wins:
            out[sid] = windows.measured_hit_ratio(wins)
    return out


def _ttl_model(c: ServerCurve) -> bool:
    """The stored curve's model is the agent's merged TTL-aware curve (issue 16, hitcurve/ttl.py)."""
    return bool((c.calibration or {}).get("ttl_aware"))


def _server_facts(db: Session, org_id: uuid.UUID, server_id: uuid.UUID, kind: CurveKind, b: Basis) -> None:
    """What an operator's answer needs beyond the latest curve: the recent windows weighed
    (a quiet or lossy window never replaces a good curve), memcached's fill, the -m model's
    classes, the band at its confidence, earlier windows for the recommended limit."""
    rows = _one_model(
        curves_crud.recent_server_windows(db, org_id, server_id, hysteresis.HISTORY_WINDOWS), kind
    )
    if rows:
        b.data_basis = rows[-1].basis
    wins = _window_curves(rows, kind)
    comb = use_windows(b, wins)
    if comb is not None:
        newest = next(r.ServerCurve for r in rows if r.ServerCurve.window_end == comb.newest.window_end)
        b.info = b.info.model_copy(update={"computed_at": newest.computed_at})
        snapshot_id, snapshot_end = newest.snapshot_id, newest.window_end
        # the optimal-allocation curve is the LRU class curves' (issue 16: only the model is TTL-aware)
        b.ttl_aware = kind != "optimal" and _ttl_model(newest)
    else:
        snapshot_id, snapshot_end = None, None
    if b.info.stream_loss_flagged:
        warn = (
            f"the agent lost {percent(b.info.stream_loss_ratio or 0)} of memcached's events: "
            "hit rates above today's memory may be under-estimated"
        )
        b.note = f"{b.note}; {warn}" if b.note else warn
    fill_rows = curves_crud.recent_fill(db, org_id, server_id)
    if fill_rows:
        b.fill = warmup.state_of(fill_rows)
        last = fill_rows[-1]
        b.limit_bytes = int(last.limit_maxbytes)
        b.used_bytes = int(last.total_malloced) if last.total_malloced else None
        b.connections = int(last.curr_connections) if last.curr_connections is not None else None
    if snapshot_id is not None and snapshot_end is not None:
        facts = curves_crud.snapshot_class_facts(db, org_id, snapshot_id, snapshot_end)
        b.classes = [memlimit.ClassNow(int(f.chunk_size), int(f.items), int(f.pages)) for f in facts]
        b.items_now = sum(c.items for c in b.classes)
    set_band(b, recent_errors_pp(db, org_id, [server_id]))


def basis_from_windows(
    wins: list[windows.WindowCurve],
    *,
    basis: str = "calibrated",
    classes: dict[datetime, list[memlimit.ClassNow]] | None = None,
    fill: warmup.FillState | None = None,
    limit_bytes: int | None = None,
    errors_pp: list[float] | None = None,
    data_basis: DataBasis = "watch",
) -> Basis | None:
    """A server's answer basis from its recent windows and facts, without the database (pure):
    what server_basis builds from stored rows, for the accuracy benchmark and the tests that feed
    recorded windows. `wins` oldest first; `classes`: each window's slab classes by window end (the
    -m model reads those of the newest window the answer rests on); errors_pp: the server's
    accuracy record, newest first (the band's drift)."""
    if not wins:
        return None
    last = wins[-1]
    main = Pchip.fit(last.sizes_bytes, last.hit_ratios)
    b = Basis(
        main,
        basis,
        None,
        CurveInfo(
            computed_at=last.window_end,
            window_end=last.window_end,
            age_seconds=0.0,
            current_bytes=last.current_bytes,
            measured_hit_ratio=last.measured_hit_ratio,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
    )
    comb = use_windows(b, wins)
    if comb is not None and classes:
        b.classes = list(classes.get(comb.newest.window_end, []))
    b.items_now = sum(c.items for c in b.classes)
    b.fill = fill
    b.limit_bytes = limit_bytes
    b.data_basis = data_basis
    set_band(b, list(errors_pp or []))
    return b


def use_windows(b: Basis, wins: list[windows.WindowCurve]) -> windows.Combined | None:
    """The answer's curve from the server's recent windows (oldest first; pure): the combined
    curve (hitcurve.windows: a quiet or lossy window never replaces a good curve), the history the
    recommended limit's hysteresis runs over, and the facts of the newest window used. The
    accuracy benchmark (bench/accuracy) calls this too, so its table is what the API answers."""
    ends = [w.window_end.timestamp() for w in wins]
    first = hysteresis.needed_from(ends)  # older windows do not change the recommendation
    # the recommended limit moves on good windows only: a quiet or lossy one answered nothing
    ok = [v is None for v in windows.verdicts(wins)]
    kept = [i for i in range(first, len(wins)) if ok[i]] or list(range(first, len(wins)))
    b.history = [Pchip.fit(wins[i].sizes_bytes, wins[i].hit_ratios) for i in kept]
    b.history_ends = [ends[i] for i in kept]
    comb = windows.combine(wins)
    if comb is None:
        return None
    b.main = Pchip.fit(comb.sizes_bytes, comb.hit_ratios)
    b.windows_used = len(comb.used)
    b.windows_note = comb.describe()
    b.ghost_loss_ratio = max(comb.loss_ratio, windows.ghost_loss(wins))
    b.ghost_reach_bytes = comb.newest.ghost_reach_bytes
    b.ghost_filters = comb.newest.ghost_filters
    b.info = b.info.model_copy(
        update={
            "window_end": comb.newest.window_end,
            "current_bytes": comb.newest.current_bytes,
            "measured_hit_ratio": comb.measured_hit_ratio,
            "max_bytes": b.main.x_max,
            "max_hit_ratio": b.main.y_max,
            "stream_loss_ratio": comb.loss_ratio,
            "stream_loss_flagged": any(w.flagged for w in wins if w.window_end in comb.used),
        }
    )
    return comb


def set_band(b: Basis, errors_pp: list[float]) -> None:
    """The band at its stated confidence around b.main (hitcurve.band; pure): through today's
    measured point, widening with the distance from it by the drift (this server's accuracy record
    `errors_pp`, newest first, shrunk toward the benchmark's measured error) and the windows'
    stream loss."""
    b.drift = band_model.drift_estimate(errors_pp)
    if b.data_basis == "stats_only":
        # a model fitted to `stats` (issue 15): no stream loss, its own error per doubling
        model = band_model.BandModel.stats_only(float(b.info.current_bytes or 0), b.drift.pp)
    else:
        model = band_model.BandModel(
            current_bytes=float(b.info.current_bytes or 0),
            drift_pp=b.drift.pp,
            loss_ratio=float(
                b.ghost_loss_ratio if b.ghost_loss_ratio is not None else (b.info.stream_loss_ratio or 0.0)
            ),
            ghost_span_bytes=band_model.ghost_span(
                b.ghost_reach_bytes, float(b.info.current_bytes or 0), b.ghost_filters
            ),
        )
    b.band = model
    xs = list(b.main.x[1:]) if b.main.x[0] == 0 else list(b.main.x)
    ys = [b.main(x) for x in xs]
    measured = b.info.measured_hit_ratio if b.band_through_measured else None
    lo_c, hi_c = band_lists(model, xs, ys, measured)
    b.conf_low, b.conf_high = Pchip.fit(xs, lo_c), Pchip.fit(xs, hi_c)


def band_lists(
    model: band_model.BandModel, xs: list[float], ys: list[float], measured: float | None
) -> tuple[list[float], list[float]]:
    """The band's (low, high) hit rates at sizes xs around the curve ys (pure). When the curve
    misses today's measured hit rate (an uncalibrated estimate), the side it misses on is moved by
    the miss, so that the band always holds the measured point."""
    lo, hi = band_model.band_curves(xs, ys, model)
    cur = model.current_bytes
    if measured is None or cur <= 0 or not xs:
        return lo, hi
    lo_at = Pchip.fit(xs, lo)(cur)
    hi_at = Pchip.fit(xs, hi)(cur)
    if measured > hi_at:
        hi = [min(1.0, v + measured - hi_at) for v in hi]
    elif measured < lo_at:
        lo = [max(0.0, v - (lo_at - measured)) for v in lo]
    return lo, hi


def curve_band(b: Basis, xs: list[float], ys: list[float]) -> tuple[list[float], list[float]] | None:
    """The answer's band at the sizes of a curve the dashboard draws (the same BandModel, through
    the same measured point); None without a band."""
    if b.band is None:
        return None
    cx, cy = clean(xs, ys)
    if len(cx) != len(xs):
        return None
    measured = b.info.measured_hit_ratio if b.band_through_measured else None
    return band_lists(b.band, cx, cy, measured)


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
        sim = _simulated(
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
    if c is None:
        # with servers assigned, "assign servers" sent the operator to do what is done (the demo's
        # first minute): say what the curve waits for instead
        whose = "server's" if len(server_ids) == 1 else "servers'"
        raise _not_enough(
            f"no curve for this cluster yet: the worker makes it from its {len(server_ids)} "
            f"{whose} first processed snapshots; ask again once their agents have uploaded"
            if server_ids
            else "no curve for this cluster yet: assign servers that upload snapshots and wait for the worker"
        )
    main = _fit(c.sizes_bytes, c.hit_ratios)
    if main is None:
        raise _not_enough("the latest curve of this cluster has no usable points")
    basis = "calibrated" if c.basis == "calibrated" else "estimate"
    b = _stored_curve_basis(c, main, basis)
    _cluster_facts(db, org_id, server_ids, b)
    # the recommended limit: the same anchored replay as a server's (hysteresis.recommend_periodic)
    # over the cluster's recent curves, one per window
    rows = curves_crud.recent_cluster_curves(db, org_id, cluster_id, hysteresis.HISTORY_WINDOWS)
    # only windows summing as many nodes as the newest: a window of another membership answers
    # another -m per node (the seeded web-cache's one-node windows, divided over today's 2 nodes,
    # recommended -m 227 beside the answer's "-m 834 on each of 2 nodes")
    rows = [r for r in rows if r.server_count == c.server_count]
    fitted = [(r.window_end.timestamp(), _fit(r.sizes_bytes, r.hit_ratios)) for r in rows]
    pairs = [(t, f) for t, f in fitted if f is not None]
    first = hysteresis.needed_from([t for t, _ in pairs])
    b.history = [f for _, f in pairs[first:]]
    b.history_ends = [t for t, _ in pairs[first:]]
    ids = []
    for v in ((c.inputs or {}).get("servers") or {}).values():
        try:
            ids.append(uuid.UUID(str(v)))
        except ValueError:
            continue
    bases = curves_crud.snapshot_bases(db, org_id, ids)
    if "stats_only" in bases:
        b.data_basis = "stats_only" if bases == {"stats_only"} else "mixed"
    _members_ghost(db, org_id, ids or server_ids, b)
    set_band(b, recent_errors_pp(db, org_id, server_ids))
    # issue 16: TTL-aware when every member's curve in it is
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
    for sid in sorted(member_ids, key=str)[:BAND_MEMBERS]:
        rows = curves_crud.recent_server_windows(db, org_id, sid, hysteresis.HISTORY_WINDOWS)
        wins = _window_curves(_one_model(rows, "best"), "best")
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


def _stored_curve_basis(c: ServerCurve | ClusterCurve, main: Pchip, basis: str) -> Basis:
    """The answer basis for a curve the worker stored (server or cluster): fit, band, age."""
    note = None
    if isinstance(c, ServerCurve) and basis == "calibrated":
        # The worker adds memcached's segmented-LRU gain (simulated on the sampled trace) below
        # today's memory before calibrating, when it had enough trace (calibration.policy_correction),
        # and above it what the agent's eviction-fed ghost misses of that policy (lift_pp: None for
        # a correction stored without the ghost view).
        corr = (c.calibration or {}).get("policy_correction") or {}
        if corr.get("applied"):
            reads = int(corr.get("sampled_gets") or 0)
            note = f"corrected for memcached's segmented LRU from {reads:,} sampled reads"
            if corr.get("lift_pp") is not None:
                note += ", above today's memory too"
    return Basis(
        main,
        basis,
        None,
        CurveInfo(
            computed_at=c.computed_at,
            window_end=c.window_end,
            age_seconds=(_now() - c.window_end).total_seconds(),
            current_bytes=c.current_bytes,
            measured_hit_ratio=c.measured_hit_ratio,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
        note,
    )


hb = memlimit.human_bytes


def gib(b: float | None) -> str:
    """Bytes for people: GiB from 1 GiB up, MiB below."""
    if b is None:
        return "?"
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.1f} MiB"


def _describe(b: Basis) -> str:
    what = f"simulated {b.policy}" if b.basis == "simulated" else b.basis
    if b.data_basis == "stats_only" and b.basis != "simulated":
        what = "stats-only model"
    if b.ttl_aware and b.basis != "simulated":
        what = f"TTL-aware {what}"
    note = f" ({b.note})" if b.note else ""
    return f"{what} curve{note}, {(_now() - b.info.window_end).total_seconds():.0f} s old"


# Above the curve's end the target is unreachable (not merely unseen) when the curve has levelled
# off: less than LEVEL_PP gained over its last fifth, and it reaches at least twice today's memory.
LEVEL_PP = 0.1
# Agent memory per tracked key for each step of --ghost-factor (profiler-agent/README.md).
GHOST_BYTES_PER_KEY_PER_STEP = 19


def _levelled_off(b: Basis) -> bool:
    m = b.main
    cur = b.info.current_bytes or 0
    return m.x_max >= 2 * cur > 0 and (m.y_max - m(0.8 * m.x_max)) * 100 < LEVEL_PP


# The ghost counts as reaching the curve's end within this share of it (a filled ghost reports
# K x N; the merged axis rounds to pages).
REACH_SLACK = 0.02


def observed_max_bytes(reach: float | None, curve_end: float, current_bytes: float | None) -> float | None:
    """Where the curve stops being measured when the agent's ghost does not yet see out to its end
    (`reach`, on the memory axis; never below today's memory): the points past it are held flat,
    so hit rates there are lower bounds. None: measured out to the end (or the agent said nothing)."""
    if reach is None or reach >= (1.0 - REACH_SLACK) * curve_end:
        return None
    return max(float(reach), float(current_bytes or 0))


def _ghost_filling(b: Basis) -> bool:
    """The agent says its ghost does not yet see out to the curve's end: the flat part past the
    reach is held, not measured, so it proves nothing about what more memory gives."""
    return observed_max_bytes(b.ghost_reach_bytes, b.main.x_max, b.info.current_bytes) is not None


def _ceil(v: float | None) -> int | None:
    return None if v is None else int(math.ceil(v - 1e-9))


def _facts(b: Basis) -> dict[str, object]:
    """The fields every answer carries about memcached's memory and fill."""
    f = b.fill
    return dict(
        current_memory_limit_bytes=b.limit_bytes,
        used_bytes=b.used_bytes,
        fill_ratio=f.fill_ratio if f else None,
        full_in_seconds=f.full_in_seconds if f and f.warming_up else None,
        windows=b.windows_used,
        nodes=b.nodes,
        data_basis=b.data_basis,
        ttl_aware=b.ttl_aware,
    )


def _stats_only_first(b: Basis, msg: str) -> str:
    """A stats-only answer says so before anything else."""
    if b.data_basis == "stats_only":
        return f"{STATS_ONLY_NOTE}. {msg[:1].upper()}{msg[1:]}"
    if b.data_basis == "mixed":
        return f"some servers' curves are {STATS_ONLY_LABEL} (wider band). {msg[:1].upper()}{msg[1:]}"
    return msg


def _limit(b: Basis, mem: float) -> int:
    """The -m to set for `mem` on the answer's curve: a cluster's is per node (its total memory
    over its nodes)."""
    if b.nodes:
        return memlimit.limit_for_bytes(mem / b.nodes, 0.0, [])
    return memlimit.limit_for_bytes(mem, float(b.info.current_bytes or 0), b.classes)


def _more_than(b: Basis, mem: float) -> str:
    """A lower bound in words, in both units: "more than 63.7 MiB (-m above 70)"."""
    each = f" on each of its {b.nodes} nodes" if b.nodes and b.nodes > 1 else ""
    return f"more than {hb(mem)} (-m above {_limit(b, mem) // memlimit.MIB}{each})"


def _set_m(b: Basis, limit: int) -> str:
    each = f" on each of its {b.nodes} nodes" if b.nodes and b.nodes > 1 else ""
    return f"set -m {limit // memlimit.MIB}{each}"


def _warming(b: Basis) -> bool:
    return bool(b.fill and b.fill.warming_up)


def _tail(b: Basis) -> str:
    parts = [_describe(b)]
    if b.windows_note:
        parts.append(b.windows_note)
    return "; ".join(parts)


def _band(b: Basis, **fields: object) -> Band:
    """The answer's band: its confidence and what its drift rests on, plus `fields`."""
    d = b.drift
    return Band(
        confidence=band_model.CONFIDENCE if b.conf_low is not None else None,
        basis=d.basis if d else None,
        graded_predictions=d.graded_predictions if d else None,
        drift_pp=round(d.pp, 3) if d else None,
        **fields,
    )


def _band_words(b: Basis) -> str:
    """Which basis the band uses, for the message."""
    d = b.drift
    if d is None:
        return ""
    who = "its servers" if b.nodes else "this server"
    if d.basis == "benchmark_prior":
        return (
            f"; the band rests on the benchmark's prediction error ({band_model.PRIOR_DRIFT_PP:g} pp), "
            f"no prediction of {who} graded yet"
        )
    n = d.graded_predictions
    return (
        f"; the band rests on {n} graded prediction{'s' if n != 1 else ''} of {who} "
        f"and the benchmark's error (drift {d.pp:.1f} pp)"
    )


def _clamp(lo: float | None, v: float, hi: float | None) -> tuple[float | None, float | None]:
    """Band ends on either side of the answer's value (separately fitted interpolants may cross it
    by rounding)."""
    return (None if lo is None else min(lo, v)), (None if hi is None else max(hi, v))


def _ghost_words() -> str:
    """The remedy for a curve that does not see far enough, and what it costs, in words."""
    return (
        f"a larger --ghost-factor (about {GHOST_BYTES_PER_KEY_PER_STEP} B of agent memory per tracked "
        "key for each step)"
    )


def memory_answer(subject: Subject, b: Basis, target: float) -> SizingAnswer:
    mem = b.main.inverse(target)
    at_least = None
    limit = None
    rec = hysteresis.Recommendation(None, False, 0, 0)
    if mem is None:
        if _warming(b):
            # memcached has evicted nothing yet: the curve ends near today's fill, a bound only
            status = "above_curve"
            at_least = _ceil(b.main.x_max)
            msg = (
                f"a hit rate of {pct(target)} needs {_more_than(b, b.main.x_max)} as far as the agent has "
                f"seen (the curve reaches {pct(b.main.y_max)} there); it sees further once memcached is full"
            )
        elif _ghost_filling(b):
            # the curve's end is the ghost's reach, not a measured plateau: a bound, not a no
            status = "above_curve"
            reach = float(b.ghost_reach_bytes or 0.0)
            bound = max(reach, float(b.info.current_bytes or 0))
            at_least = _ceil(bound)
            msg = (
                f"a hit rate of {pct(target)} needs {_more_than(b, bound)}: the agent's ghost sees "
                f"only that far so far (the curve reaches {pct(b.main.y_max)}); it sees out to "
                f"{hb(b.main.x_max)} once memcached has evicted more, or further with {_ghost_words()}"
            )
        elif _levelled_off(b):
            status = "unreachable"
            msg = (
                f"no memory size reaches a hit rate of {pct(target)}: the curve levels off at "
                f"{pct(b.main.y_max)} (from {hb(b.main.x_max)} on)"
            )
            if b.ttl_aware:  # issue 16: what caps it is the TTLs, not memory
                msg += "; it is TTL-aware: reads of items past their TTL miss at any size"

        else:
            status = "above_curve"
            at_least = _ceil(b.main.x_max)
            msg = (
                f"a hit rate of {pct(target)} needs {_more_than(b, b.main.x_max)} (the curve reaches "
                f"{pct(b.main.y_max)} there); to see further, run the agent with {_ghost_words()}"
            )
    else:
        status = "ok"
        limit = _limit(b, mem)
        bmin = b.conf_high.inverse(target) if b.conf_high else None
        bmax = b.conf_low.inverse(target) if b.conf_low else None
        range_txt = (
            f" ({percent(band_model.CONFIDENCE, 0)} band {hb(min(bmin, mem))} – "
            + (hb(max(bmax, mem)) if bmax is not None else f"more than {hb(b.main.x_max)}")
            + ")"
            if bmin is not None
            else ""
        )
        msg = f"a hit rate of {pct(target)} needs {hb(mem)}: {_set_m(b, limit)}{range_txt}, {_tail(b)}"
        raw = [f.inverse(target) for f in b.history] or [mem]
        limits = [None if r is None else float(_limit(b, r)) for r in raw]
        if b.history and len(b.history_ends) == len(b.history):
            rec = hysteresis.recommend_periodic(b.history_ends, limits)
        else:
            rec = hysteresis.recommend(limits)
    band = _band(b)
    if b.conf_low is not None and b.conf_high is not None:
        x = mem if mem is not None else b.main.x_max
        hr_min, hr_max = _clamp(b.conf_low(x), b.main(x), b.conf_high(x))
        m_min = m_max = None
        if mem is not None:
            lo_m = b.conf_high.inverse(target)
            hi_m = b.conf_low.inverse(target)
            m_min, m_max = _clamp(lo_m, mem, hi_m)
            if lo_m is None:  # cannot happen: the optimistic side reaches what the curve reaches
                m_min = mem
        band = _band(
            b,
            memory_bytes_min=_ceil(m_min),
            memory_bytes_max=_ceil(m_max),
            hit_rate_min=hr_min,
            hit_rate_max=hr_max,
        )
        if status == "ok":
            msg = msg + _band_words(b)
    if _warming(b):
        assert b.fill is not None
        msg = f"{b.fill.describe()}: the answer is provisional until then; {msg}"
        status = "warming_up"
        rec = hysteresis.Recommendation(rec.memory_limit_bytes, False, rec.changes, rec.windows)
    msg = _stats_only_first(b, msg)
    outside = (
        memlimit.hash_table_bytes(b.items_now * mem / b.info.current_bytes)
        if mem is not None and b.items_now and b.info.current_bytes
        else None
    )
    return SizingAnswer(
        subject=subject,
        question="memory_for_hit_ratio",
        status=status,
        basis=b.basis,
        policy=b.policy,
        target_hit_ratio=target,
        memory_bytes=_ceil(mem),
        memory_limit_bytes=limit,
        memory_bytes_at_least=at_least,
        memory_limit_bytes_at_least=_limit(b, at_least) if at_least is not None else None,
        recommended_memory_limit_bytes=rec.memory_limit_bytes,
        stable=rec.stable if rec.memory_limit_bytes is not None else None,
        outside_memory_limit_bytes=outside,
        band=band,
        curve=b.fresh_info(),
        message=msg,
        **_facts(b),
    )


def ratio_answer(subject: Subject, b: Basis, memory: float) -> SizingAnswer:
    hr = b.main(memory)
    # Past the ghost's reach the curve is held flat (nothing measured there yet), and past its last
    # point it is flat by construction: either way the hit rate there is only a lower bound.
    reach = observed_max_bytes(b.ghost_reach_bytes, b.main.x_max, b.info.current_bytes)
    past_reach = reach is not None and memory > reach * (1 + 1e-9)
    bound = memory > b.main.x_max or past_reach
    band = _band(b)
    if b.conf_low is not None and b.conf_high is not None:
        lo, hi = _clamp(b.conf_low(memory), hr, b.conf_high(memory))
        band = _band(b, hit_rate_min=lo, hit_rate_max=None if bound else hi)
    at_least = None
    if memory > b.main.x_max:
        status, at_least = "above_curve", hr
        msg = (
            f"{hb(memory)} is past the curve's last point ({hb(b.main.x_max)}); "
            f"the hit rate there is at least {pct(hr)}; "
            + (
                # memcached has evicted nothing yet: the curve ends near today's fill, not at the ghost
                "it sees further once memcached is full"
                if _warming(b)
                else f"to see further, run the agent with {_ghost_words()}"
            )
            + f"; {_tail(b)}"
        )
    elif reach is not None and past_reach:
        status, at_least = "above_curve", hr
        msg = (
            f"{hb(memory)} is past what the agent's ghost sees so far ({hb(reach)}; the curve is held "
            f"flat from there): the hit rate there is at least {pct(hr)}; it sees out to "
            f"{hb(b.main.x_max)} once memcached has evicted more, or further with {_ghost_words()}; "
            f"{_tail(b)}"
        )
    else:
        status = "ok"
        rng = (
            f" ({percent(band_model.CONFIDENCE, 0)} band {pct(band.hit_rate_min)}–{pct(band.hit_rate_max)})"
            if band.hit_rate_min is not None and band.hit_rate_max is not None
            else ""
        )
        msg = f"{hb(memory)} gives a hit rate of {pct(hr)}{rng}, {_tail(b)}{_band_words(b)}"
    if _warming(b):
        assert b.fill is not None
        msg = f"{b.fill.describe()}: the answer is provisional until then; {msg}"
        status = "warming_up"
    msg = _stats_only_first(b, msg)
    return SizingAnswer(
        subject=subject,
        question="hit_ratio_at_memory",
        status=status,
        basis=b.basis,
        policy=b.policy,
        memory_bytes=_ceil(memory),
        memory_limit_bytes=_limit(b, memory),
        hit_ratio=hr,
        hit_ratio_at_least=at_least,
        band=band,
        curve=b.fresh_info(),
        message=msg,
        **_facts(b),
    )


def nodes_answer(
    subject: Subject, b: Basis, cc: ClusterFacts, size: int, target: float, policy: str | None
) -> SizingAnswer:
    """Nodes of `size` bytes for a target: the worker's node curve when it was made for this node
    size (it accounts for how keys spread over nodes), else the memory answer over the node size."""
    ans = memory_answer(subject, b, target)
    nodes: int | None = None
    if (
        policy is None
        and cc.curve_node_size == size
        and cc.node_counts
        and cc.node_hit_ratios
        and len(cc.node_counts) == len(cc.node_hit_ratios)
    ):
        nodes = next(
            (n for n, h in sorted(zip(cc.node_counts, cc.node_hit_ratios, strict=True)) if h >= target), None
        )
    if nodes is None and ans.memory_bytes is not None:
        nodes = max(1, math.ceil(ans.memory_bytes / size))

    def count(mem: float | None) -> int | None:
        return None if mem is None else max(1, math.ceil(mem / size))

    # the node band: the memory band over the node size, on either side of the node answer
    lo_n, hi_n = count(ans.band.memory_bytes_min), count(ans.band.memory_bytes_max)
    if nodes is not None:
        lo_n = None if lo_n is None else min(lo_n, nodes)
        hi_n = None if hi_n is None else max(hi_n, nodes)
    band = ans.band.model_copy(update=dict(nodes_min=lo_n, nodes_max=hi_n if lo_n is not None else None))
    status: str
    if nodes is None:
        msg = ans.message
        status = ans.status if ans.status != "ok" else "unreachable"
    else:
        msg = _stats_only_first(
            b, f"a hit rate of {pct(target)} needs {counted(nodes, 'node')} of {hb(size)}, {_describe(b)}"
        )
        status = "ok"
    return ans.model_copy(
        update=dict(
            question="nodes_for_hit_ratio",
            nodes=nodes,
            node_size_bytes=size,
            status=status,
            band=band,
            message=msg,
            # -m per node: the node size in whole MiB
            memory_limit_bytes=memlimit.limit_for_bytes(size, 0, []) if nodes is not None else None,
            recommended_memory_limit_bytes=None,
            stable=None,
        )
    )


def best_basis(db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> Basis | None:
    """The cached basis of GET /sizing/{servers|clusters}/{id}/memory (best curve, no policy), for
    callers outside the sizing routes; None while the subject has no curve yet."""
    try:
        if kind == "server":
            return cached(
                server_key(org_id, subject_id, "best", None),
                lambda: server_basis(db, org_id, subject_id, "best", None),
            )
        b, _ = cached(
            cluster_key(org_id, subject_id, None), lambda: cluster_basis(db, org_id, subject_id, None)
        )
        return b
    except ApiError as exc:
        if exc.code == "not_enough_data":
            return None
        raise


def target_answer(
    db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID, target: float
) -> SizingAnswer | None:
    """The answer of GET /sizing/{servers|clusters}/{id}/memory from the same cached fitted curve
    (cluster overview, metrics); None while the subject has no curve yet."""
    b = best_basis(db, kind, org_id, subject_id)
    return None if b is None else memory_answer(Subject(type=kind, id=subject_id), b, target)


def drawn_band(
    db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID, xs: list[float], ys: list[float]
) -> tuple[list[float], list[float]] | None:
    """The band the curve endpoints give with a drawn curve (sizes xs, hit rates ys): the sizing
    answer's band (same cached basis, same model), so the chart's band and the answer's agree.
    None while the subject has no answer."""
    b = best_basis(db, kind, org_id, subject_id)
    return None if b is None else curve_band(b, xs, ys)


def memory_for_target(db: Session, c: Cluster) -> SizingAnswer | None:
    """The cluster's target answer (None without a curve), so the overview and the sizing API agree."""
    return target_answer(db, "cluster", c.org_id, c.id, c.target_hit_ratio)
