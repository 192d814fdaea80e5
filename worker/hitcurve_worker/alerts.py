"""Alert rules (pure): which conditions hold for a cluster or a server right now.

Each rule is evaluated for one subject and returns a Firing or None; the caller (tasks) keeps at
most one open alert per (kind, subject), refreshing it while it fires and resolving it when the
rule, evaluated again, no longer fires. The thresholds (HITCURVE_ALERT_*) and the curve-error
statistic are defined once in hitcurve.status, which the API's server status uses too.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from hitcurve.status import Thresholds, mean_abs_error

GIB = float(1 << 30)

# kinds
BELOW_TARGET = "below_target"  # cluster: measured hit ratio under the cluster's target
MEMORY_SHORT = "memory_short"  # cluster: memory needed for the target above what is allocated
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


def below_target(measured: float | None, target: float, th: Thresholds) -> Firing | None:
    if measured is None or measured >= target:
        return None
    short_pp = (target - measured) * 100
    return Firing(
        BELOW_TARGET,
        "critical" if short_pp > th.critical_below_pp else "warning",
        f"hit rate {measured:.1%} is below the target {target:.1%} ({short_pp:.1f} pp short)",
        {"measured": measured, "target": target},
    )


def memory_short(
    needed: float | None, allocated: float, target: float, reachable_max: float, th: Thresholds
) -> Firing | None:
    if allocated <= 0:
        return None
    if needed is None:
        return Firing(
            MEMORY_SHORT,
            "critical",
            f"the target {target:.1%} is not reached within the curve's range "
            f"({reachable_max:.1%} at most); allocated {allocated / GIB:.2f} GiB",
            {"needed_bytes": None, "allocated_bytes": allocated, "target": target},
        )
    if needed <= allocated * (1 + th.shortfall_margin):
        return None
    return Firing(
        MEMORY_SHORT,
        "warning",
        f"the target {target:.1%} needs {needed / GIB:.2f} GiB; {allocated / GIB:.2f} GiB is allocated "
        f"({(needed - allocated) / GIB:.2f} GiB short)",
        {"needed_bytes": needed, "allocated_bytes": allocated, "target": target},
    )


def savings(
    needed: float | None, allocated: float, target: float, price_per_gb_month: float, th: Thresholds
) -> Firing | None:
    if needed is None or allocated <= 0 or needed > allocated * (1 - th.savings_fraction):
        return None
    spare = allocated - needed
    monthly = spare / GIB * price_per_gb_month
    money = f", about {monthly:,.2f} per month" if price_per_gb_month > 0 else ""
    return Firing(
        SAVINGS,
        "info",
        f"the target {target:.1%} is met with {needed / GIB:.2f} GiB of the {allocated / GIB:.2f} GiB "
        f"allocated: {spare / GIB:.2f} GiB could be saved{money}",
        {"needed_bytes": needed, "allocated_bytes": allocated, "target": target, "saving_per_month": monthly},
    )


def stale_agent(last_snapshot_at: datetime | None, now: datetime, th: Thresholds) -> Firing | None:
    if last_snapshot_at is None:
        return None  # never reported: nothing to be silent about yet
    silent = (now - last_snapshot_at).total_seconds()
    if silent <= th.silent_after_s:
        return None
    return Firing(
        STALE_AGENT,
        "warning" if silent < 3600 else "critical",
        f"no snapshot from this server's agent for {silent / 60:.0f} min",
        {"last_snapshot_at": last_snapshot_at.isoformat(), "silent_s": silent},
    )


def stream_loss(loss_ratio: float, th: Thresholds) -> Firing | None:
    if not math.isfinite(loss_ratio) or loss_ratio <= th.loss_ratio:
        return None
    return Firing(
        STREAM_LOSS,
        "warning",
        f"the agent lost {loss_ratio:.1%} of memcached's watch events in the last window "
        f"(threshold {th.loss_ratio:.1%}); curves from lossy windows under-estimate reuse distances",
        {"loss_ratio": loss_ratio, "threshold": th.loss_ratio},
    )


def curve_error(recent_errors_pp: list[float], th: Thresholds) -> Firing | None:
    if len(recent_errors_pp) < th.curve_error_min_windows:
        return None
    mean = mean_abs_error(recent_errors_pp)
    if mean <= th.curve_error_pp:
        return None
    return Firing(
        CURVE_ERROR,
        "warning",
        f"the curve's predictions missed the measured hit rate by {mean:.1f} pp (mean absolute error "
        f"over the last {len(recent_errors_pp)} windows, threshold {th.curve_error_pp:.1f} pp)",
        {"mean_abs_error_pp": mean, "windows": len(recent_errors_pp), "threshold_pp": th.curve_error_pp},
    )
