"""A recommended memory limit that an autoscaler can follow without flapping (pure).

Each window gives a raw answer (the `-m` for the target from that window's curve). The
recommendation starts at the first raw answer and moves only when the raw answer has stayed
outside the hysteresis band -- more than BAND_FRACTION (10 %) and more than BAND_MIN_BYTES (2 MiB)
away from the recommendation -- for HOLD_WINDOWS (3) consecutive windows, all on the same side.
It then moves to the median of those windows, in whole MiB. `stable` says the last HOLD_WINDOWS
raw answers were all inside the band (and there were that many): held(), the one definition of
"has held" that an answer past the curve (no raw answer, no band) waits for too, over its windows'
"past the curve" (sizing.headline.history_past), before a memory alert may open on it.

Windows without a raw answer (no curve, or a target above the curve without a lower bound) are
skipped: they neither count toward a move nor break a run.

The API keeps no state between polls: each answer replays the hysteresis over the windows it
reads. Replaying from the oldest window of a sliding history made the recommendation follow the
raw answer of ~30 windows ago (three changes over 30 polls of a stationary Zipf workload in the
accuracy benchmark). recommend_periodic anchors the replay on a fixed time grid instead: periods
of PERIOD_WINDOWS windows (the windows' median length rounded up to a power of two seconds, so
jitter does not move the grid); the replay starts at the median raw answer of the last complete
period and runs over the current one. Within a period an answer extends the previous one's replay
by one window, exactly as a stateful hysteresis would; only at a period boundary may the start
move (to the median of the period just ended). So on a stationary workload the recommendation
changes at most once per period, i.e. at most once over 30 polls.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

BAND_FRACTION = 0.10
BAND_MIN_BYTES = 2 << 20
HOLD_WINDOWS = 3
MIB = 1 << 20
PERIOD_WINDOWS = 32
# Windows an answer must read for two whole periods whatever the windows' length within a power
# of two (crud.curves.recent_server_windows is called with this).
HISTORY_WINDOWS = 4 * PERIOD_WINDOWS


@dataclass(frozen=True)
class Recommendation:
    memory_limit_bytes: int | None
    stable: bool
    changes: int  # how often the recommendation moved over the given windows
    windows: int  # raw answers it rests on


def held(flags: Sequence[bool]) -> bool:
    """The last HOLD_WINDOWS windows (oldest first) all say the same (and there were that many)."""
    return len(flags) >= HOLD_WINDOWS and all(flags[-HOLD_WINDOWS:])


def _whole_mib(b: float) -> int:
    return max(1, math.ceil(b / MIB - 1e-9)) * MIB


def _outside(raw: float, rec: float) -> int:
    """-1 below the band, +1 above it, 0 inside."""
    half = max(BAND_FRACTION * rec, BAND_MIN_BYTES)
    if raw > rec + half:
        return 1
    if raw < rec - half:
        return -1
    return 0


def _valid(r: float | None) -> bool:
    return r is not None and math.isfinite(r) and r > 0


def recommend(raw_answers: Sequence[float | None]) -> Recommendation:
    """The recommendation after the given raw answers (oldest first), starting at the first."""
    seen = [float(r) for r in raw_answers if r is not None and _valid(r)]
    if not seen:
        return Recommendation(None, False, 0, 0)
    return _replay(seen[0], seen[1:], seen)


def period_seconds(window_ends: Sequence[float]) -> float | None:
    """PERIOD_WINDOWS x the windows' median length rounded up to a power of two seconds (at least
    1 s); None without two distinct window ends."""
    gaps = sorted(b - a for a, b in zip(window_ends, window_ends[1:], strict=False) if b > a)
    if not gaps:
        return None
    length = gaps[len(gaps) // 2]
    return PERIOD_WINDOWS * float(2 ** math.ceil(math.log2(max(length, 1.0))))


def needed_from(window_ends: Sequence[float]) -> int:
    """Index of the first window recommend_periodic needs (the last one ending at or before the
    base period's start; 0 when the windows do not reach back that far): the caller need not
    compute raw answers for older windows."""
    period = period_seconds(window_ends)
    if period is None:
        return 0
    start_of_base = (math.floor(window_ends[-1] / period) - 1) * period
    before = [i for i, t in enumerate(window_ends) if t <= start_of_base]
    return before[-1] if before else 0


def recommend_periodic(window_ends: Sequence[float], raw_answers: Sequence[float | None]) -> Recommendation:
    """The recommendation after the given windows (ends in epoch seconds, oldest first, with each
    window's raw answer), anchored on the period grid (module docstring). Without a complete
    earlier period in the windows (a new server) it replays from the first raw answer."""
    if len(window_ends) != len(raw_answers):
        raise ValueError("one raw answer per window end")
    pairs = [
        (t, float(r)) for t, r in zip(window_ends, raw_answers, strict=True) if r is not None and _valid(r)
    ]
    period = period_seconds(window_ends)
    if not pairs or period is None:
        return recommend(raw_answers)
    k = math.floor(window_ends[-1] / period)
    start_of_current = k * period
    start_of_base = start_of_current - period
    if window_ends[0] > start_of_base:  # the base period is not wholly in the windows
        return recommend(raw_answers)
    base = sorted(r for t, r in pairs if start_of_base < t <= start_of_current)
    if not base:
        return recommend(raw_answers)
    current = [r for t, r in pairs if t > start_of_current]
    return _replay(base[(len(base) - 1) // 2], current, [r for _, r in pairs])


def _replay(start: float, later: Sequence[float], seen: Sequence[float]) -> Recommendation:
    rec = float(_whole_mib(start))
    changes = 0
    run: list[float] = []
    side = 0
    for r in later:
        s = _outside(r, rec)
        if s == 0:
            run, side = [], 0
            continue
        if s != side:
            run, side = [], s
        run.append(r)
        if len(run) >= HOLD_WINDOWS:
            rec = float(_whole_mib(sorted(run)[len(run) // 2]))
            changes += 1
            run, side = [], 0
    stable = held([_outside(r, rec) == 0 for r in seen])
    return Recommendation(int(rec), stable, changes, len(seen))
