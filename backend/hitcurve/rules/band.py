"""The uncertainty band around a curve, at a stated confidence (pure).

The curve is calibrated to pass through today's measured point, so the band is narrowest there
and widens with the distance from it (in doublings of memory, |log2(x / today)|):

    half-width(x) = z * sqrt(drift^2 + (per_doubling * d)^2)          d = |log2(x / today)|

- drift: this server's own prediction error, from its accuracy record (earlier curves'
  predictions against later measured hit rates, in pp), shrunk toward the benchmark's measured
  error PRIOR_DRIFT_PP with the weight of PRIOR_WEIGHT graded predictions (drift_estimate):
  sqrt((sum e^2 + PRIOR_WEIGHT x PRIOR_DRIFT_PP^2) / (n + PRIOR_WEIGHT)). A server with no graded
  prediction gets the prior alone, a long record weighs mostly the server's own error. Records
  graded while memcached was still filling are not counted (crud.history.recent_errors_pp: the
  hit rate then rises with the fill: -14.6 and -9.6 pp in the benchmark's second windows, which
  made the band at today's memory 36 pp wide in zipf 0.9's fourth window, 7.6 pp at its end);
- per_doubling: the error per doubling away from today, PER_DOUBLING_PP (the live accuracy
  benchmark: <= 1 pp at M, <= 2 pp at M/2 and 2M, <= 3 pp at M/4 and 4M), never below drift;
- above today's memory the high side also widens by the stream loss (lost events shorten the
  reuse distances the ghost sees, so the curve there reads low): LOSS_GAIN_PP per 1 % loss per
  doubling. The loss is that of the windows the ghost remembers (windows.ghost_loss: its
  evictions come from up to (K - 1) x N evictions back, so a lossy window damages the curve above
  today for the windows after it even when they are clean). 0.7: scan mix at 4M read 8.57 pp low
  with 6.3 % loss (0.68 per % per doubling); in the accuracy benchmark of 2026-11-25 it read 8.5 pp
  low at 2M with 12.1 % loss over the ghost's windows (0.70) and 7.1 pp at 4M (0.29);
- z for the CONFIDENCE level of a normal error (0.9: 1.645);
- above today's memory, the ghost's resolution on the memory axis: the agent's counting ghost
  holds the evicted keys in F filters over (K - 1) x N (F as the agent reports it,
  `curve.ghost_filters`; 9 for agents that do not), so a reuse distance there is known only to
  within one filter's span, (reach - today) / F (0.12 N on the agent's defaults since 2026-11-26,
  F = 33; 0.44 N with F = 9). Where the curve is smooth that is far less than the vertical
  term; at a cliff -- a scan loop whose keys all come back at one distance -- it is the error:
  the scan mix's curve steps from 0.618 at 4.00 N to 0.738 at 4.25 N (mcslru on its seeded
  reads, 2026-11-26), the F = 9 ghost smeared the step over its filter and read 0.65-0.76 at 4N
  window by window (offline, no loss: F = 9 +4.1 pp at 4N, F = 33 0.0 pp against exact LRU,
  bench/accuracy/ghost_resolution.py). So above today
  the band is the vertical band around the curve shifted by one filter span either way (low side:
  the curve a span lower, minus the vertical term; high side: a span higher, plus it;
  `ghost_span_bytes`, 0 when the agent did not report its reach). Where the curve is smooth that
  adds its slope times the span (zipf 0.9 at 2M: about 1 pp a side).
The benchmark prints the coverage this gives (fraction of measured hit rates inside the band).
With this drift (2026-11-25, the product path re-run on the kept agent run of 05:19,
`--reuse-snapshots --measured-cache`): 14/15 at the last poll (the scan mix at 2M, read 8.5 pp
low, outside), as before; over the last 30 polls of the three recorded runs (`--record-windows`)
431/450 = 95.8 % of band checks hold real memcached's hit rate (432/450 with the former drift: an
unshrunk RMS of every record, 1 pp below 3 records), while the band at today's memory in zipf 0.9's
fourth window is 5.3 pp wide instead of 36 pp, and 2.2 pp instead of 7.6 pp at its end.

Stats-only curves (`watch` refused, the agent's Che + Zipf model fitted to `stats`)
pass through today's point too, but their shape away from it is a model's guess, not a
measurement: per_doubling is STATS_ONLY_PER_DOUBLING_PP, the error per doubling of that model
against real memcacheds at M/4 .. 4M (bench/accuracy/bench_stats_only.py; figures in
profiler-agent/loadgen/README.md).
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

CONFIDENCE = 0.9
Z = 1.645  # two-sided 90 % of a normal
# The prior of every server's drift, in one place: the accuracy benchmark's measured prediction
# error (the previous window's curve at today's memory against the hit rate memcached then
# measured, on full memcached as the server's own record is counted, crud.history.recent_errors_pp).
# bench/accuracy/bench_accuracy.py --record-windows, 2026-11-25: RMS 0.68 pp over 41 graded
# predictions of zipf 0.9, 0.25 pp (32) of zipf 1.1, 0.34 pp (58) of the scan mix, 0.46 pp pooled.
# A new server's workload is unknown, so the prior is the worst workload's, rounded up.
PRIOR_DRIFT_PP = 0.7
PRIOR_WEIGHT = 10  # the prior counts as this many graded predictions
PER_DOUBLING_PP = 1.0
LOSS_GAIN_PP = 0.7
# The ghost filters of an agent that does not report its own (`curve.ghost_filters`): the
# default F of agents before 2026-11-26 (profiler-agent/README.md "Ghost"); newer agents say.
GHOST_FILTERS_UNREPORTED = 9
# Stats-only: RMS over workloads and sizes of |model - memcached| / doublings from today
# (bench/accuracy/bench_stats_only.py, 2026-11-25: 8.93 pp over 3 workloads x 4 sizes).
STATS_ONLY_PER_DOUBLING_PP = 9.0


@dataclass(frozen=True)
class BandModel:
    current_bytes: float
    drift_pp: float = PRIOR_DRIFT_PP
    loss_ratio: float = 0.0
    confidence: float = CONFIDENCE
    per_doubling_pp: float = PER_DOUBLING_PP
    ghost_span_bytes: float = 0.0  # one ghost filter's span on the memory axis (0: not known)

    @classmethod
    def stats_only(cls, current_bytes: float, drift_pp: float | None = None) -> "BandModel":
        """The band of a stats-only curve: no stream, so no loss; the model's error per doubling."""
        return cls(
            current_bytes=current_bytes,
            drift_pp=drift_pp if drift_pp is not None else PRIOR_DRIFT_PP,
            per_doubling_pp=STATS_ONLY_PER_DOUBLING_PP,
        )

    def half_widths(self, x: float) -> tuple[float, float]:
        """(below, above) the curve at x, as hit-rate fractions."""
        d = 2.0 if self.current_bytes <= 0 or x <= 0 else abs(math.log2(x / self.current_bytes))
        per = max(self.per_doubling_pp, self.drift_pp)
        w = Z * math.sqrt(self.drift_pp**2 + (per * d) ** 2) / 100
        extra = LOSS_GAIN_PP * self.loss_ratio * 100 * d / 100 if x > self.current_bytes else 0.0
        return w, w + extra


