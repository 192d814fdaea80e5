"""The answer from a stored curve: memory for a target hit ratio, hit ratio at a memory size,
nodes for a cluster target. The API's /sizing routes, the cluster overview and the weekly report
all answer through here, so they cannot disagree.

A Basis is the fitted curve an answer reads (the worker's stored server or cluster curve, or a
finished policy simulation), with its uncertainty band and facts; bases are kept per process for
Settings.hot_cache_ttl_s (basis_cache). Interpolation is PCHIP (hitcurve.curves)."""

import math
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import TypeVar

from sqlalchemy.orm import Session

from hitcurve.core.config import get_settings
from hitcurve.core.errors import ApiError
from hitcurve.core.ttlcache import TTLCache
from hitcurve.crud import curves as curves_crud
from hitcurve.crud.history import recent_mae
from hitcurve.crud.inventory import cluster_server_ids, get_cluster, get_server
from hitcurve.curves import Pchip
from hitcurve.models import Cluster, ClusterCurve, ServerCurve
from hitcurve.schemas.sizing import Band, CurveInfo, CurveKind, SizingAnswer, Subject, SubjectKind

T = TypeVar("T")

# Band half-width when neither the worker's band nor enough accuracy records exist: ROUNDER's worst
# mean absolute error against exact LRU in seed 001, Table 5.1 (5.41 pp), rounded up.
DEFAULT_BAND_PP = 6.0
MIN_ACCURACY_SAMPLES = 3


@dataclass
class Basis:
    main: Pchip
    low: Pchip
    high: Pchip
    band_source: str
    basis: str
    policy: str | None
    info: CurveInfo
    note: str | None = None  # how the curve was made, for the message (e.g. the policy correction)

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


def cached(key: tuple[object, ...], compute: Callable[[], T]) -> T:
    def attempt() -> object:
        try:
            return compute()
        except ApiError as exc:
            if exc.code == "not_enough_data":
                return exc  # remembered like an answer
            raise

    value = basis_cache().get_or_compute(key, attempt)
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


def _clean(xs: list[float], ys: list[float]) -> tuple[list[float], list[float]]:
    """Keep points with finite, strictly increasing sizes > 0; clip ratios to [0, 1], running max."""
    ox: list[float] = []
    oy: list[float] = []
    top = 0.0
    for x, y in zip(xs, ys, strict=False):
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)) or x <= 0:
            continue
        if ox and x <= ox[-1]:
            continue
        top = max(top, min(1.0, max(0.0, y)))
        ox.append(float(x))
        oy.append(top)
    return ox, oy


def _fit(xs: list[float] | None, ys: list[float] | None) -> Pchip | None:
    if not xs or not ys or len(xs) != len(ys):
        return None
    cx, cy = _clean(xs, ys)
    return Pchip.fit(cx, cy) if cx else None


def _shifted(xs: list[float], ys: list[float], pp: float) -> tuple[Pchip, Pchip]:
    cx, cy = _clean(xs, ys)
    return (
        Pchip.fit(cx, [max(0.0, y - pp / 100) for y in cy]),
        Pchip.fit(cx, [min(1.0, y + pp / 100) for y in cy]),
    )


def _accuracy_pp(db: Session, org_id: uuid.UUID, server_ids: list[uuid.UUID]) -> float | None:
    if not server_ids:
        return None
    n, mae = recent_mae(db, org_id, server_ids, _now() - timedelta(days=7))
    return mae if n >= MIN_ACCURACY_SAMPLES and mae is not None else None


def _band(
    db: Session,
    org_id: uuid.UUID,
    server_ids: list[uuid.UUID],
    xs: list[float],
    ys: list[float],
    low: list[float] | None,
    high: list[float] | None,
) -> tuple[Pchip, Pchip, str]:
    lo, hi = _fit(xs, low), _fit(xs, high)
    if lo is not None and hi is not None:
        return lo, hi, "model"
    pp = _accuracy_pp(db, org_id, server_ids)
    lo, hi = _shifted(xs, ys, pp if pp is not None else DEFAULT_BAND_PP)
    return lo, hi, "accuracy_record" if pp is not None else "default"


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
    xs, ys = list(main.x), list(main.y)
    lo, hi, src = _band(db, org_id, server_ids, xs, ys, None, None)
    finished = run.finished_at or run.created_at
    return Basis(
        main,
        lo,
        hi,
        src,
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
    )


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
        raise _not_enough(
            "no curve for this server yet: its agent must upload snapshots and the worker process them"
        )
    ys, basis = _pick(kind, c.hit_ratio_calibrated, c.hit_ratio_optimal, c.hit_ratio_proportional)
    main = _fit(c.sizes_bytes, ys)
    if main is None:
        raise _not_enough("the latest curve of this server has no usable points")
    lo, hi, src = _band(db, org_id, [server_id], c.sizes_bytes, ys, c.band_low, c.band_high)
    b = _stored_curve_basis(c, main, lo, hi, src, basis)
    loss = curves_crud.snapshot_loss(db, c.snapshot_id)
    if loss is not None:
        b.info = b.info.model_copy(
            update={"stream_loss_ratio": float(loss.loss_ratio), "stream_loss_flagged": bool(loss.flagged)}
        )
        if loss.flagged:
            warn = (
                f"the agent lost {loss.loss_ratio:.1%} of memcached's events in this window: "
                "hit ratios above today's memory may be under-estimated"
            )
            b.note = f"{b.note}; {warn}" if b.note else warn
    return b


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
        return _simulated(
            db,
            org_id,
            policy,
            "cluster",
            cluster_id,
            server_ids,
            c.current_bytes if c else None,
            c.measured_hit_ratio if c else None,
        ), facts
    if c is None:
        raise _not_enough(
            "no curve for this cluster yet: assign servers that upload snapshots and wait for the worker"
        )
    main = _fit(c.sizes_bytes, c.hit_ratios)
    if main is None:
        raise _not_enough("the latest curve of this cluster has no usable points")
    lo, hi, src = _band(db, org_id, server_ids, c.sizes_bytes, c.hit_ratios, c.band_low, c.band_high)
    basis = "calibrated" if c.basis == "calibrated" else "estimate"
    return _stored_curve_basis(c, main, lo, hi, src, basis), facts


