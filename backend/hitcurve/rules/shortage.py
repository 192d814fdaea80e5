"""Whether today's memory limit is short of a target (pure): one rule for the memory alerts,
the sizing answers' words (server page, cluster card, e-mail) and /metrics.

An answer is an estimate with a band (hitcurve.rules.band): at its confidence the target may need
as little as the band's optimistic end (band.memory_limit_bytes_min, as -m) or as much as its
pessimistic end. Against today's -m that gives three states:
- "short": even the band's optimistic end lies above today's -m by more than the shortfall margin
  (HITCURVE_ALERT_SHORTFALL_MARGIN, 2 %; past the curve or unreachable: the optimistic side does
  not reach the target within that either): more memory is needed whichever way the estimate
  errs, and by more than a -m step. Only this state opens a memory alert.
- "at_edge": today's -m lies inside the band, below the -m to set, or the band starts within the
  margin above it: the estimate cannot tell a shortage from none, or the shortage is a -m step.
  The answer says so ("at the edge: within the estimate's band"); no alert opens. Without the
  margin the demo's alert (memcached -m 64, band 64.3-79 MiB: its low -m 65) opened and resolved
  as the band's low end moved between -m 64 and 65 from window to window. So is a certain
  shortage while the -m to set is still settling (its hysteresis has not held HOLD_WINDOWS
  windows yet: the answer's `stable` false): the first window after warm-up has a band from the
  benchmark's prior alone (a -m 32 memcached's read -m 33 - past the curve, the next -m 32 - 47),
  and the alert waits until the answer has held. An answer past the curve (or unreachable) has no
  -m to hold: it waits, by the same definition (hysteresis.held), until the last HOLD_WINDOWS
  windows were all past the curve (sizing.headline.past_held): a single window past it, the next
  back on it, opened a memory alert that the next window resolved.
- "enough": today's -m is at or above the -m to set.
An answer not known yet (hitcurve.rules.knowledge: memcached filling, or the agent has not seen out
to the target) has no state: it says nothing about memory, and nothing opens on it.

Memory is in -m summed over a cluster's nodes (per node times the nodes), against the nodes'
limits summed; the words give the -m per node as the answer does.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from hitcurve.rules import knowledge
from hitcurve.rules.hysteresis import HOLD_WINDOWS
from hitcurve.rules.memlimit import MIB
from hitcurve.rules.percent import percent

SHORT = "short"
AT_EDGE = "at_edge"
ENOUGH = "enough"
STATES = (SHORT, AT_EDGE, ENOUGH)


@dataclass(frozen=True)
class Memory:
    """Today's -m against a known answer for a target."""

    state: str  # SHORT | AT_EDGE | ENOUGH
    limit_bytes: float  # today's -m, all nodes
    nodes: int
    to_set_bytes: float | None  # the -m to set per node (None: past the curve, or unreachable)
    low_bytes: float | None  # the band's optimistic -m per node (None: it does not reach the target)
    high_bytes: float | None  # the band's pessimistic -m per node (None: past the curve)
    margin: float = 0.0  # the shortfall margin the state was judged with
    # the answer has held (hysteresis.held: its -m to set stable; past the curve, its windows past
    # it); a shortage waits for it
    settled: bool = True

    @property
    def short(self) -> bool:
        return self.state == SHORT

    @property
    def certain(self) -> bool:
        """The band's low end lies past today's -m by more than the margin (short once settled)."""
        over = self.limit_bytes * (1.0 + max(0.0, self.margin))
        return self.low_bytes is None or self.low_bytes * self.nodes > over

    def words(self) -> str:
        """The one sentence every surface shows for the state."""
        today = _m(self.limit_bytes / self.nodes, self.nodes)
        if self.state == ENOUGH:
            return f"enough: today's {today} reaches the target"
        band = _band(self.low_bytes, self.high_bytes, self.nodes)
        above = self.low_bytes is None or self.low_bytes * self.nodes > self.limit_bytes
        if self.state == AT_EDGE and self.certain and self.to_set_bytes is None:
            return (
                f"at the edge for now: today's {today} does not reach the target within the curve, "
                f"but the answer has not been past the curve for {HOLD_WINDOWS} windows in a row yet: "
                "no alert until it holds"
            )
        if self.state == AT_EDGE and self.certain:
            return (
                f"at the edge for now: the estimate's band ({band}) lies above today's {today}, but "
                "the -m to set is still settling: no alert until it holds"
            )
        if self.state == AT_EDGE and above:
            return (
                f"at the edge: the estimate's band ({band}) starts just above today's {today}, within "
                f"the {percent(self.margin, 0)} alert margin: short by at most a -m step, no alert"
            )
        if self.state == AT_EDGE:
            return (
                f"at the edge: within the estimate's band ({band}); today's {today} lies inside it, so "
                "the estimate cannot tell whether it falls short: no alert"
            )
        if self.to_set_bytes is None:
            why = (
                f"even the band's optimistic side reaches the target only at {_m(self.low_bytes, self.nodes)}"
                if self.low_bytes is not None
                else "not even the band's optimistic side reaches the target within the curve"
            )
            return f"short: today's {today} does not reach the target; {why}"
        return f"short: today's {today} lies below the whole of the estimate's band ({band})"


def _m(per_node: float, nodes: int) -> str:
    each = f" on each of {nodes} nodes" if nodes > 1 else ""
    return f"-m {round(per_node / MIB)}{each}"


def _band(low: float | None, high: float | None, nodes: int) -> str:
    """The band's -m range: "-m 62 – 69", "-m 60 – past the curve"."""
    lo = f"-m {round(low / MIB)}" if low is not None else "-m ?"
    hi = f"{round(high / MIB)}" if high is not None else "past the curve"
    each = f" on each of {nodes} nodes" if nodes > 1 else ""
    return f"{lo} – {hi}{each}"


def judge(
    status: str | None,
    limit_bytes: float | None,
    nodes: int | None,
    to_set_bytes: float | None,
    low_bytes: float | None,
    high_bytes: float | None,
    margin: float = 0.0,
    settled: bool = True,
) -> Memory | None:
    """Today's -m (`limit_bytes`, all nodes) against an answer of `status` whose -m to set is
    `to_set_bytes` and whose band's -m range is `low_bytes` .. `high_bytes` (per node; for an
    answer past the curve or unreachable, `low_bytes` is where the band's optimistic side reaches
    the target, None when it does not). None while the answer is not known or without today's -m.
    An answer without a band (no drift yet) stands on its -m to set alone. `margin`: the share of
    today's -m the band's low end must exceed it by to be short (Thresholds.shortfall_margin);
    `settled`: the answer has held (its `stable`: the -m to set, or past the curve, over
    hysteresis.HOLD_WINDOWS windows), else a shortage is at the edge."""
    if not knowledge.known(status) or not limit_bytes or limit_bytes <= 0:
        return None
    n = max(1, nodes or 1)
    low = low_bytes
    if to_set_bytes is not None:
        low = to_set_bytes if low_bytes is None else min(low_bytes, to_set_bytes)
    m = Memory(AT_EDGE, float(limit_bytes), n, to_set_bytes, low, high_bytes, margin, settled)
    if to_set_bytes is None:  # above_curve or unreachable: no -m on the curve reaches the target
        return replace(m, state=SHORT if m.certain and settled else AT_EDGE, high_bytes=None)
    if m.certain and settled:
        return replace(m, state=SHORT)
    return m if to_set_bytes * n > limit_bytes else replace(m, state=ENOUGH)