def reported_filters(v: object) -> int | None:
    """The agent's ghost filter count as stored (calibration's `ghost_filters`), None if absent."""
    return v if isinstance(v, int) and not isinstance(v, bool) and v >= 2 else None


def ghost_span(reach_bytes: float | None, current_bytes: float, filters: int | None = None) -> float:
    """One ghost filter's span on the memory axis from the agent's reported reach and filter count
    (an agent that does not report its filters: GHOST_FILTERS_UNREPORTED) (0: reach unknown)."""
    if reach_bytes is None or current_bytes <= 0 or reach_bytes <= current_bytes:
        return 0.0
    return (reach_bytes - current_bytes) / (filters or GHOST_FILTERS_UNREPORTED)


def band_curves(
    xs: Sequence[float] | np.ndarray, ys: Sequence[float] | np.ndarray, model: BandModel
) -> tuple[list[float], list[float]]:
    """The band's low and high curves on the same sizes (increasing), each kept non-decreasing in
    [0, 1].

    Every point at once (a loop over the points, half_widths each, was ~0.1 ms of the
    worker's ~1 ms per snapshot, and the API runs it per answer): the same operations on each
    point as that loop (backend/tests/test_band_vectorised.py keeps it as the reference), so the
    same floats; the logarithm and the square stay Python's (math.log2, float ** 2), which differ
    from numpy's in the last bit of some values."""
    if len(xs) != len(ys):
        raise ValueError("band_curves: xs and ys differ in length")
    if not len(xs):
        return [], []
    x = np.asarray(xs, dtype=np.float64)
    y = np.asarray(ys, dtype=np.float64)
    below, above = _half_widths_all(model, x)
    low = y - below
    high = y + above
    span = model.ghost_span_bytes
    ghost = x > model.current_bytes
    if span > 0 and ghost.any():
        # the ghost places a distance only within one filter's span (module docstring): the
        # vertical band of the curve shifted by a span either way
        xg, yg = x[ghost], y[ghost]
        low[ghost] = np.minimum(yg, _at_all(x, y, np.maximum(model.current_bytes, xg - span))) - below[ghost]
        high[ghost] = np.maximum(yg, _at_all(x, y, xg + span)) + above[ghost]
    lo = np.maximum.accumulate(np.minimum(1.0, np.maximum(0.0, low)))
    hi = np.maximum(np.maximum.accumulate(np.minimum(1.0, np.maximum(0.0, high))), lo)
    return lo.tolist(), hi.tolist()


