"""The windows an answer rests on, as stored rows become them (pure): which curve of a window an
answer reads, which windows weigh together (one data basis, one TTL model), and a server's Basis
from its recent windows (basis_from_windows, use_windows), without the database: the accuracy
benchmark and the recorded-window tests call these, so what they check is what the API answers."""

import math
from collections.abc import Callable
from datetime import datetime
from typing import Any

from hitcurve.core.domain import NotEnoughDataError
from hitcurve.models import ServerCurve
from hitcurve.rules import band as band_model
from hitcurve.rules import hysteresis, memlimit, warmup, windows
from hitcurve.rules.curves import Pchip, clean
from hitcurve.schemas.sizing import CurveInfo, CurveKind, DataBasis
from hitcurve.sizing.band import set_band
from hitcurve.sizing.basis import Basis


def pick_curve(
    kind: CurveKind, calibrated: list[float] | None, optimal: list[float] | None, proportional: list[float]
) -> tuple[list[float], str]:
    if kind in ("best", "calibrated") and calibrated:
        return calibrated, "calibrated"
    if kind == "calibrated":
        raise NotEnoughDataError(
            "no calibrated curve yet (it needs a measured hit ratio); use curve=proportional"
        )
    if kind == "optimal":
        if not optimal:
            raise NotEnoughDataError("no optimal-allocation curve for this subject")
        return optimal, "estimate"
    return proportional, "estimate"


def curve_ys(c: ServerCurve, kind: CurveKind) -> list[float] | None:
    try:
        return pick_curve(kind, c.hit_ratio_calibrated, c.hit_ratio_optimal, c.hit_ratio_proportional)[0]
    except NotEnoughDataError:
        return None


def window_curves(rows: list[Any], kind: CurveKind) -> list[windows.WindowCurve]:
    """Stored curves with their window's reads and loss (curves_crud.recent_server_windows rows)
    as the windows rules weigh them."""
    wins = []
    for r in rows:
        ys = curve_ys(r.ServerCurve, kind)
        cx, cy = clean(list(r.ServerCurve.sizes_bytes), ys or [])
        if not cx:
            continue
        wins.append(
            windows.WindowCurve(
                r.ServerCurve.window_end,
                cx,
                cy,
                int(r.cmd_get),
                float(r.loss_ratio),
                bool(r.flagged),
                int(r.ServerCurve.current_bytes),
                r.ServerCurve.measured_hit_ratio,
                reach_bytes((r.ServerCurve.calibration or {}).get("ghost_reach_bytes")),
                band_model.reported_filters((r.ServerCurve.calibration or {}).get("ghost_filters")),
                getattr(r, "flag_detail", None),
            )
        )
    return wins


def reach_bytes(v: object) -> float | None:
    return float(v) if isinstance(v, int | float) and math.isfinite(v) and v > 0 else None


def one_model(rows: list[Any], kind: CurveKind, ttl_of: Callable[[Any], bool] | None = None) -> list[Any]:
    """The windows an answer may weigh together: the newest window's basis (a stats-only model is
    never averaged with measured curves; an agent that regains `watch` moves the answer to watch
    windows) and, but for the optimal curve, its TTL-aware or LRU model. ttl_of: a row's
    model (default: its ServerCurve's calibration)."""
    if not rows:
        return rows
    model = ttl_of or (lambda r: ttl_model(r.ServerCurve))
    rows = [r for r in rows if r.basis == rows[-1].basis]
    if kind != "optimal":
        ttl = model(rows[-1])
        rows = [r for r in rows if model(r) == ttl]
    return rows


def ttl_model(c: ServerCurve) -> bool:
    """The stored curve's model is the agent's merged TTL-aware curve (hitcurve/rules/ttl.py)."""
    return bool((c.calibration or {}).get("ttl_aware"))


