"""Monotone interpolation on hit-rate curves (Fritsch–Carlson PCHIP) and its inverse.

A curve is x (bytes, strictly increasing, > 0) and y (hit ratio, non-decreasing). The point
(0, 0) is prepended: an empty cache hits nothing. PCHIP keeps the interpolant non-decreasing
between knots, so "memory for a target" (the smallest x with f(x) >= target) is well defined
and found by bisection inside the one segment where the curve crosses the target.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass


@dataclass(frozen=True)
class Pchip:
    x: tuple[float, ...]
    y: tuple[float, ...]
    d: tuple[float, ...]  # derivative at each knot

    @classmethod
    def fit(cls, xs: Sequence[float], ys: Sequence[float]) -> "Pchip":
        if len(xs) != len(ys) or not xs:
            raise ValueError("curve needs equally many sizes and hit ratios, at least one")
        x = [float(v) for v in xs]
        y = [float(v) for v in ys]
        if x[0] > 0:
            x.insert(0, 0.0)
            y.insert(0, 0.0)
        n = len(x)
        for i in range(1, n):
            if not x[i] > x[i - 1] or y[i] < y[i - 1]:
                raise ValueError("curve must have strictly increasing sizes and non-decreasing hit ratios")
        if n == 1:
            return cls(tuple(x), tuple(y), (0.0,))
        h = [x[i + 1] - x[i] for i in range(n - 1)]
        delta = [(y[i + 1] - y[i]) / h[i] for i in range(n - 1)]
        d = [0.0] * n
        for i in range(1, n - 1):
            if delta[i - 1] == 0 or delta[i] == 0 or (delta[i - 1] > 0) != (delta[i] > 0):
                d[i] = 0.0
            else:  # weighted harmonic mean (Fritsch–Butland), keeps monotonicity
                w1 = 2 * h[i] + h[i - 1]
                w2 = h[i] + 2 * h[i - 1]
                d[i] = (w1 + w2) / (w1 / delta[i - 1] + w2 / delta[i])
        d[0] = _end_slope(h[0], h[1] if n > 2 else h[0], delta[0], delta[1] if n > 2 else delta[0])
        d[-1] = _end_slope(h[-1], h[-2] if n > 2 else h[-1], delta[-1], delta[-2] if n > 2 else delta[-1])
        return cls(tuple(x), tuple(y), tuple(d))

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
    clip ratios to [0, 1] and take their running maximum."""
    ox: list[float] = []
    oy: list[float] = []
    top = 0.0
    for x, y in zip(xs, ys, strict=False):
        if x is None or y is None or not (math.isfinite(x) and math.isfinite(y)) or x <= 0:
            continue
        if ox and x <= ox[-1]:
            continue
        top = max(top, min(1.0, max(0.0, y)))
        ox.append(float(x))
        oy.append(top)
    return ox, oy


def fit_stored(xs: Sequence[float | None] | None, ys: Sequence[float | None] | None) -> Pchip | None:
    """The interpolant of a stored curve (sizes, hit ratios), as the sizing API answers from it and
    the worker grades its predictions with; None when the curve has no usable point."""
    if not xs or not ys or len(xs) != len(ys):
        return None
    cx, cy = clean(xs, ys)
    return Pchip.fit(cx, cy) if cx else None


# The agent's own point lists ([[bytes, hit ratio], ...]: a prefix's curve, the TTL-aware and
# oblivious curves of the breakdown) read linearly between points, from (0, 0), flat past the last,
# as the breakdown and the TTL what-if read them (hitcurve/poolsplit.py: the same line, vectorised).


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
