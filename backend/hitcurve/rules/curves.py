"""Monotone interpolation on hit-rate curves (Fritsch–Carlson PCHIP) and its inverse.

A curve is x (bytes, strictly increasing, > 0) and y (hit ratio, non-decreasing). The point
(0, 0) is prepended: an empty cache hits nothing. PCHIP keeps the interpolant non-decreasing
between knots, so "memory for a target" (the smallest x with f(x) >= target) is well defined
and found by bisection inside the one segment where the curve crosses the target.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Pchip:
    x: tuple[float, ...]
    y: tuple[float, ...]
    d: tuple[float, ...]  # derivative at each knot

    @classmethod
    def fit(cls, xs: Sequence[float], ys: Sequence[float]) -> "Pchip":
        """All knots at once (the worker grades every window with a fit and the API
        answers with several): the same operations per knot as a loop over them, so the same
        derivatives (backend/tests/test_curves_vectorised.py keeps the loop as the reference)."""
        if len(xs) != len(ys) or not xs:
            raise ValueError("curve needs equally many sizes and hit ratios, at least one")
        x = [float(v) for v in xs]
        y = [float(v) for v in ys]
        if x[0] > 0:
            x.insert(0, 0.0)
            y.insert(0, 0.0)
        n = len(x)
        xa, ya = np.array(x), np.array(y)
        if np.any(~(xa[1:] > xa[:-1]) | (ya[1:] < ya[:-1])):
            raise ValueError("curve must have strictly increasing sizes and non-decreasing hit ratios")
        if n == 1:
            return cls(tuple(x), tuple(y), (0.0,))
        h = xa[1:] - xa[:-1]
        delta = (ya[1:] - ya[:-1]) / h
        d = np.zeros(n)
        if n > 2:
            dl, dr, hl, hr = delta[:-1], delta[1:], h[:-1], h[1:]
            # weighted harmonic mean (Fritsch–Butland), keeps monotonicity; 0 at a flat side or an
            # extremum (there the mean's division by 0 is computed and thrown away)
            w1 = 2 * hr + hl
            w2 = hr + 2 * hl
            with np.errstate(divide="ignore", invalid="ignore"):
                mean = (w1 + w2) / (w1 / dl + w2 / dr)
            flat = (dl == 0) | (dr == 0) | ((dl > 0) != (dr > 0))
            d[1:-1] = np.where(flat, 0.0, mean)
        hs, ds = h.tolist(), delta.tolist()
        d[0] = _end_slope(hs[0], hs[1] if n > 2 else hs[0], ds[0], ds[1] if n > 2 else ds[0])
        d[-1] = _end_slope(hs[-1], hs[-2] if n > 2 else hs[-1], ds[-1], ds[-2] if n > 2 else ds[-1])
        return cls(tuple(x), tuple(y), tuple(d.tolist()))

    @property
    def x_max(self) -> float:
        return self.x[-1]

    @property
    def y_max(self) -> float:
        return self.y[-1]

    def _segment(self, xv: float) -> int:
        lo, hi = 0, len(self.x) - 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if self.x[mid] <= xv:
                lo = mid
            else:
                hi = mid
        return lo

    def __call__(self, xv: float) -> float:
        """f(x); constant beyond the last knot (the curve says nothing past it)."""
        if xv <= self.x[0]:
            return self.y[0]
        if xv >= self.x[-1]:
            return self.y[-1]
        i = self._segment(xv)
        return self._eval(i, xv)

    def _eval(self, i: int, xv: float) -> float:
        h = self.x[i + 1] - self.x[i]
        t = (xv - self.x[i]) / h
        t2, t3 = t * t, t * t * t
        v = (
            (2 * t3 - 3 * t2 + 1) * self.y[i]
            + (t3 - 2 * t2 + t) * h * self.d[i]
            + (-2 * t3 + 3 * t2) * self.y[i + 1]
            + (t3 - t2) * h * self.d[i + 1]
        )
        # Rounding can step a hair outside the segment's range; clamp keeps f monotone.
        return min(max(v, self.y[i]), self.y[i + 1])

    def inverse(self, target: float) -> float | None:
        """Smallest x with f(x) >= target; None when the target is above the curve's maximum."""
        if target <= self.y[0]:
            return self.x[0]
        if target > self.y[-1]:
            return None
        n = len(self.x)
        i = next(k for k in range(1, n) if self.y[k] >= target) - 1
        lo, hi = self.x[i], self.x[i + 1]
        for _ in range(200):
            mid = (lo + hi) / 2
            if mid <= lo or mid >= hi:
                break
            if self._eval(i, mid) >= target:
                hi = mid
            else:
                lo = mid
            if hi - lo <= 1e-12 * hi:
                break
        return hi


def _end_slope(h0: float, h1: float, d0: float, d1: float) -> float:
    """One-sided three-point end slope, limited so the end segment stays monotone."""
    s = ((2 * h0 + h1) * d0 - h0 * d1) / (h0 + h1)
    if math.copysign(1, s) != math.copysign(1, d0) or s == 0:
        return 0.0
    if math.copysign(1, d0) != math.copysign(1, d1) and abs(s) > abs(3 * d0):
        return 3 * d0
    return s


def clean(xs: Sequence[float | None], ys: Sequence[float | None]) -> tuple[list[float], list[float]]:
    """A stored curve made fit for Pchip: keep points with finite, strictly increasing sizes > 0;
    clip ratios to [0, 1] and take their running maximum.

    All points at once, the same as walking them: a point is kept when its size is
    above every usable size before it (the last kept one is the largest so far, as each kept
    point is above the ones before); None is NaN here, which is not finite either."""
    n = min(len(xs), len(ys))
    x = np.array(xs[:n], dtype=np.float64)
    y = np.array(ys[:n], dtype=np.float64)
    usable = np.isfinite(x) & np.isfinite(y) & (x > 0)
    before = np.maximum.accumulate(np.concatenate(([-np.inf], np.where(usable, x, -np.inf)[:-1])))
    keep = usable & (x > before)
    top = np.maximum.accumulate(np.minimum(1.0, np.maximum(0.0, y[keep])))
    return x[keep].tolist(), top.tolist()


def fit_stored(xs: Sequence[float | None] | None, ys: Sequence[float | None] | None) -> Pchip | None:
    """The interpolant of a stored curve (sizes, hit ratios), as the sizing API answers from it and
    the worker grades its predictions with; None when the curve has no usable point."""
    if not xs or not ys or len(xs) != len(ys):
        return None
    cx, cy = clean(xs, ys)
    return Pchip.fit(cx, cy) if cx else None


# The agent's own point lists ([[bytes, hit ratio], ...]: a prefix's curve, the TTL-aware and
# oblivious curves of the breakdown) read linearly between points, from (0, 0), flat past the last,
# as the breakdown and the TTL what-if read them (hitcurve/breakdown/poolsplit.py: the same line, vectorised).


def linear_hit_at(points: Sequence[Sequence[float]], m: float) -> float:
    """The hit ratio at size m."""
    px, py = 0.0, 0.0
    for x, y in points:
        if m <= x:
            return py + (y - py) * (m - px) / (x - px) if x > px else float(y)
        px, py = float(x), float(y)
    return py


def memory_for(points: Sequence[Sequence[float]], target: float) -> float | None:
    """Smallest size whose hit ratio reaches target, or None when the curve never does."""
    px, py = 0.0, 0.0
    for x, y in points:
        if y >= target:
            return float(x) if y == py else px + (target - py) * (float(x) - px) / (y - py)
        px, py = float(x), float(y)
    return None
