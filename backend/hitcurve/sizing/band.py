"""The band of an answer around its Basis (pure): at the stated confidence, through today's
measured point, and the same band at the sizes of a curve the dashboard draws."""

from hitcurve.rules import band as band_model
from hitcurve.rules.curves import Pchip, clean
from hitcurve.sizing.basis import Basis


def set_band(b: Basis, errors_pp: list[float]) -> None:
    """The band at its stated confidence around b.main (hitcurve.rules.band; pure): through today's
    measured point, widening with the distance from it by the drift (this server's accuracy record
    `errors_pp`, newest first, shrunk toward the benchmark's measured error) and the windows'
    stream loss."""
    b.drift = band_model.drift_estimate(errors_pp)
    if b.data_basis == "stats_only":
        # a model fitted to `stats`: no stream loss, its own error per doubling
        model = band_model.BandModel.stats_only(float(b.info.current_bytes or 0), b.drift.pp)
    else:
        model = band_model.BandModel(
            current_bytes=float(b.info.current_bytes or 0),
            drift_pp=b.drift.pp,
            loss_ratio=float(
                b.ghost_loss_ratio if b.ghost_loss_ratio is not None else (b.info.stream_loss_ratio or 0.0)
            ),
            ghost_span_bytes=band_model.ghost_span(
                b.ghost_reach_bytes, float(b.info.current_bytes or 0), b.ghost_filters
            ),
        )
    b.band = model
    xs = list(b.main.x[1:]) if b.main.x[0] == 0 else list(b.main.x)
    ys = [b.main(x) for x in xs]
    measured = b.info.measured_hit_ratio if b.band_through_measured else None
    lo_c, hi_c = band_lists(model, xs, ys, measured)
    b.conf_low, b.conf_high = Pchip.fit(xs, lo_c), Pchip.fit(xs, hi_c)


def band_lists(
    model: band_model.BandModel, xs: list[float], ys: list[float], measured: float | None
) -> tuple[list[float], list[float]]:
    """The band's (low, high) hit rates at sizes xs around the curve ys (pure). When the curve
    misses today's measured hit rate (an uncalibrated estimate), the side it misses on is moved by
    the miss, so that the band always holds the measured point."""
    lo, hi = band_model.band_curves(xs, ys, model)
    cur = model.current_bytes
    if measured is None or cur <= 0 or not xs:
        return lo, hi
    lo_at = Pchip.fit(xs, lo)(cur)
    hi_at = Pchip.fit(xs, hi)(cur)
    if measured > hi_at:
        hi = [min(1.0, v + measured - hi_at) for v in hi]
    elif measured < lo_at:
        lo = [max(0.0, v - (lo_at - measured)) for v in lo]
    return lo, hi


def curve_band(b: Basis, xs: list[float], ys: list[float]) -> tuple[list[float], list[float]] | None:
    """The answer's band at the sizes of a curve the dashboard draws (the same BandModel, through
    the same measured point); None without a band."""
    if b.band is None:
        return None
    cx, cy = clean(xs, ys)
    if len(cx) != len(xs):
        return None
    measured = b.info.measured_hit_ratio if b.band_through_measured else None
    return band_lists(b.band, cx, cy, measured)
