"""One snapshot's curves from loaded inputs (pure: no database, no clock, no environment).

merge -> policy correction -> calibrate -> grade the previous curve -> band -> advice: the rows
`hitcurve.process_snapshot` stores (snapshot_tasks.process loads the inputs and upserts the rows
in one transaction), the accuracy benchmark (bench/accuracy) evaluates, and the e2e/benchmark
seeding runs through the task itself. Keeping it one function is what makes those three see the
same numbers.

Grading uses the interpolation the API answers with (hitcurve.rules.curves.fit_stored: PCHIP through
(0, 0)), so an accuracy record measures the error of the answer an operator got.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

import numpy as np

from hitcurve.rules import band as band_model
from hitcurve.rules import windows
from hitcurve.rules.curves import fit_stored
from hitcurve_worker.calibrate import FLAT_TOLERANCE, Calibration, calibrate, curve_at
from hitcurve_worker.merge import ClassCurve, MergeResult, ghost_filters, ghost_reach_bytes, merge
from hitcurve_worker.policy_correction import Correction
from hitcurve_worker.policy_correction import apply as apply_correction

HISTORY_WINDOWS = 60  # accuracy records behind the band


@dataclass(frozen=True)
class Window:
    """The snapshot a curve is computed for: who, when, and what memcached measured."""

    org_id: uuid.UUID
    server_id: uuid.UUID
    snapshot_id: uuid.UUID
    window_start: datetime
    window_end: datetime
    measured: float | None  # get_hits / gets of the window; None without reads
    reads: int | None = None  # gets of the window; a quiet one (hitcurve.rules.windows) is not graded


@dataclass(frozen=True)
class Previous:
    """The previous calibrated curve of the same memcached instance (what it predicted)."""

    snapshot_id: uuid.UUID
    sizes_bytes: Sequence[float]
    hit_ratio_calibrated: Sequence[float]
    # its slab advice's allocation (class -> pages), which this window's advice keeps while it is
    # within merge.ADVICE_HOLD of the new optimum; None: not stored
    advised: dict[int, int] | None = None


@dataclass(frozen=True)
class TtlCurve:
    """The agent's merged TTL-aware curve (the snapshot's `ttl_points`): bytes of memory
    -> hit ratio with expiry modelled (SHARDS++ over every class). Used as the model curve of a
    window whose traffic carries TTLs (hitcurve/rules/ttl.py): items leave at their TTL, so a read of
    an expired item is a miss at any size and expired items take no memory."""

    sizes_bytes: Sequence[float]
    hit_ratios: Sequence[float]

    def on(self, memory: np.ndarray) -> np.ndarray:
        """The curve on the merge's memory grid: linear from (0, 0), flat past its last size."""
        ys = np.maximum.accumulate(np.clip(np.asarray(self.hit_ratios, dtype=np.float64), 0.0, 1.0))
        return curve_at(np.asarray(self.sizes_bytes, dtype=np.float64), ys, memory)


@dataclass
class Inputs:
    window: Window
    classes: list[ClassCurve]
    correction: Correction | None = None  # memcached's segmented LRU gain (None: why_not)
    why_not: str = "no policy correction for this server yet (it needs sampled trace chunks)"
    previous: Previous | None = None
    history_pp: list[float] = field(default_factory=list)  # earlier calibrated errors, newest first
    # the window's traffic carries TTLs; the model curve is this one, not the classes' join
    ttl_curve: TtlCurve | None = None


@dataclass
class Rows:
    """What to store: server_curves and accuracy_records values (keyed on snapshot_id)."""

    server_curve: dict[str, Any]
    accuracy: dict[str, Any] | None
    merged: MergeResult | None  # None for a stats-only window (no slab-class curves)
    calibration: Calibration


