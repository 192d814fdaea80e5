"""hitcurve.rules.curves.clean and Pchip.fit (all points at once) against the loops they
replaced, on random stored curves: the same floats, bit for bit, and the same errors (pure)."""

import math
import random
from collections.abc import Sequence

import numpy as np
import pytest

from hitcurve.rules import curves
from hitcurve.rules.curves import Pchip, _end_slope


def clean_reference(
    xs: Sequence[float | None], ys: Sequence[float | None]
) -> tuple[list[float], list[float]]:
    """curves.clean as it was before the vectorised rewrite, one point at a time."""
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


def fit_reference(xs: Sequence[float], ys: Sequence[float]) -> tuple[tuple[float, ...], ...]:
    """Pchip.fit's knots and derivatives as it computed them before, one knot at a time."""
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
        return tuple(x), tuple(y), (0.0,)
    h = [x[i + 1] - x[i] for i in range(n - 1)]
    delta = [(y[i + 1] - y[i]) / h[i] for i in range(n - 1)]
    d = [0.0] * n
    for i in range(1, n - 1):
        if delta[i - 1] == 0 or delta[i] == 0 or (delta[i - 1] > 0) != (delta[i] > 0):
            d[i] = 0.0
        else:
            w1 = 2 * h[i] + h[i - 1]
            w2 = h[i] + 2 * h[i - 1]
            d[i] = (w1 + w2) / (w1 / delta[i - 1] + w2 / delta[i])
    d[0] = _end_slope(h[0], h[1] if n > 2 else h[0], delta[0], delta[1] if n > 2 else delta[0])
    d[-1] = _end_slope(h[-1], h[-2] if n > 2 else h[-1], delta[-1], delta[-2] if n > 2 else delta[-1])
    return tuple(x), tuple(y), tuple(d)


def _stored(seed: int) -> tuple[list[float | None], list[float | None]]:
    """A curve as a stored row may hold it: mostly increasing, with repeats, steps back, flat
    stretches, values outside [0, 1], NULLs, NaN and infinities, sometimes unequal lengths."""
    r = random.Random(seed)
    n = r.choice((0, 1, 2, 3, 5, 100))
    xs: list[float | None] = []
    ys: list[float | None] = []
    x, y = r.uniform(-10.0, 1e6), r.uniform(-0.1, 0.5)
    for _ in range(n):
        x += (
            r.choice((r.uniform(1.0, 1e7), 0.0, -r.uniform(0.0, 1e6)))
            if r.random() < 0.2
            else r.uniform(1.0, 1e7)
        )
        y += 0.0 if r.random() < 0.3 else r.uniform(-0.01 if r.random() < 0.1 else 0.0, 0.05)
        bad = r.random()
        xs.append(None if bad < 0.02 else math.inf if bad < 0.03 else float(int(x)) if bad < 0.1 else x)
        ys.append(None if 0.03 < bad < 0.05 else math.nan if 0.05 < bad < 0.06 else y)
    if r.random() < 0.1:
        ys = ys[: max(0, n - 1)]
    return xs, ys


@pytest.mark.parametrize("seed", range(500))
def test_clean_and_fit_equal_the_pointwise_reference(seed: int) -> None:
    xs, ys = _stored(seed)
    cx, cy = curves.clean(xs, ys)
    assert (cx, cy) == clean_reference(xs, ys)
    assert all(type(v) is float for v in cx + cy)
    if not cx:
        assert curves.fit_stored(xs, ys) is None
        return
    fitted = Pchip.fit(cx, cy)
    assert (fitted.x, fitted.y, fitted.d) == fit_reference(cx, cy)
    r = random.Random(seed)
    for q in [0.0, *cx[:3], *(r.uniform(0.0, 1.2 * cx[-1]) for _ in range(20))]:
        assert 0.0 <= fitted(q) <= 1.0


@pytest.mark.parametrize("seed", range(300))
def test_fit_of_raw_points_equals_the_reference_or_fails_as_it_did(seed: int) -> None:
    """Unclean points (not increasing, NaN): the same knots or the same error."""
    r = random.Random(seed)
    n = r.choice((1, 2, 3, 4, 30))
    xs = [r.uniform(0.0, 100.0) for _ in range(n)]
    ys = [r.uniform(0.0, 1.0) for _ in range(n)]
    if r.random() < 0.7:
        xs.sort()
    if r.random() < 0.7:
        ys.sort()
    if r.random() < 0.1:
        ys[r.randrange(n)] = math.nan
    try:
        want = fit_reference(xs, ys)
    except ValueError as exc:
        with pytest.raises(ValueError, match=str(exc)):
            Pchip.fit(xs, ys)
        return
    got = Pchip.fit(xs, ys)
    assert np.array_equal(
        np.array(got.x + got.y + got.d), np.array(want[0] + want[1] + want[2]), equal_nan=True
    )
