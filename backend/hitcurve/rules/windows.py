"""Which recent windows an answer rests on, and their curve combined (pure).

One quiet window (traffic stopped) or one lossy window (right after an agent restart) must not
replace a good curve. A window counts as good when it saw at least MIN_READS reads and at least
QUIET_FRACTION of the median reads of the recent windows, and its stream loss was not flagged.
The answer's curve is the reads-weighted mean of the good windows among the newest RECENT_WINDOWS,
on the newest good window's sizes (a curve only counts at sizes it covers; a running maximum keeps
the mean non-decreasing). With no good window among them, the newest good window further back
stands in; with none at all, the newest window, said to be unreliable.
"""

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from hitcurve.rules.curves import Pchip
from hitcurve.rules.words import counted

MIN_READS = 1000
QUIET_FRACTION = 0.2
RECENT_WINDOWS = 5


class WindowFacts(Protocol):
    """What the good-window rule reads of a window: its curve's points are not needed, so a list
    of many servers (GET /servers) applies the rule without loading curves."""

    @property
    def window_end(self) -> datetime: ...
    @property
    def reads(self) -> int: ...
    @property
    def loss_ratio(self) -> float: ...
    @property
    def flagged(self) -> bool: ...
    @property
    def has_curve(self) -> bool: ...
    @property
    def measured_hit_ratio(self) -> float | None: ...


@dataclass(frozen=True)
class WindowSummary:
    """A window's facts without its curve (WindowFacts)."""

    window_end: datetime
    reads: int
    loss_ratio: float
    flagged: bool
    has_curve: bool
    measured_hit_ratio: float | None
    flag_detail: Mapping[str, Any] | None = None  # why the agent flagged it (flag_reason)


@dataclass(frozen=True)
class WindowCurve:
    window_end: datetime
    sizes_bytes: Sequence[float]
    hit_ratios: Sequence[float]
    reads: int  # gets memcached counted in the window
    loss_ratio: float
    flagged: bool
    current_bytes: int
    measured_hit_ratio: float | None
    # how far the agent's ghost saw in this window, on the memory axis (None: not said)
    ghost_reach_bytes: float | None = None
    # ...and the agent's ghost filters then (its resolution past today; None: not said)
    ghost_filters: int | None = None
    # why the agent flagged it (snapshots.flag_detail; None: not flagged, or an older agent)
    flag_detail: Mapping[str, Any] | None = None

    @property
    def has_curve(self) -> bool:
        return bool(self.sizes_bytes)


@dataclass(frozen=True)
class Combined:
    sizes_bytes: list[float]
    hit_ratios: list[float]
    used: list[datetime]  # window ends the curve rests on
    newest: WindowCurve  # the newest window used
    measured_hit_ratio: float | None  # reads-weighted over the windows used (measured_over)
    loss_ratio: float  # reads-weighted over the windows used
    skipped: dict[datetime, str] = field(default_factory=dict)  # newer windows left out, and why
    reliable: bool = True  # False: no window was good, the newest one stands in

    def describe(self) -> str:
        """Which windows the answer rests on, for the answer's message."""
        n = len(self.used)
        parts = [f"from {n} window{'s' if n != 1 else ''}"]
        if self.skipped:
            why = reasons_text([r for _, r in sorted(self.skipped.items(), reverse=True)])
            parts.append(f"{counted(len(self.skipped), 'newer window')} left out ({why})")
        if not self.reliable:
            parts.append("no recent window had enough traffic without loss: treat it with care")
        return "; ".join(parts)


GHOST_WINDOWS = 4 * RECENT_WINDOWS


def ghost_loss(windows: Sequence[WindowCurve]) -> float:
    """Reads-weighted stream loss of the newest GHOST_WINDOWS windows, lossy ones included: the
    loss behind the curve above today's memory (the ghost holds evictions from many windows back,
    so a window left out of the answer for its loss still shaped the ghost the next ones read)."""
    recent = windows[-GHOST_WINDOWS:]
    reads = sum(max(w.reads, 1) for w in recent)
    return sum(w.loss_ratio * max(w.reads, 1) for w in recent) / reads if recent else 0.0


def _pct(x: object) -> str:
    return f"{100 * x:.1f} %" if isinstance(x, int | float) else "?"


def flag_reason(detail: Mapping[str, Any] | None, loss_ratio: float) -> str:
    """Why the agent flagged a window, with its figures: "stream loss" alone for a window whose agent
    did not say (older agents: loss or a self-check that disagreed)."""
    by = (detail or {}).get("flagged_by") or []
    if not by:
        return "stream loss"
    parts = []
    if "self_check" in by:
        sc = (detail or {}).get("self_check") or {}
        tol = sc.get("tolerance")
        parts.append(
            f"self-check disagreed: the agent read {_pct(sc.get('agent_hit_ratio'))} against memcached's "
            f"{_pct(sc.get('measured_hit_ratio'))}, more than its "
            f"{100 * tol:.1f} pp tolerance"
            if isinstance(tol, int | float)
            else "self-check disagreed"
        )
    if "stream_loss" in by:
        th = (detail or {}).get("threshold")
        above = f", above the agent's {_pct(th)}" if isinstance(th, int | float) else ""
        parts.append(f"stream loss: {_pct(loss_ratio)} of the watch lines lost{above}")
    if "flush" in by:
        parts.append("flush_all: memcached emptied itself")
    return "; ".join(parts)