def compute(inp: Inputs, at: datetime) -> Rows:
    """The rows of one snapshot. Raises merge.MergeInputError for classes that cannot be merged."""
    w = inp.window
    res = merge(inp.classes, keep=inp.previous.advised if inp.previous is not None else None)
    # The model: the LRU class curves' proportional join, or, when the window's traffic carries
    # TTLs, the agent's merged TTL-aware curve on the same memory grid (the classes' TTL-aware
    # curves are not joined: hitcurve/rules/ttl.py says why). Page advice stays on the class curves.
    model = res.proportional
    valid_max = res.valid_max_bytes
    if inp.ttl_curve is not None:
        model = inp.ttl_curve.on(res.memory_bytes)
        valid_max = min(valid_max, float(inp.ttl_curve.sizes_bytes[-1]))
    measured = w.measured
    if measured is None:
        correction, why_not = None, "no measured hit ratio: the curve is not calibrated"
    else:
        correction, why_not = inp.correction, inp.why_not
    # memcached's segmented LRU versus the LRU model below today's memory (from the sampled
    # trace), then the size-rescaling calibration through the measured point.
    applied = apply_correction(res.memory_bytes, model, res.current_bytes, inp.classes, correction, why_not)
    # A TTL-aware model is flat wherever memory holds the (expiry-bounded) working set: there the
    # measured point is matched by a ratio, not by a size rescaling (calibrate's flat_tolerance).
    flat = FLAT_TOLERANCE if inp.ttl_curve is not None else None
    # Above today's memory the classes' join is the agent's ghost, on memcached's own size axis:
    # the calibration adds a fixed memory offset there instead of stretching it (calibrate.py).
    cal = calibrate(
        res.memory_bytes,
        applied.curve,
        res.current_bytes,
        measured,
        valid_max,
        flat_tolerance=flat,
        ghost_above=inp.ttl_curve is None,
    )
    main = cal.calibrated if cal.calibrated is not None else model

    accuracy = accuracy_row(w, inp.previous, res.current_bytes, cal, at)

    history = inp.history_pp[:HISTORY_WINDOWS]
    model_error = (cal.predicted - measured) if measured is not None else 0.0
    # the stored band is the answers' one band (hitcurve.rules.band, here without the recent windows'
    # stream loss, which the API adds); the API serves its own, this one is kept with the row
    drift = band_model.drift_estimate(history)
    low, high = band_model.band_curves(
        res.memory_bytes,
        main,
        band_model.BandModel(current_bytes=float(res.current_bytes), drift_pp=drift.pp),
    )
    calibration = cal.as_json() | {
        "drift_pp": drift.pp,
        "history_windows": len(history),
        "model_error_pp": model_error * 100.0,
        "policy_correction": applied.info,
        # how far the agent's ghost sees now, on the memory axis (None: the agent does not
        # say); the API answers "unreachable" only when this covers the curve's end
        # (a TTL-aware model is the agent's SHARDS++ curve: measured over its whole range, no ghost)
        # (on the calibrated curve's axis: the model's reach moved as the calibration moves sizes)
        "ghost_reach_bytes": _on_calibrated(
            cal,
            float(inp.ttl_curve.sizes_bytes[-1])
            if inp.ttl_curve is not None
            else ghost_reach_bytes(inp.classes, res.current_bytes),
        ),
        # ...and its resolution there (the band's ghost span, (reach - today) / F; None: not said)
        "ghost_filters": None if inp.ttl_curve is not None else ghost_filters(inp.classes),
        # what the model curve is ("ttl_aware": the agent's merged TTL-aware curve)
        "ttl_aware": inp.ttl_curve is not None,
    }
    advice = {
        "current_pages": res.current_pages,
        "allocation": {str(k): v for k, v in res.allocation.items()},
        # hit_gain: what each move adds after the ones above it (a ratio; they add up to gain_pp),
        # the gain column of the dashboard's advice
        "moves": [
            {"from_class": m.from_class, "to_class": m.to_class, "pages": m.pages, "hit_gain": m.hit_gain}
            for m in res.moves
        ],
        "current_allocation_hit_ratio": res.current_allocation_hit_ratio,
        "optimal_hit_ratio": res.optimal_at_current,
        "gain_pp": res.rebalance_gain * 100.0,
        "optimal_method": res.optimal_method,
        "optimal_gap_pp": res.optimal_gap * 100.0,
        "note": "model (LRU) hit ratios of the slab classes' curves; memcached's automover moves "
        "pages by eviction age, not by these gains",
    }
    curve = dict(
        org_id=w.org_id,
        server_id=w.server_id,
        snapshot_id=w.snapshot_id,
        window_end=w.window_end,
        sizes_bytes=res.memory_bytes.tolist(),
        hit_ratio_proportional=model.tolist(),  # the model curve (TTL-aware when ttl_aware)
        hit_ratio_optimal=res.optimal.tolist(),
        hit_ratio_calibrated=cal.calibrated.tolist() if cal.calibrated is not None else None,
        band_low=low,
        band_high=high,
        current_bytes=res.current_bytes,
        measured_hit_ratio=measured,
        predicted_hit_ratio=cal.predicted,
        calibration=calibration,
        advice=advice,
        computed_at=at,
    )
    return Rows(curve, accuracy, res, cal)


def _on_calibrated(cal: Calibration, model_bytes: float | None) -> float | None:
    """A size on the model's axis (the ghost's reach) on the calibrated curve's axis."""
    if model_bytes is None or cal.calibrated is None:
        return model_bytes
    return cal.calibrated_bytes(model_bytes)