def basis_from_windows(
    wins: list[windows.WindowCurve],
    *,
    basis: str = "calibrated",
    classes: dict[datetime, list[memlimit.ClassNow]] | None = None,
    fill: warmup.FillState | None = None,
    limit_bytes: int | None = None,
    errors_pp: list[float] | None = None,
    data_basis: DataBasis = "watch",
) -> Basis | None:
    """A server's answer basis from its recent windows and facts, without the database (pure):
    what server_basis builds from stored rows, for the accuracy benchmark and the tests that feed
    recorded windows. `wins` oldest first; `classes`: each window's slab classes by window end (the
    -m model reads those of the newest window the answer rests on); errors_pp: the server's
    accuracy record, newest first (the band's drift)."""
    if not wins:
        return None
    last = wins[-1]
    main = Pchip.fit(last.sizes_bytes, last.hit_ratios)
    b = Basis(
        main,
        basis,
        None,
        CurveInfo(
            computed_at=last.window_end,
            window_end=last.window_end,
            age_seconds=0.0,
            current_bytes=last.current_bytes,
            measured_hit_ratio=last.measured_hit_ratio,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
    )
    comb = use_windows(b, wins)
    if comb is not None and classes:
        b.classes = list(classes.get(comb.newest.window_end, []))
    b.items_now = sum(c.items for c in b.classes)
    b.fill = fill
    b.limit_bytes = limit_bytes
    b.data_basis = data_basis
    set_band(b, list(errors_pp or []))
    return b


def use_windows(b: Basis, wins: list[windows.WindowCurve]) -> windows.Combined | None:
    """The answer's curve from the server's recent windows (oldest first; pure): the combined
    curve (hitcurve.rules.windows: a quiet or lossy window never replaces a good curve), the history the
    recommended limit's hysteresis runs over, and the facts of the newest window used. The
    accuracy benchmark (bench/accuracy) calls this too, so its table is what the API answers."""
    ends = [w.window_end.timestamp() for w in wins]
    first = hysteresis.needed_from(ends)  # older windows do not change the recommendation
    # the recommended limit moves on good windows only: a quiet or lossy one answered nothing
    ok = [v is None for v in windows.verdicts(wins)]
    kept = [i for i in range(first, len(wins)) if ok[i]] or list(range(first, len(wins)))
    b.history = [Pchip.fit(wins[i].sizes_bytes, wins[i].hit_ratios) for i in kept]
    b.history_ends = [ends[i] for i in kept]
    b.history_current = [float(wins[i].current_bytes) for i in kept]
    # the curve the answer read as of each of the last windows the -m to set must have held over
    # (sizing.headline.answered_then): a live -m 32 memcached's answer said "unknown" for two
    # windows whose own curves reached 90 % within what they had seen (combined with the windows
    # just after the fill, they did not), so its first known answer counted as held and opened a
    # memory alert that the next window resolved
    comb = windows.combine(wins)
    last = len(kept) - hysteresis.HOLD_WINDOWS
    then = [
        (comb if i == len(wins) - 1 else windows.combine(wins[: i + 1])) if n >= last else None
        for n, i in enumerate(kept)
    ]
    b.history_answer = [Pchip.fit(c.sizes_bytes, c.hit_ratios) if c is not None else None for c in then]
    b.history_reach = [c.newest.ghost_reach_bytes if c is not None else None for c in then]
    if comb is None:
        return None
    b.main = Pchip.fit(comb.sizes_bytes, comb.hit_ratios)
    b.windows_used = len(comb.used)
    b.windows_note = comb.describe()
    b.ghost_loss_ratio = max(comb.loss_ratio, windows.ghost_loss(wins))
    b.ghost_reach_bytes = comb.newest.ghost_reach_bytes
    b.ghost_filters = comb.newest.ghost_filters
    b.info = b.info.model_copy(
        update={
            "window_end": comb.newest.window_end,
            "current_bytes": comb.newest.current_bytes,
            "measured_hit_ratio": comb.measured_hit_ratio,
            "max_bytes": round(b.main.x_max),
            "max_hit_ratio": b.main.y_max,
            "stream_loss_ratio": comb.loss_ratio,
            "stream_loss_flagged": any(w.flagged for w in wins if w.window_end in comb.used),
        }
    )
    return comb
