"""Is memcached still filling its memory? (pure; the agent's per-window `memory` object)

A memcached that has not taken all of `-m` evicts nothing: its hit rate and its curve still grow
window by window, and sizing on them would say "beyond the curve" or "critical" for a server that
is merely new. A server is warming up until its memory is full and its curve has settled: two
consecutive full windows, or a first window that was already full (the agent started beside a
warm memcached). How long until full comes from the fill rate over the last few windows.
"""

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from hitcurve.memlimit import human_bytes

SETTLE_WINDOWS = 2  # consecutive full windows before the curve counts as settled
RATE_WINDOWS = 5  # windows the fill rate is measured over


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
            f", full in about {_duration(self.full_in_seconds)}" if self.full_in_seconds is not None else ""
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
        recent = [s for s in samples[-RATE_WINDOWS:] if s.full is not None]
        first = recent[0]
        dt = (last.window_end - first.window_end).total_seconds()
        grown = last.total_malloced - first.total_malloced
        if dt > 0 and grown > 0:
            full_in = max(0, round((last.limit_maxbytes - last.total_malloced) / (grown / dt)))
    return FillState(not settled, ratio, full_in, last.total_malloced, last.limit_maxbytes)


def _duration(s: int | None) -> str:
    if s is None:
        return "?"
    if s < 90:
        return f"{max(1, s)} s"
    if s < 90 * 60:
        return f"{round(s / 60)} min"
    return f"{s / 3600:.1f} h"
