"""Calibrate a model (LRU) curve against memcached's measured hit ratio (its band: hitcurve.rules.band).

memcached 1.5+ is not the LRU the agent models (segmented HOT/WARM/COLD, two hits to activate,
automoved slab pages, lazy expiry: research_memcached_watch.md §5). Its curve has roughly the
model's shape but a different *effective capacity*: at memory M it behaves like the LRU model at
s·M. So the calibrated curve is a size rescaling, h_cal(M) = h(s·M), with s chosen so that the
curve passes through the measured point (M_now, measured). Of the sizes where the model reaches
the measured ratio, the one nearest today's memory is taken (the smallest correction). A
vertical shift would instead claim the cache gains hit ratio at zero memory and distort the
saturation level; a rescaling keeps h(0) = 0 and the plateau.

Above today's memory, when the model there is the agent's ghost (`ghost_above`, the slab classes'
join): the ghost places a key at N + the evicted keys newer than it, counted in memcached's own
evictions, so past today's memory its size axis already is memcached's. What the measured point
corrects there is only the offset at today's memory, a fixed amount of memory
Δ = (s - 1)·M_now: h_cal(M) = h(M + Δ) for M > M_now (continuous at M_now, the plateau kept).
Stretching the whole axis by s instead moved every feature above M_now by (s - 1)·M: on the
accuracy bench's scan mix (the model 0.1-0.6 pp under memcached at M, s = 1.006-1.036)
the scan's hit-rate cliff at 4.1 N moved onto 4M, +4.0 pp there, where the uncalibrated model read
memcached's 0.6175 within 0.4 pp in most windows. An LRU model over the whole range (the agent's
TTL-aware SHARDS++ curve, no ghost) keeps the single rescaling.

Edge cases: no measurement (no gets) -> no calibration; measured above the model's maximum ->
the rescaling cannot reach it, so the curve is scaled multiplicatively (h * measured/predicted);
s outside [S_MIN, S_MAX] -> clamped, then a multiplicative correction makes it pass through the
point anyway, and the result says so.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

FloatArray = NDArray[np.float64]

S_MIN = 1.0 / 8
# A model within this (0.2 pp) of its maximum at today's memory is flat there (see calibrate).
FLAT_TOLERANCE = 0.002
S_MAX = 8.0


def curve_at(x: FloatArray, y: FloatArray, q: FloatArray | float) -> FloatArray:
    """Linear interpolation of a curve with (0, 0) prepended, flat past its last point."""
    return np.asarray(np.interp(q, np.concatenate(([0.0], x)), np.concatenate(([0.0], y))), dtype=np.float64)


@dataclass
class Calibration:
    method: str  # "size-scale", "size-scale-clamped", "ratio", "ratio-flat", "shift", "none"
    scale: float  # effective capacity factor s
    ratio: float  # multiplicative correction applied after the rescaling (1 when not needed)
    measured: float | None
    predicted: float  # the model at today's memory
    calibrated: FloatArray | None  # on the model's grid
    valid_max_bytes: float  # beyond this the calibrated curve is extrapolated (held flat)
    notes: list[str] = field(default_factory=list)
    # ghost_above: the memory added above today's instead of the rescaling there, (s - 1)·M_now
    # (None: the rescaling holds over the whole axis)
    offset_above_bytes: float | None = None
    current_bytes: float = 0.0

    def calibrated_bytes(self, model_bytes: float) -> float:
        """The memory on the calibrated curve that reads the model at `model_bytes` (the inverse
        of the size mapping; e.g. the ghost's reach, a model size, on the calibrated axis)."""
        s = self.scale
        if self.offset_above_bytes is not None and model_bytes > s * self.current_bytes:
            return model_bytes - self.offset_above_bytes
        return model_bytes / s

    def as_json(self) -> dict[str, object]:
        return {
            "method": self.method,
            "scale": self.scale,
            "ratio": self.ratio,
            "measured": self.measured,
            "predicted": self.predicted,
            "valid_max_bytes": self.valid_max_bytes,
            "offset_above_bytes": self.offset_above_bytes,
            "notes": self.notes,
        }


def _crossing(x: FloatArray, y: FloatArray, m: float, near: float) -> float:
    """The memory nearest `near` where the (0,0)-prepended piecewise-linear curve equals m."""
    xs = np.concatenate(([0.0], x))
    ys = np.concatenate(([0.0], y))
    # lowest M with h(M) >= m
    j = int(np.searchsorted(ys, m, side="left"))
    if j == 0:
        lo = 0.0
    else:
        y0, y1 = ys[j - 1], ys[j]
        lo = float(xs[j - 1] + (m - y0) / (y1 - y0) * (xs[j] - xs[j - 1])) if y1 > y0 else float(xs[j])
    # highest M with h(M) <= m (the plateau at exactly m, if any)
    k = int(np.searchsorted(ys, m, side="right"))
    if k >= len(ys):
        hi = float(xs[-1])
    else:
        y0, y1 = ys[k - 1], ys[k]
        hi = float(xs[k - 1] + (m - y0) / (y1 - y0) * (xs[k] - xs[k - 1])) if y1 > y0 else float(xs[k - 1])
    return min(max(near, lo), max(lo, hi))


def calibrate(
    memory: FloatArray,
    model: FloatArray,
    current_bytes: float,
    measured: float | None,
    valid_max_bytes: float | None = None,
    flat_tolerance: float | None = None,
    ghost_above: bool = False,
) -> Calibration:
    """ghost_above: the model above today's memory is the agent's ghost (memcached's own size axis,
    module docstring): the rescaling applies up to today's memory, a fixed offset above it.

    flat_tolerance (hit-ratio units; the TTL-aware model passes FLAT_TOLERANCE): when
    the model at today's memory is within it of the model's maximum, today's memory holds the
    whole working set, the measured point says nothing about effective capacity, and a size
    rescaling through it would be arbitrary (a hair below a plateau crosses at its knee): the
    curve is scaled multiplicatively instead."""
    memory = np.asarray(memory, dtype=np.float64)
    model = np.asarray(model, dtype=np.float64)
    valid = float(valid_max_bytes if valid_max_bytes is not None else memory[-1])
    predicted = float(curve_at(memory, model, current_bytes)) if current_bytes > 0 else 0.0
    if measured is None or not math.isfinite(measured):
        return Calibration("none", 1.0, 1.0, None, predicted, None, valid, ["no measured hit ratio"])
    m = min(max(float(measured), 0.0), 1.0)
    if current_bytes <= 0:
        return Calibration("none", 1.0, 1.0, m, predicted, None, valid, ["no memory in use"])
    top = float(model.max()) if len(model) else 0.0
    notes: list[str] = []
    if m > top + 1e-12:
        # The model never reaches the measured ratio: rescaling sizes cannot help.
        if predicted > 0:
            ratio = m / predicted
            cal = np.minimum(model * ratio, 1.0)
            notes.append("measured above the model's maximum: multiplicative correction")
            return Calibration("ratio", 1.0, ratio, m, predicted, np.maximum.accumulate(cal), valid, notes)
        cal = np.minimum(model + m, 1.0)
        notes.append("model predicts 0 at today's memory: vertical shift")
        return Calibration("shift", 1.0, 1.0, m, predicted, np.maximum.accumulate(cal), valid, notes)
    if flat_tolerance is not None and predicted > 0 and predicted >= top - flat_tolerance:
        ratio = m / predicted
        cal = np.maximum.accumulate(np.minimum(model * ratio, 1.0))
        notes.append(
            "today's memory holds the whole working set (the model is flat there): multiplicative correction"
        )
        return Calibration("ratio-flat", 1.0, ratio, m, predicted, cal, valid, notes)
    target = _crossing(memory, model, m, current_bytes)
    s = target / current_bytes
    method = "size-scale"
    if s < S_MIN or s > S_MAX:
        notes.append(f"effective capacity factor {s:.3g} outside [{S_MIN:g}, {S_MAX:g}]: clamped")
        s = min(max(s, S_MIN), S_MAX)
        method = "size-scale-clamped"
    offset = (s - 1.0) * current_bytes if ghost_above else None
    mapped = s * memory if offset is None else np.where(memory <= current_bytes, s * memory, memory + offset)
    cal = curve_at(memory, model, mapped)
    at_now = float(curve_at(memory, model, s * current_bytes))
    ratio = 1.0
    if abs(at_now - m) > 1e-9:
        ratio = m / at_now if at_now > 0 else 1.0
        cal = np.minimum(cal * ratio, 1.0)
    if mapped[-1] > valid:
        notes.append("beyond valid_max_bytes the calibrated curve is held flat (extrapolated)")
    out = Calibration(
        method, float(s), float(ratio), m, predicted, cal, valid, notes, offset, float(current_bytes)
    )
    out.valid_max_bytes = out.calibrated_bytes(valid)
    return out