def _stored_curve_basis(
    c: ServerCurve | ClusterCurve, main: Pchip, lo: Pchip, hi: Pchip, src: str, basis: str
) -> Basis:
    """The answer basis for a curve the worker stored (server or cluster): fit, band, age."""
    note = None
    if isinstance(c, ServerCurve) and basis == "calibrated":
        # The worker adds memcached's segmented-LRU gain (simulated on the sampled trace) below
        # today's memory before calibrating, when it had enough trace (calibration.policy_correction).
        corr = (c.calibration or {}).get("policy_correction") or {}
        if corr.get("applied"):
            reads = int(corr.get("sampled_gets") or 0)
            note = f"corrected for memcached's segmented LRU from {reads:,} sampled reads"
    return Basis(
        main,
        lo,
        hi,
        src,
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


def gib(b: float | None) -> str:
    """Bytes for people: GiB from 1 GiB up, MiB below."""
    if b is None:
        return "?"
    return f"{b / 2**30:.2f} GiB" if b >= 2**30 else f"{b / 2**20:.1f} MiB"


def _describe(b: Basis) -> str:
    what = f"simulated {b.policy}" if b.basis == "simulated" else b.basis
    note = f" ({b.note})" if b.note else ""
    return f"{what} curve{note}, {(_now() - b.info.window_end).total_seconds():.0f} s old"


def memory_answer(subject: Subject, b: Basis, target: float) -> SizingAnswer:
    mem = b.main.inverse(target)
    band = Band(low=b.low.inverse(target), high=b.high.inverse(target), source=b.band_source)
    if mem is None:
        msg = (
            f"a hit ratio of {target:.1%} is above what the curve reaches ({b.main.y_max:.1%} at "
            f"{gib(b.main.x_max)}); unreachable on this basis"
        )
        status = "unreachable"
    else:
        msg = (
            f"a hit ratio of {target:.1%} needs {gib(mem)} "
            f"(band {gib(band.high)}–{gib(band.low)}), {_describe(b)}"
        )
        status = "ok"
    return SizingAnswer(
        subject=subject,
        question="memory_for_hit_ratio",
        status=status,
        basis=b.basis,
        policy=b.policy,
        target_hit_ratio=target,
        memory_bytes=mem,
        band=band,
        curve=b.fresh_info(),
        message=msg,
    )


def ratio_answer(subject: Subject, b: Basis, memory: float) -> SizingAnswer:
    hr = b.main(memory)
    band = Band(low=b.low(memory), high=b.high(memory), source=b.band_source)
    if memory > b.main.x_max:
        status = "beyond_curve"
        msg = (
            f"{gib(memory)} is past the curve's last point ({gib(b.main.x_max)}); "
            "the hit ratio is at least "
            f"{hr:.1%}, {_describe(b)}"
        )
    else:
        status = "ok"
        msg = (
            f"{gib(memory)} gives a hit ratio of {hr:.1%} "
            f"(band {band.low:.1%}–{band.high:.1%}), {_describe(b)}"
        )
    return SizingAnswer(
        subject=subject,
        question="hit_ratio_at_memory",
        status=status,
        basis=b.basis,
        policy=b.policy,
        memory_bytes=memory,
        hit_ratio=hr,
        band=band,
        curve=b.fresh_info(),
        message=msg,
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

    def count(mem: float | None) -> float | None:
        return None if mem is None else float(max(1, math.ceil(mem / size)))

    band = Band(low=count(ans.band.low), high=count(ans.band.high), source=ans.band.source)
    if nodes is None:
        msg = ans.message
        status = "unreachable"
    else:
        msg = f"a hit ratio of {target:.1%} needs {nodes} node(s) of {gib(size)}, {_describe(b)}"
        status = "ok"
    return ans.model_copy(
        update=dict(
            question="nodes_for_hit_ratio",
            nodes=nodes,
            node_size_bytes=size,
            status=status,
            band=band,
            message=msg,
        )
    )


def target_answer(
    db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID, target: float
) -> SizingAnswer | None:
    """The answer of GET /sizing/{servers|clusters}/{id}/memory (best curve, no policy) from the same
    cached fitted curve, for callers outside the sizing routes (cluster overview, metrics); None
    while the subject has no curve yet."""
    try:
        if kind == "server":
            b = cached(
                server_key(org_id, subject_id, "best", None),
                lambda: server_basis(db, org_id, subject_id, "best", None),
            )
        else:
            b, _ = cached(
                cluster_key(org_id, subject_id, None), lambda: cluster_basis(db, org_id, subject_id, None)
            )
    except ApiError as exc:
        if exc.code == "not_enough_data":
            return None
        raise
    return memory_answer(Subject(type=kind, id=subject_id), b, target)


def memory_for_target(db: Session, c: Cluster) -> tuple[str | None, float | None]:
    """(status, memory) of the cluster's target answer, so the overview and the sizing API agree."""
    ans = target_answer(db, "cluster", c.org_id, c.id, c.target_hit_ratio)
    if ans is None:
        return None, None
    return ans.status, ans.memory_bytes if ans.status == "ok" else None
