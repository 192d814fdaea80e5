"""What an answer knows (pure): one definition of "unknown until ..." for every answer, card,
alert, e-mail and metric.

A curve is measured only as far as the agent has seen. While memcached fills it evicts nothing:
every miss is a first read, the curve past today's memory is empty, and any bound read from it
is a guess. Once memcached evicts, the agent's ghost holds the keys it evicted since the agent
attached; a read of one of them is placed at today's memory plus its place among those
evictions. So after E evictions the curve is measured out to today's memory x (1 + E / items
today) (Mattson et al., "Evaluation techniques for storage hierarchies", IBM Systems Journal
1970, stack distances; the ghost as in Waldspurger et al., "Cache Modeling and Optimization using
Miniature Simulations", ATC'17 §4), and past that point a miss is a read the agent has not yet
seen come back, not a miss at every size. An agent that saw memcached before its first eviction
reports its ghost complete, and its reach as the whole curve, from the start: the reach by
evictions caps it until the cache has turned over as far as the curve goes (E >= (K - 1) x
items today for a curve out to K x today's memory).

States, for one target:
- "warming_up": memcached is still filling (hitcurve.warmup): unknown until it is full.
- "unknown": full, but the target lies past what the agent has seen so far: unknown until it has
  seen further (the seen part stays below the target).
- known ("ok", "above_curve", "unreachable"): the target lies within the seen part, or the agent
  has seen the whole curve; only then may an answer say "past the curve" or "no memory size
  reaches".
Unknown answers carry no memory figure, no -m and no bound; no alert opens on them; /metrics
exports `target_known` 0 and no memory-for-target or reachable sample.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hitcurve.rules.memlimit import human_bytes
from hitcurve.rules.percent import hit_rate
from hitcurve.rules.warmup import RATE_SPAN_S, FillState, duration

FILLING = "warming_up"
NOT_SEEN = "unknown"
UNKNOWN = (FILLING, NOT_SEEN)
# The seen part counts as reaching the curve's end within this share of it (the merged axis
# rounds to pages; a filled ghost reports K x N).
REACH_SLACK = 0.02


def known(status: str | None) -> bool:
    """An answer of this status says something about memory (ok, above_curve, unreachable)."""
    return status is not None and status not in UNKNOWN


@dataclass(frozen=True)
class Evictions:
    """memcached's evictions since the agent attached, from the stored windows."""

    since_attach: int
    items_now: int  # curr_items at the newest window
    per_second: float | None  # over the last RATE_SPAN_S seconds (None: not evicting, or one window)
    # the agent saw memcached before its first eviction: its ghost says complete and reports the
    # whole curve as seen, so the evictions since then cap what it has seen. An agent that
    # attached to a memcached already evicting reports a reach that grows with what it holds.
    from_first: bool = True

    @property
    def caps(self) -> int | None:
        """The evictions that cap the seen part (None: the agent's reach says it already)."""
        return self.since_attach if self.from_first else None


def evictions(rows: Sequence[Any], baseline: int | None = None) -> Evictions | None:
    """From fill rows (crud.curves.recent_fill: window_end, instance_id, evictions_total,
    curr_items, oldest first) of the newest memcached instance; baseline: evictions_total at the
    instance's first stored window (the agent's attach), when older than the rows. None when the
    agent does not say (older agents send no evictions_total)."""
    if not rows:
        return None
    inst = rows[-1].instance_id
    mine = [r for r in rows if r.instance_id == inst and r.evictions_total is not None]
    if not mine or mine[-1].curr_items is None:
        return None
    last = mine[-1]
    start = baseline if baseline is not None else int(mine[0].evictions_total)
    rate = None
    first = next((r for r in mine if (last.window_end - r.window_end).total_seconds() <= RATE_SPAN_S), last)
    dt = (last.window_end - first.window_end).total_seconds()
    grown = int(last.evictions_total) - int(first.evictions_total)
    if dt > 0 and grown > 0:
        rate = grown / dt
    return Evictions(max(0, int(last.evictions_total) - start), int(last.curr_items), rate, start == 0)


def evictions_at(
    rows: Sequence[Any], baseline: int | None, at: datetime
) -> tuple[int | None, int, bool] | None:
    """(evictions since attach that cap the seen part (Evictions.caps), items, memcached full) as
    of the newest row ending at or before `at` (the same instance as the newest row); None when no
    row says."""
    if not rows:
        return None
    inst = rows[-1].instance_id
    mine = [r for r in rows if r.instance_id == inst and r.evictions_total is not None]
    if not mine:
        return None
    start = baseline if baseline is not None else int(mine[0].evictions_total)
    before = [r for r in mine if r.window_end <= at]
    if not before:
        return None
    r = before[-1]
    evicted = max(0, int(r.evictions_total) - start) if start == 0 else None
    return evicted, int(r.curr_items or 0), bool(r.memory_full)


