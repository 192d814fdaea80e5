"""Health thresholds and the status of a server or a cluster: one definition for the alert rules
(backend/hitcurve/rules/alerts.py), the API (GET /servers, GET /clusters, GET /thresholds) and
so the dashboard, which shows what the API says and derives nothing.

The thresholds come from the environment (HITCURVE_ALERT_*); a value that does not parse keeps
its default, so a typo in one variable cannot stop the alert rules. The curve-error warning is on
one statistic, the mean absolute error in percentage points (CURVE_ERROR_STATISTIC): the servers
list's curve_error_pp (24 hours of the accuracy record) and the curve-error alert (the last
windows) both use it.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Literal

from pydantic_settings import SettingsConfigDict

from hitcurve.core.config import LenientSettings

Status = Literal["ok", "warning", "critical", "no_data", "warming_up"]

CURVE_ERROR_STATISTIC = "mean_abs_error_pp"  # mean |predicted - measured|, percentage points
# A server silent for longer than silent_after_s only because the backend was down: its agent's
# spool replays the gap once it reconnects (within silent_after_s of the restart).
RECONNECTING = "reconnecting after the backend restarted"


class Thresholds(LenientSettings):
    model_config = SettingsConfigDict(env_prefix="HITCURVE_ALERT_", extra="ignore", frozen=True)

    loss_ratio: float = 0.05  # stream loss above 5 % of events (the agent's default --loss-threshold)
    curve_error_pp: float = 5.0  # mean absolute prediction error (CURVE_ERROR_STATISTIC)
    curve_error_min_windows: int = 3
    silent_after_s: float = 300.0  # five missed 60 s snapshots
    savings_fraction: float = 0.25  # target met with at most 75 % of today's memory
    # the band's low -m above today's by more than this share before memory counts as short
    # (hitcurve.rules.shortage): a shortage of a -m step stays "at the edge"
    shortfall_margin: float = 0.02
    critical_below_pp: float = 5.0  # below target by more than this: critical

    @classmethod
    def from_env(cls) -> Thresholds:
        return cls()


def mean_abs_error(errors_pp: Sequence[float]) -> float:
    """The curve-error statistic over prediction errors in percentage points."""
    return sum(abs(e) for e in errors_pp) / len(errors_pp)


def blamed_silence_s(last_snapshot_at: datetime, now: datetime, accepting_since: datetime | None) -> float:
    """How long an agent has been silent while the backend accepted uploads: from the later of its
    last snapshot and `accepting_since`, the start of the backend's current up period
    (hitcurve.core.accepting); None counts the whole gap. The agent-silent alert and the servers
    list both read it, so a backend restart blames no agent on either."""
    silent = (now - last_snapshot_at).total_seconds()
    return silent if accepting_since is None else min(silent, (now - accepting_since).total_seconds())


def server_status(
    last_snapshot_at: datetime | None,
    loss_ratio: float | None,
    curve_error_pp: float | None,
    now: datetime,
    th: Thresholds,
    quiet: bool = False,
    warming: bool = False,
    accepting_since: datetime | None = None,
) -> tuple[Status, str | None]:
    """(status, why in a few words) of a server: silent after th.silent_after_s of silence while
    the backend accepted uploads (as the agent-silent alert; a gap the backend's downtime caused
    reads "reconnecting after the backend restarted" instead), warning on stream loss, warming up
    while memcached fills its memory (its hit rate and curve still grow, so a large curve error
    then is expected, not drift), warning on curve error above its threshold."""
    if last_snapshot_at is None:
        return "no_data", "no snapshot yet"
    silence = silence_severity(blamed_silence_s(last_snapshot_at, now, accepting_since), th)
    if silence is not None:
        return silence, "agent silent"
    if (now - last_snapshot_at).total_seconds() > th.silent_after_s:  # the backend was down
        return "ok", RECONNECTING
    if loss_warning(loss_ratio, th):
        return "warning", "events lost"
    if warming:
        return "warming_up", "memcached still filling"
    if curve_error_warning(curve_error_pp, th):
        return "warning", "curve drifting"
    if quiet:  # traffic stopped: nothing wrong, but say so (answers keep the last good windows)
        return "ok", "quiet: answers keep the last good curve"
    return "ok", None


# An agent silent this long is critical (its curve is an hour old), before that a warning: the
# servers list and the agent-silent alert both read silence_severity.
SILENT_CRITICAL_AFTER_S = 3600.0


def silence_severity(blamed_s: float, th: Thresholds) -> Literal["warning", "critical"] | None:
    """The severity of an agent's silence of blamed_s seconds (blamed_silence_s), None while it is
    within th.silent_after_s."""
    if blamed_s <= th.silent_after_s:
        return None
    return "warning" if blamed_s < SILENT_CRITICAL_AFTER_S else "critical"


def loss_warning(loss_ratio: float | None, th: Thresholds) -> bool:
    return loss_ratio is not None and loss_ratio > th.loss_ratio


def curve_error_warning(curve_error_pp: float | None, th: Thresholds) -> bool:
    return curve_error_pp is not None and abs(curve_error_pp) > th.curve_error_pp


def cluster_status(
    has_curve: bool,
    open_alerts: int,
    open_critical: int,
    measured: float | None,
    target: float | None,
    warming: bool = False,
) -> Status:
    """A cluster's status: no curve yet, an open critical alert, memcached still filling on one of
    its nodes (its hit rate is still rising: below target means nothing yet), any open alert or
    below target."""
    if not has_curve:
        return "no_data"
    if open_critical > 0:
        return "critical"
    if warming:
        return "warming_up"
    below = measured is not None and target is not None and measured < target
    return "warning" if open_alerts > 0 or below else "ok"