def reasons_text(newest_first: Sequence[str]) -> str:
    """Why windows were left out, for a note: each kind of reason once, with the newest window's
    figures ("quiet; self-check disagreed: the agent read ...")."""
    kinds: dict[str, str] = {}
    for r in newest_first:
        kinds.setdefault(r.split(":", 1)[0], r)
    # reasons with figures carry commas of their own
    return ("; " if any(":" in r for r in kinds.values()) else ", ").join(sorted(kinds.values()))


def why_not_good(w: WindowFacts, median_reads: float) -> str | None:
    if w.flagged:
        return flag_reason(getattr(w, "flag_detail", None), w.loss_ratio)
    if w.reads < MIN_READS or w.reads < QUIET_FRACTION * median_reads:
        return "quiet"
    if not w.has_curve:
        return "no curve"
    return None


def verdicts(windows: Sequence[WindowFacts]) -> list[str | None]:
    """Why each window (oldest first) is not good, None for the good ones."""
    if not windows:
        return []
    median = statistics.median(w.reads for w in windows[-4 * RECENT_WINDOWS :])
    return [why_not_good(w, median) for w in windows]


@dataclass(frozen=True)
class Picked:
    used: list[int]  # indices of the windows an answer rests on, oldest first
    skipped: dict[datetime, str]  # newer windows left out, and why
    reliable: bool


def pick(windows: Sequence[WindowFacts]) -> Picked | None:
    """The windows an answer rests on (`windows` oldest first, one server); None when there is none."""
    if not windows:
        return None
    verdict = verdicts(windows)
    recent = list(range(max(0, len(windows) - RECENT_WINDOWS), len(windows)))
    good = [i for i in recent if verdict[i] is None]
    reliable = True
    if not good:
        older = [i for i in range(len(windows)) if verdict[i] is None]
        if older:
            good = [older[-1]]
        else:
            good, reliable = [len(windows) - 1], False
    skipped = {
        windows[i].window_end: verdict[i] or "" for i in range(good[-1] + 1, len(windows)) if verdict[i]
    }
    return Picked(good, skipped, reliable)


def measured_over(used: Sequence[WindowFacts]) -> float | None:
    """The measured hit ratio an answer states: memcached's hits over reads of the windows it rests
    on, each window's ratio weighted by its reads. The one meaning of a server's measured hit rate
    (its answers, curve page, the servers list and its cluster's curve), never the newest window's
    own, which a quiet or lossy window would replace."""
    num = wsum = 0.0
    for w in used:
        if w.measured_hit_ratio is not None:
            num += w.measured_hit_ratio * max(w.reads, 1)
            wsum += max(w.reads, 1)
    return num / wsum if wsum else None


def measured_hit_ratio(windows: Sequence[WindowFacts]) -> float | None:
    """measured_over the windows an answer on `windows` (oldest first) rests on."""
    p = pick(windows)
    return measured_over([windows[i] for i in p.used]) if p else None


def measured_to(w: WindowCurve) -> float:
    """How far along the memory axis `w`'s curve is measured: its last point, or its ghost's reach
    when that is shorter (past the reach the agent holds the curve flat: a lower bound, not a
    value). A window contributes to the combined curve only up to here: an older window whose
    ghost had not yet seen as far would otherwise pull a value the newest one measured down
    (a late-attached agent's 4M read 4.6 pp low for a few windows)."""
    top = float(w.sizes_bytes[-1])
    return min(top, w.ghost_reach_bytes) if w.ghost_reach_bytes else top


def combine(windows: Sequence[WindowCurve]) -> Combined | None:
    """`windows` oldest first (one server); None when there is none."""
    p = pick(windows)
    if p is None:
        return None
    good, skipped, reliable = p.used, p.skipped, p.reliable
    newest = windows[good[-1]]
    used = [windows[i] for i in good]
    fits = [(Pchip.fit(w.sizes_bytes, w.hit_ratios), max(w.reads, 1), measured_to(w)) for w in used]
    xs = [float(x) for x in newest.sizes_bytes]
    ys: list[float] = []
    top = 0.0
    for x in xs:
        num = den = 0.0
        for f, wt, reach in fits:
            if x <= reach * (1 + 1e-9):
                num += f(x) * wt
                den += wt
        y = num / den if den else fits[-1][0](x)
        top = max(top, y)
        ys.append(top)
    measured = measured_over(used)
    lsum = sum(max(w.reads, 1) for w in used)
    loss = sum(w.loss_ratio * max(w.reads, 1) for w in used) / lsum
    return Combined(xs, ys, [w.window_end for w in used], newest, measured, loss, skipped, reliable)
