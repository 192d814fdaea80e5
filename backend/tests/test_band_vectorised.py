"""band_curves (all points at once) against the one-point-at-a-time loop it replaced,
on random curves and band models: the same floats, bit for bit (pure)."""

import bisect
import random
from collections.abc import Sequence

import pytest

from hitcurve.rules import band


def _at(xs: Sequence[float], ys: Sequence[float], x: float) -> float:
    """The curve at x by linear interpolation, held at its ends."""
    i = bisect.bisect_left(xs, x)
    if i <= 0:
        return ys[0]
    if i >= len(xs):
        return ys[-1]
    x0, x1 = xs[i - 1], xs[i]
    return ys[i - 1] + (ys[i] - ys[i - 1]) * ((x - x0) / (x1 - x0) if x1 > x0 else 0.0)


def band_curves_reference(
    xs: Sequence[float], ys: Sequence[float], model: band.BandModel
) -> tuple[list[float], list[float]]:
    """band_curves as it was before the vectorised rewrite, one point at a time."""
    lo: list[float] = []
    hi: list[float] = []
    top_lo = top_hi = 0.0
    span = model.ghost_span_bytes
    for x, y in zip(xs, ys, strict=True):
        below, above = model.half_widths(x)
        if span > 0 and x > model.current_bytes:
            low = min(y, _at(xs, ys, max(model.current_bytes, x - span))) - below
            high = max(y, _at(xs, ys, x + span)) + above
        else:
            low, high = y - below, y + above
        top_lo = max(top_lo, min(1.0, max(0.0, low)))
        top_hi = max(top_hi, min(1.0, max(0.0, high)))
        lo.append(top_lo)
        hi.append(max(top_hi, top_lo))
    return lo, hi


def _case(seed: int) -> tuple[list[float], list[float], band.BandModel]:
    r = random.Random(seed)
    n = r.choice((1, 2, 3, 17, 100))
    xs = sorted({r.uniform(1.0, 4e9) for _ in range(n)})
    if r.random() < 0.2:
        xs[0] = 0.0  # a curve from (0, 0): d is 2 there
    ys = sorted(r.uniform(-0.05, 1.05) for _ in xs)  # outside [0, 1] too: the clipping
    if r.random() < 0.2:
        ys.reverse()  # not monotone: the running maxima
    current = r.choice((0.0, -5.0, xs[len(xs) // 2], r.uniform(1.0, 4e9)))
    model = band.BandModel(
        current,
        drift_pp=r.choice((band.PRIOR_DRIFT_PP, 0.0, r.uniform(0.0, 6.0))),
        loss_ratio=r.choice((0.0, r.uniform(0.0, 0.3))),
        per_doubling_pp=r.choice((band.PER_DOUBLING_PP, band.STATS_ONLY_PER_DOUBLING_PP, 0.2)),
        ghost_span_bytes=r.choice((0.0, r.uniform(1.0, 1e9), r.uniform(1.0, 1e6))),
    )
    return xs, ys, model


@pytest.mark.parametrize("seed", range(400))
def test_band_curves_equal_the_pointwise_reference(seed: int) -> None:
    xs, ys, model = _case(seed)
    lo, hi = band.band_curves(xs, ys, model)
    ref_lo, ref_hi = band_curves_reference(xs, ys, model)
    assert lo == ref_lo and hi == ref_hi  # exact: the same operations on each point
    assert all(type(v) is float for v in lo + hi)


def test_band_curves_take_arrays_and_refuse_unequal_lengths() -> None:
    import numpy as np

    xs, ys, model = _case(7)
    assert band.band_curves(np.array(xs), np.array(ys), model) == band_curves_reference(xs, ys, model)
    assert band.band_curves([], [], model) == ([], [])
    with pytest.raises(ValueError):
        band.band_curves([1.0, 2.0], [0.5], model)


@pytest.mark.parametrize("seed", range(20))
def test_half_widths_at_every_point_equal_the_models(seed: int) -> None:
    """The widths alone, before clipping and running maxima hide a last-bit difference."""
    import numpy as np

    xs, _, model = _case(seed)
    r = random.Random(seed)
    x = np.array([0.0, -1.0, model.current_bytes] + [r.uniform(1.0, 8e9) for _ in range(2000)])
    below, above = band._half_widths_all(model, x)
    want = [model.half_widths(float(v)) for v in x]
    assert below.tolist() == [w[0] for w in want]
    assert above.tolist() == [w[1] for w in want]