def accuracy_row(
    w: Window, previous: Previous | None, current_bytes: float, cal: Calibration, at: datetime
) -> dict[str, Any] | None:
    """The window's accuracy record: what the previous curve predicted at today's memory against
    what memcached measured (None without a measurement)."""
    if w.measured is None or (w.reads is not None and w.reads < windows.MIN_READS):
        return None  # a hit ratio of a few reads says nothing about the curve (traffic stopped)
    predicted, basis, from_id = grade(previous, current_bytes, cal)
    return dict(
        org_id=w.org_id,
        server_id=w.server_id,
        snapshot_id=w.snapshot_id,
        predicted_from_snapshot_id=from_id,
        window_start=w.window_start,
        window_end=w.window_end,
        memory_bytes=current_bytes,
        predicted_hit_ratio=predicted,
        measured_hit_ratio=w.measured,
        error_pp=(predicted - w.measured) * 100.0,
        basis=basis,
        computed_at=at,
    )


def grade(
    previous: Previous | None, current_bytes: float, cal: Calibration
) -> tuple[float, str, uuid.UUID | None]:
    """(predicted hit ratio at today's memory, basis, the curve it came from): what the previous
    calibrated curve answered, read like the API reads it; the raw model's own prediction when
    there is no previous curve of this instance."""
    if previous is not None:
        fitted = fit_stored(list(previous.sizes_bytes), list(previous.hit_ratio_calibrated))
        if fitted is not None:
            return float(fitted(float(current_bytes))), "calibrated", previous.snapshot_id
    return cal.predicted, "model", None


# --- stats-only windows (`watch` refused, the agent's Che + Zipf model) ---------------


@dataclass(frozen=True)
class StatsModel:
    """The agent's `stats_model` of a stats-only window (docs/agent-protocol.md): hit ratio over
    items for the whole cache, fitted to memcached's counters, and the memory those items take
    today (`memory.total_malloced`, the slab pages counted toward -m; -m when not reported)."""

    sizes_items: Sequence[float]
    hit_ratios: Sequence[float]
    current_items: float
    memory_bytes: float

    def curve_bytes(self) -> tuple[np.ndarray, np.ndarray]:
        """The model over memory: every item takes today's memory per item (one pool; the model
        knows no slab classes)."""
        per_item = self.memory_bytes / self.current_items
        return (
            np.asarray(self.sizes_items, dtype=np.float64) * per_item,
            np.maximum.accumulate(np.clip(np.asarray(self.hit_ratios, dtype=np.float64), 0.0, 1.0)),
        )


def compute_stats_only(
    w: Window, model: StatsModel, previous: Previous | None, history_pp: list[float], at: datetime
) -> Rows:
    """The rows of a stats-only window. The model passes through the measured point by
    construction (the agent fits it there), so it is stored as the calibrated curve as well; its
    band is the stats-only band (hitcurve.rules.band.STATS_ONLY_PER_DOUBLING_PP, measured by
    bench/accuracy/bench_stats_only.py), wider than a watch-based curve's."""
    xs, ys = model.curve_bytes()
    current = float(model.memory_bytes)
    predicted = float(np.interp(current, np.concatenate(([0.0], xs)), np.concatenate(([0.0], ys))))
    cal = Calibration(
        "stats-model",
        1.0,
        1.0,
        w.measured,
        predicted,
        ys,
        float(xs[-1]),
        ["stats only: Che + Zipf model fitted to memcached's counters by the agent"],
    )
    accuracy = accuracy_row(w, previous, int(current), cal, at)
    drift = band_model.drift_pp(history_pp[:HISTORY_WINDOWS])
    bm = band_model.BandModel.stats_only(current, drift)
    low, high = band_model.band_curves(xs, ys, bm)
    calibration = cal.as_json() | {
        "basis": "stats_only",
        "band_per_doubling_pp": bm.per_doubling_pp,
        "history_windows": len(history_pp[:HISTORY_WINDOWS]),
    }
    curve = dict(
        org_id=w.org_id,
        server_id=w.server_id,
        snapshot_id=w.snapshot_id,
        window_end=w.window_end,
        sizes_bytes=xs.tolist(),
        hit_ratio_proportional=ys.tolist(),
        hit_ratio_optimal=None,
        hit_ratio_calibrated=ys.tolist(),
        band_low=low,
        band_high=high,
        current_bytes=int(current),
        measured_hit_ratio=w.measured,
        predicted_hit_ratio=predicted,
        calibration=calibration,
        advice={"note": "stats only: no slab-class curves, no page advice"},
        computed_at=at,
    )
    return Rows(curve, accuracy, None, cal)
