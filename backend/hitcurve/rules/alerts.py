"""Alert rules (pure): which conditions hold for a cluster or a server right now.

Each rule is evaluated for one subject (named in its message: "cluster web", "server
cache-1 (10.0.0.7:11211)"; bytes in automatic units) and returns a Firing or None; the caller
(the worker's alert tasks) keeps at most one open alert per (kind, subject), refreshing it while
it fires and resolving it when the rule, evaluated again, no longer fires. The thresholds
(HITCURVE_ALERT_*) and the curve-error statistic are defined once beside these rules, in
hitcurve.rules.status, which the API's server status uses too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hitcurve.rules import shortage
from hitcurve.rules.memlimit import human_bytes
from hitcurve.rules.percent import hit_rate, percent
from hitcurve.rules.status import Thresholds, blamed_silence_s, mean_abs_error, silence_severity

GIB = float(1 << 30)

# kinds
BELOW_TARGET = "below_target"  # cluster: hit rate under the target although memory should reach it
MEMORY_SHORT = "memory_short"  # cluster: the target needs more memory than is allocated, for certain
SAVINGS = "savings_available"  # cluster: target met with much less memory
STALE_AGENT = "stale_agent"  # server: no snapshot for a while
STREAM_LOSS = "stream_loss"  # server: watch-stream loss above threshold
CURVE_ERROR = "curve_error"  # server: the curve's recent prediction error above threshold

CLUSTER_KINDS = (BELOW_TARGET, MEMORY_SHORT, SAVINGS)
SERVER_SNAPSHOT_KINDS = (STREAM_LOSS, CURVE_ERROR)


@dataclass(frozen=True)
class Firing:
    kind: str
    severity: str  # info | warning | critical
    message: str
    details: dict[str, Any] = field(default_factory=dict)


_pct = hit_rate  # "90 %", "89.8 %": as the dashboard and the API write a hit rate (hitcurve.rules.percent)


def _limit_text(total: float, nodes: int) -> str:
    """A -m summed over the nodes, and per node as the answer gives it: "1.6 GiB (834 MiB on each
    of 2 nodes)"."""
    if nodes <= 1:
        return human_bytes(total)
    return f"{human_bytes(total)} ({human_bytes(total / nodes)} on each of {nodes} nodes)"


def sizing(
    subject: str,
    measured: float | None,
    target: float,
    memory: shortage.Memory | None,
    reachable_max: float,
    reachable_max_bytes: float,
    th: Thresholds,
    unreachable: bool = False,
) -> tuple[Firing | None, Firing | None]:
    """(below_target, memory_short) of one cluster: one alert per cause, never both, from today's
    -m against the cluster's known answer (`memory`, hitcurve.rules.shortage.judge; None while the
    answer is unknown: nothing opens). Memory is memcached's memory limit (-m) summed over the
    nodes; `reachable_max_bytes` the -m at the curve's end (all nodes); `unreachable`: the answer
    says no -m reaches the target (the curve, seen whole, levels off below it).

    `memory_short` fires only when the shortage is certain (shortage.SHORT: even the band's
    optimistic end lies above today's -m); it names the shortfall against the -m to set, and is
    critical when the measured hit rate is more than CRITICAL_BELOW_PP under the target. Today's
    -m inside the band (shortage.AT_EDGE) opens nothing: the answer says "at the edge". And
    `below_target` fires only for a hit rate under the target that today's -m should reach by the
    curve (shortage.ENOUGH): a cause memory does not explain (the curve is off, the traffic
    changed), so adding memory is not the remedy it suggests.
    """
    if memory is None:
        return None, None
    short_pp = (target - measured) * 100 if measured is not None and measured < target else 0.0
    severity = "critical" if short_pp > th.critical_below_pp else "warning"
    measured_txt = (
        f"; measured {_pct(measured)}, {short_pp:.1f} pp below"
        if measured is not None and short_pp > 0
        else ""
    )
    nodes, allocated = memory.nodes, memory.limit_bytes
    needed = memory.to_set_bytes * nodes if memory.to_set_bytes is not None else None
    low = memory.low_bytes * nodes if memory.low_bytes is not None else None
    details: dict[str, Any] = {
        "needed_bytes": needed,
        "band_low_bytes": low,
        "allocated_bytes": allocated,
        "target": target,
        "measured": measured,
        "memory_state": memory.state,
    }
    short: Firing | None = None
    if memory.short and needed is None and unreachable:
        short = Firing(
            MEMORY_SHORT,
            severity,
            f"{subject}: no memory limit (-m) reaches the target hit rate {_pct(target)}: the curve "
            f"levels off at {_pct(reachable_max)}; the limit today is {human_bytes(allocated)}{measured_txt}",
            {**details, "needed_bytes_at_least": None},
        )
    elif memory.short and needed is None:
        short = Firing(
            MEMORY_SHORT,
            severity,
            f"{subject}: the target hit rate {_pct(target)} needs a memory limit (-m) of more than "
            f"{_limit_text(reachable_max_bytes, nodes)}, the most the curve covers "
            f"({_pct(reachable_max)} there); "
            f"the limit today is {human_bytes(allocated)}"
            f"{measured_txt}",
            {**details, "needed_bytes_at_least": reachable_max_bytes},
        )
    elif memory.short and needed is not None:
        assert low is not None
        short = Firing(
            MEMORY_SHORT,
            severity,
            f"{subject}: the target hit rate {_pct(target)} needs a memory limit (-m) of "
            f"{_limit_text(needed, nodes)}; the limit today is {human_bytes(allocated)} "
            f"({human_bytes(needed - allocated)} short, and short even at the band's low end "
            f"{_limit_text(low, nodes)}){measured_txt}",
            details,
        )
    if short is not None or memory.state != shortage.ENOUGH or measured is None or measured >= target:
        return None, short
    below = Firing(
        BELOW_TARGET,
        severity,
        f"{subject}: hit rate {_pct(measured)} is {short_pp:.1f} pp below the target {_pct(target)}, "
        f"although the curve says today's memory limit (-m) of {human_bytes(allocated)} should reach it; "
        "more memory is not the remedy the curve suggests (check the curve's accuracy and recent traffic)",
        {"measured": measured, "target": target, "allocated_bytes": allocated, "needed_bytes": needed},
    )
    return below, None