def seen_bytes(
    current_bytes: float,
    curve_end: float,
    ghost_reach_bytes: float | None,
    evicted: int | None,
    items: int | None,
) -> float:
    """How far the curve is measured on its memory axis: the agent's reported ghost reach, capped
    by the evictions since it attached (today's memory x (1 + evicted / items)), never below
    today's memory nor past the curve's end. Without either fact: the curve's end (as before
    agents said)."""
    seen = curve_end
    if ghost_reach_bytes is not None:
        seen = min(seen, ghost_reach_bytes)
    if evicted is not None and items and items > 0 and current_bytes > 0:
        seen = min(seen, current_bytes * (1.0 + evicted / items))
    return max(min(seen, curve_end), min(current_bytes, curve_end))


@dataclass(frozen=True)
class Sight:
    """What a server's (or a cluster's) curve is measured out to, as of its newest window."""

    fill: FillState | None
    seen_bytes: float  # the curve is measured up to here (memory axis)
    curve_end: float
    current_bytes: float
    evictions: Evictions | None = None

    @property
    def filling(self) -> bool:
        return bool(self.fill and self.fill.warming_up)

    @property
    def whole(self) -> bool:
        """The agent has seen the whole curve (it may say "past the curve" or "unreachable")."""
        return self.seen_bytes >= (1.0 - REACH_SLACK) * self.curve_end

    def status(self, memory_for_target: float | None) -> str | None:
        """FILLING or NOT_SEEN when the answer for a target needing `memory_for_target` bytes of
        this curve (None: not reached on it) is not known yet; None when it is."""
        if self.filling:
            return FILLING
        if memory_for_target is not None and memory_for_target <= self.seen_bytes * (1 + 1e-9):
            return None
        return None if self.whole else NOT_SEEN

    def seen_all_in_seconds(self) -> int | None:
        """How long until the agent has seen the whole curve, at today's eviction rate."""
        e = self.evictions
        if self.whole or e is None or not e.per_second or self.current_bytes <= 0 or e.items_now <= 0:
            return None
        need = e.items_now * (self.curve_end / self.current_bytes - 1.0)
        return max(0, round((need - e.since_attach) / e.per_second))

    def seen_per_minute_bytes(self) -> float | None:
        e = self.evictions
        if e is None or not e.per_second or e.items_now <= 0:
            return None
        return self.current_bytes * e.per_second * 60 / e.items_now

    def until(self, status: str, target: float | None = None) -> str:
        """The "unknown until ..." clause of an answer in state `status` (for a hit-rate `target`
        the seen part stays below)."""
        if status == FILLING:
            f = self.fill
            what = f.describe() if f is not None else "memcached is still filling its memory"
            return f"unknown until memcached is full ({what})"
        hr = f" and stays below {hit_rate(target)} there" if target is not None else ""
        rate = self.seen_per_minute_bytes()
        eta = self.seen_all_in_seconds()
        more = f", about {human_bytes(rate)} further each minute" if rate else ""
        whole = f", all of the curve's {human_bytes(self.curve_end)} in about {duration(eta)}" if eta else ""
        return (
            f"unknown until the agent has seen further past today's memory: it has seen the curve "
            f"up to {human_bytes(self.seen_bytes)} so far{hr}{more}{whole}"
        )


def combined(
    members: Sequence[Sight], fill: FillState | None, current_bytes: float, curve_end: float
) -> Sight:
    """A cluster's sight from its members': filling while any is; seen as far as its least-seen
    member, as a share of its memory (the cluster's x is its members' memory summed)."""
    ratios = [m.seen_bytes / m.current_bytes for m in members if m.current_bytes > 0]
    seen = current_bytes * min(ratios) if ratios else curve_end
    rates = [m.evictions for m in members if m.evictions is not None]
    slowest = None
    if rates and len(rates) == len(members):
        # the member furthest from a whole view sets the pace
        slowest = min(rates, key=lambda e: (e.per_second or 0.0) / max(e.items_now, 1))
    return Sight(
        fill, min(max(seen, min(current_bytes, curve_end)), curve_end), curve_end, current_bytes, slowest
    )
