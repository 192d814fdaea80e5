"""Is memcached still filling its memory? (pure; the agent's per-window `memory` object)

A memcached that has not taken all of `-m` evicts nothing: its hit rate and its curve still grow
window by window, and sizing on them would say "beyond the curve" or "critical" for a server that
is merely new. A server is warming up until its memory is full and its curve has settled: two
consecutive full windows, or a first window that was already full (the agent started beside a
warm memcached). How long until full comes from the fill rate over the last RATE_WINDOWS windows
or RATE_SPAN_S seconds, whichever reaches further back (memcached takes memory one 1 MiB page at
a time, so short windows alone often see no growth). A cluster warms up while any of its nodes
does (`combined`).
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from hitcurve.rules.memlimit import human_bytes

SETTLE_WINDOWS = 2  # consecutive full windows before the curve counts as settled
RATE_WINDOWS = 5  # the fill rate is measured over at least this many windows ...
RATE_SPAN_S = 300  # ... and at least this long (short agent windows: pages come 1 MiB at a time)


@dataclass(frozen=True)
class FillSample:
    """One window's end as the agent saw memcached's memory."""

    window_end: datetime
    total_malloced: int
    limit_maxbytes: int
    full: bool | None  # None: the agent did not say (older agent, or memcached without the stat)


@dataclass(frozen=True)
class FillState:
    warming_up: bool
    fill_ratio: float | None  # total_malloced / limit_maxbytes, capped at 1
    full_in_seconds: int | None  # None when full, unknown, or not filling
    used_bytes: int | None  # total_malloced: slab pages taken, counted toward -m
    limit_bytes: int | None  # -m today (limit_maxbytes)

    def describe(self) -> str:
        if not self.warming_up:
            return ""
        if self.fill_ratio is None or self.used_bytes is None or self.limit_bytes is None:
            return "memcached is still filling its memory"
        if self.fill_ratio >= 1:
            return "memcached's memory just filled; the curve settles over the next window"
        when = (
            f", full in about {duration(self.full_in_seconds)}" if self.full_in_seconds is not None else ""
        )
        return (
            f"memcached still filling: {human_bytes(self.used_bytes)} of {human_bytes(self.limit_bytes)}"
            f"{when}"
        )


def fill_state(samples: Sequence[FillSample]) -> FillState:
    """The state as of the newest sample; `samples` oldest first, one memcached instance."""
    if not samples or samples[-1].full is None:
        last = samples[-1] if samples else None
        return FillState(
            False,
            None,
            None,
            last.total_malloced if last and last.total_malloced > 0 else None,
            last.limit_maxbytes if last else None,
        )
    last = samples[-1]
    ratio = min(1.0, last.total_malloced / last.limit_maxbytes) if last.limit_maxbytes > 0 else None
    run = 0
    for s in reversed(samples):
        if not s.full:
            break
        run += 1
    settled = run >= SETTLE_WINDOWS or run == len(samples)
    full_in = None
    if not last.full:
        known = [s for s in samples if s.full is not None]
        recent = known[-RATE_WINDOWS:]
        first = recent[0]
        for s in reversed(known[:-RATE_WINDOWS]):  # reach back RATE_SPAN_S when windows are short
            if (last.window_end - s.window_end).total_seconds() > RATE_SPAN_S:
                break
            first = s
        dt = (last.window_end - first.window_end).total_seconds()
        grown = last.total_malloced - first.total_malloced
        if dt > 0 and grown > 0:
            full_in = max(0, round((last.limit_maxbytes - last.total_malloced) / (grown / dt)))
    return FillState(not settled, ratio, full_in, last.total_malloced, last.limit_maxbytes)


def combined(states: Sequence[FillState]) -> FillState | None:
    """A cluster's fill from its nodes': warming while any node is; bytes summed over the nodes;
    full when the slowest warming node is (None when one of them cannot say)."""
    if not states:
        return None
    warming = [s for s in states if s.warming_up]
    used = sum(s.used_bytes or 0 for s in states)
    limit = sum(s.limit_bytes or 0 for s in states)
    known = all(s.used_bytes is not None and s.limit_bytes for s in states)
    etas = [s.full_in_seconds for s in warming]
    full_in = max(e for e in etas if e is not None) if etas and all(e is not None for e in etas) else None
    return FillState(
        bool(warming),
        min(1.0, used / limit) if known and limit > 0 else None,
        full_in,
        used if known else None,
        limit if known else None,
    )


def duration(s: int | None) -> str:
    """Seconds for people: "40 s", "4 min", "2.4 h"."""
    if s is None:
        return "?"
    if s < 90:
        return f"{max(1, s)} s"
    if s < 90 * 60:
        return f"{round(s / 60)} min"
    return f"{s / 3600:.1f} h"


def state_of(rows: Sequence[Any]) -> FillState | None:
    """The state from stored windows (crud.curves.recent_fill rows, oldest first: window_end,
    instance_id, total_malloced, limit_maxbytes, memory_full), counting only the newest memcached
    instance (a restart starts filling again). None without rows. Shared by the sizing answer,
    the worker's alert rules and /metrics."""
    if not rows:
        return None
    inst = rows[-1].instance_id
    return fill_state(
        [
            FillSample(r.window_end, int(r.total_malloced or 0), int(r.limit_maxbytes), r.memory_full)
            for r in rows
            if r.instance_id == inst
        ]
    )
