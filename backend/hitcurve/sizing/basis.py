"""A Basis: the fitted curve an answer reads (the worker's stored server or cluster curve, or a
finished policy simulation), with its uncertainty band (hitcurve.rules.band: one band, at its
stated confidence, through today's measured point) and the facts answers state about memcached's
memory. Interpolation is PCHIP (hitcurve.rules.curves)."""

from dataclasses import dataclass, field
from datetime import UTC, datetime

from hitcurve.models import ClusterCurve, ServerCurve
from hitcurve.rules import band as band_model
from hitcurve.rules import knowledge, memlimit, warmup
from hitcurve.rules.curves import Pchip
from hitcurve.schemas.sizing import CurveInfo, DataBasis


@dataclass
class Basis:
    main: Pchip
    basis: str
    policy: str | None
    info: CurveInfo
    note: str | None = None  # how the curve was made, for the message (e.g. the policy correction)
    # The band at its stated confidence (hitcurve.rules.band), through today's measured point (set_band).
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
    # how far the agent's ghost sees now (the newest window used; None: the agent does
    # not say). Past it the curve is held flat, not measured: no "unreachable" there.
    ghost_reach_bytes: float | None = None
    ghost_filters: int | None = None  # the agent's ghost filters then (None: not said)
    windows_used: int | None = None
    windows_note: str | None = None
    # Cluster answers: the nodes the -m is given for (memory_limit_bytes is per node).
    nodes: int | None = None
    # a server with a flash tier: what its curve and answers mean there (sizing.flash.tier_note)
    flash_note: str | None = None
    # What the curve rests on: memcached's watch stream, or its `stats` counters alone
    data_basis: DataBasis = "watch"
    # the curve models expiry (the agent's merged TTL-aware curve, hitcurve/rules/ttl.py)
    ttl_aware: bool = False
    # How far the curve is measured (hitcurve.rules.knowledge; sizing.sight): None for a basis
    # built without the stored windows' facts (a simulated policy, recorded windows)
    sight: knowledge.Sight | None = None
    # the history windows' memory today and how far each was seen (0.0: memcached was filling;
    # None: not said): a window answers the recommended limit only for a target it had seen
    history_current: list[float] = field(default_factory=list)
    history_seen: list[float | None] = field(default_factory=list)
    # the curve the answer read as of each history window (the windows up to it combined,
    # hitcurve.rules.windows.combine) and its ghost reach then; None where not kept (older windows, a
    # cluster's stored curves): that window's own curve stands in (sizing.headline.answered_then)
    history_answer: list[Pchip | None] = field(default_factory=list)
    history_reach: list[float | None] = field(default_factory=list)

    def fresh_info(self) -> CurveInfo:
        """The curve's facts with its age as of now (a Basis may come from the cache)."""
        return self.info.model_copy(update={"age_seconds": (now() - self.info.window_end).total_seconds()})


@dataclass
class ClusterFacts:
    target_hit_ratio: float
    node_size_bytes: int | None
    curve_node_size: int | None
    node_counts: list[int] | None
    node_hit_ratios: list[float] | None


def now() -> datetime:
    return datetime.now(UTC)


def stored_curve_basis(c: ServerCurve | ClusterCurve, main: Pchip, basis: str) -> Basis:
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
            age_seconds=(now() - c.window_end).total_seconds(),
            current_bytes=c.current_bytes,
            measured_hit_ratio=c.measured_hit_ratio,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
        note,
    )
