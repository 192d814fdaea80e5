"""Recorded windows (bench/accuracy/bench_accuracy.py --record-windows) read back as the API
reads stored ones: after each window, the answer basis the sizing routes would build
(hitcurve.sizing.recent_windows.basis_from_windows over the newest HISTORY_WINDOWS windows)."""

from collections.abc import Iterator
from datetime import datetime

from hitcurve.rules import hysteresis, warmup, windows
from hitcurve.rules.memlimit import ClassNow
from hitcurve.sizing.basis import Basis
from hitcurve.sizing.recent_windows import basis_from_windows


def bases(recs: list[dict]) -> Iterator[Basis]:
    """The basis after each recorded window, oldest first."""
    wins: list[windows.WindowCurve] = []
    classes: dict[datetime, list[ClassNow]] = {}
    fills: list[warmup.FillSample] = []
    errors: list[float] = []
    for r in recs:
        end = datetime.fromisoformat(r["window_end"])
        wins.append(
            windows.WindowCurve(
                end,
                r["sizes_bytes"],
                r["hit_ratios"],
                r["reads"],
                r["loss_ratio"],
                r["flagged"],
                r["current_bytes"],
                r["measured_hit_ratio"],
                r.get("ghost_reach_bytes"),  # not in recordings made before the bench kept it
            )
        )
        classes[end] = [ClassNow(*c) for c in r["classes"]]
        m = r["memory"]
        if m:
            fills.append(warmup.FillSample(end, m["total_malloced"], m["limit_maxbytes"], m["full"]))
        if r["error_pp"] is not None:
            errors.insert(0, r["error_pp"])
        b = basis_from_windows(
            wins[-hysteresis.HISTORY_WINDOWS :],
            classes=classes,
            fill=warmup.fill_state(fills[-10:]) if fills else None,
            limit_bytes=m["limit_maxbytes"] if m else None,
            errors_pp=errors[:60],
        )
        assert b is not None
        yield b
