"""A recommended memory limit that an autoscaler can follow without flapping (pure).

Each window gives a raw answer (the `-m` for the target from that window's curve). The
recommendation starts at the first raw answer and moves only when the raw answer has stayed
outside the hysteresis band -- more than BAND_FRACTION (10 %) and more than BAND_MIN_BYTES (2 MiB)
away from the recommendation -- for HOLD_WINDOWS (3) consecutive windows, all on the same side.
It then moves to the median of those windows, in whole MiB. `stable` says the last HOLD_WINDOWS
raw answers were all inside the band (and there were that many).

Windows without a raw answer (no curve, or a target above the curve without a lower bound) are
skipped: they neither count toward a move nor break a run.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

BAND_FRACTION = 0.10
BAND_MIN_BYTES = 2 << 20
HOLD_WINDOWS = 3
MIB = 1 << 20


@dataclass(frozen=True)
class Recommendation:
    memory_limit_bytes: int | None
    stable: bool
    changes: int  # how often the recommendation moved over the given windows
    windows: int  # raw answers it rests on


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


def recommend(raw_answers: Sequence[float | None]) -> Recommendation:
    """The recommendation after the given raw answers (oldest first)."""
    seen = [float(r) for r in raw_answers if r is not None and math.isfinite(r) and r > 0]
    if not seen:
        return Recommendation(None, False, 0, 0)
    rec = float(_whole_mib(seen[0]))
    changes = 0
    run: list[float] = []
    side = 0
    for r in seen[1:]:
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
    tail = seen[-HOLD_WINDOWS:]
    stable = len(seen) >= HOLD_WINDOWS and all(_outside(r, rec) == 0 for r in tail)
    return Recommendation(int(rec), stable, changes, len(seen))