def _half_widths_all(model: BandModel, x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """BandModel.half_widths at every size of x: (below, above) arrays."""
    cur = model.current_bytes
    d = [2.0] * len(x) if cur <= 0 else [2.0 if v <= 0 else abs(math.log2(v / cur)) for v in x.tolist()]
    per = max(model.per_doubling_pp, model.drift_pp)
    w = Z * np.sqrt(model.drift_pp**2 + np.array([(per * v) ** 2 for v in d])) / 100
    extra = LOSS_GAIN_PP * model.loss_ratio * 100 * np.array(d) / 100
    return w, np.where(x > cur, w + extra, w)


def _at_all(xs: np.ndarray, ys: np.ndarray, q: np.ndarray) -> np.ndarray:
    """The curve at every q by linear interpolation, held at its ends (xs increasing). Written
    out rather than np.interp, whose arithmetic differs in the last bit."""
    i = np.searchsorted(xs, q, side="left")
    inner = (i > 0) & (i < len(xs))
    j = np.clip(i, 1, len(xs) - 1)
    x0, x1, y0, y1 = xs[j - 1], xs[j], ys[j - 1], ys[j]
    step = x1 > x0
    frac = np.where(step, (q - x0) / np.where(step, x1 - x0, 1.0), 0.0)
    return np.where(inner, y0 + (y1 - y0) * frac, np.where(i <= 0, ys[0], ys[-1]))


@dataclass(frozen=True)
class Drift:
    """The band's drift term and what it rests on (the answer states both)."""

    pp: float
    graded_predictions: int  # this server's (or cluster's servers') accuracy records used

    @property
    def basis(self) -> str:
        """benchmark_prior: no graded prediction yet, the benchmark's measured error alone;
        server_record: the server's own record, shrunk toward that prior."""
        return "server_record" if self.graded_predictions else "benchmark_prior"


def drift_estimate(errors_pp: Sequence[float]) -> Drift:
    """The drift (pp) from an accuracy record's errors, shrunk toward PRIOR_DRIFT_PP."""
    errs = [float(e) for e in errors_pp if math.isfinite(e)]
    pp = math.sqrt((sum(e * e for e in errs) + PRIOR_WEIGHT * PRIOR_DRIFT_PP**2) / (len(errs) + PRIOR_WEIGHT))
    return Drift(pp, len(errs))


def drift_pp(errors_pp: Sequence[float]) -> float:
    """drift_estimate(errors_pp).pp (the worker's stats-only band calls this)."""
    return drift_estimate(errors_pp).pp