def savings(
    subject: str,
    needed: float | None,
    allocated: float,
    target: float,
    price_per_gb_month: float,
    th: Thresholds,
) -> Firing | None:
    if needed is None or allocated <= 0 or needed > allocated * (1 - th.savings_fraction):
        return None
    spare = allocated - needed
    monthly = spare / GIB * price_per_gb_month
    money = f", about {monthly:,.2f} per month at the cluster's price" if price_per_gb_month > 0 else ""
    return Firing(
        SAVINGS,
        "info",
        f"{subject}: the target hit rate {_pct(target)} is met with a memory limit (-m) of "
        f"{human_bytes(needed)} of the {human_bytes(allocated)} set today: {human_bytes(spare)} could be "
        f"saved{money}",
        {"needed_bytes": needed, "allocated_bytes": allocated, "target": target, "saving_per_month": monthly},
    )


def stale_agent(
    subject: str,
    last_snapshot_at: datetime | None,
    now: datetime,
    th: Thresholds,
    accepting_since: datetime | None = None,
) -> Firing | None:
    """The agent is silent when it sent no snapshot for th.silent_after_s while the backend
    accepted uploads: silence counts from the later of its last snapshot and `accepting_since`
    (the start of the backend's current up period, hitcurve.core.accepting), so a backend that
    was down blames no agent until its agents had silent_after_s to reconnect and replay their
    spools. None: the whole gap counts (a past period, as the weekly report reads it)."""
    if last_snapshot_at is None:
        return None  # never reported: nothing to be silent about yet
    silent = (now - last_snapshot_at).total_seconds()
    blamed = blamed_silence_s(last_snapshot_at, now, accepting_since)
    severity = silence_severity(blamed, th)
    if severity is None:
        return None
    return Firing(
        STALE_AGENT,
        severity,
        f"{subject}: no snapshot from its agent for {silent / 60:.0f} min",
        {"last_snapshot_at": last_snapshot_at.isoformat(), "silent_s": silent, "blamed_s": blamed},
    )


def stream_loss(subject: str, loss_ratio: float, th: Thresholds) -> Firing | None:
    if not math.isfinite(loss_ratio) or loss_ratio <= th.loss_ratio:
        return None
    return Firing(
        STREAM_LOSS,
        "warning",
        f"{subject}: the agent lost {percent(loss_ratio)} of memcached's watch events in the last window "
        f"(threshold {percent(th.loss_ratio)}); curves from lossy windows under-estimate reuse distances",
        {"loss_ratio": loss_ratio, "threshold": th.loss_ratio},
    )


def curve_error(
    subject: str, recent_errors_pp: list[float], th: Thresholds, warming_up: bool = False
) -> Firing | None:
    """Quiet while memcached is still filling: a warming curve moves window by window by design."""
    if warming_up or len(recent_errors_pp) < th.curve_error_min_windows:
        return None
    mean = mean_abs_error(recent_errors_pp)
    if mean <= th.curve_error_pp:
        return None
    return Firing(
        CURVE_ERROR,
        "warning",
        f"{subject}: the curve's predictions missed the measured hit rate by {mean:.1f} pp (mean absolute "
        f"error over the last {len(recent_errors_pp)} windows, threshold {th.curve_error_pp:.1f} pp)",
        {"mean_abs_error_pp": mean, "windows": len(recent_errors_pp), "threshold_pp": th.curve_error_pp},
    )
