"""The total monthly cost of a cache of x bytes and the size where it is least (pure).

    total(x) = memory(x) + misses(x)
    memory(x) = x / GiB x price per GiB-month
    misses(x) = (1 - hit ratio(x)) x reads per second x seconds per month x miss cost

For a smooth hit-rate curve h the least total lies where the curve's slope equals the price of
a byte over what its misses cost, h'(x) = memory price per byte / (miss cost x reads per
month): the point where a line of that slope touches the curve (the tangent point). A curve
that gains nothing with memory is cheapest at its smallest size; memory that costs nothing,
at the least size where the curve stops rising.

The search runs over [lo, hi] (the sizes the caller may answer for: the curve's first measured
point to as far as it is seen): a geometric grid with the curve's knots, then a golden-section
refinement around the best grid point. Equal totals go to the smaller size.

Misses priced per prefix (hitcurve.cost.prefixes) replace misses(x) by a function the caller
gives (`misses=`): the monthly cost of the misses at x bytes, each part of the reads at its own
price; everything here takes it where it takes the curve.

Seconds per month: 730 hours (8,760 hours a year over 12 months), the month cost tools commonly turn
an hourly node price into (infracost's default, for one); a price per GiB-month and a node's price
per hour then count the same month.
"""

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

GIB = 1024**3
HOURS_PER_MONTH = 730.0
SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600.0
# The grid the optimum is first looked for on (plus the curve's knots), then refined.
GRID_POINTS = 400
REFINE_STEPS = 60
# Totals within this share of each other count as equal (the smaller size wins).
TIE = 1e-12

Curve = Callable[[float], float]
# The monthly cost of the misses of a cache of x bytes (default: the curve's miss ratio x
# Prices.per_miss_ratio_month).
Misses = Callable[[float], float]


@dataclass(frozen=True)
class Prices:
    """What memory and misses cost, and how many reads the cache serves."""

    memory_per_gib_month: float
    miss_cost_per_million: float
    reads_per_second: float

    def __post_init__(self) -> None:
        for name in ("memory_per_gib_month", "miss_cost_per_million", "reads_per_second"):
            v = getattr(self, name)
            if not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0, not {v!r}")

    @property
    def per_byte_month(self) -> float:
        return self.memory_per_gib_month / GIB

    @property
    def per_miss_ratio_month(self) -> float:
        """What a miss ratio of 1 costs per month: every read a miss."""
        return self.reads_per_second * SECONDS_PER_MONTH * self.miss_cost_per_million / 1e6


@dataclass(frozen=True)
class Cost:
    """The monthly cost of one size, in its two parts."""

    memory_bytes: float
    hit_ratio: float
    memory: float
    misses: float

    @property
    def total(self) -> float:
        return self.memory + self.misses


def cost_at(curve: Curve, x: float, p: Prices, misses: Misses | None = None) -> Cost:
    h = min(1.0, max(0.0, float(curve(x))))
    m = (1.0 - h) * p.per_miss_ratio_month if misses is None else max(0.0, float(misses(x)))
    return Cost(x, h, x * p.per_byte_month, m)


def _total(curve: Curve, x: float, p: Prices, misses: Misses | None = None) -> float:
    return cost_at(curve, x, p, misses).total


def better(a: float, b: float) -> bool:
    """Total a is lower than b by more than a tie."""
    return a < b - TIE * max(abs(a), abs(b), 1e-300)


def optimum(
    curve: Curve, lo: float, hi: float, p: Prices, knots: Sequence[float] = (), misses: Misses | None = None
) -> Cost:
    """The size in [lo, hi] of the least total cost (the smallest such size on a tie)."""
    if not (math.isfinite(lo) and math.isfinite(hi)) or lo <= 0 or hi < lo:
        raise ValueError(f"the sizes searched must satisfy 0 < lo <= hi, not [{lo}, {hi}]")
    if hi == lo:
        return cost_at(curve, lo, p, misses)
    ratio = (hi / lo) ** (1.0 / (GRID_POINTS - 1))
    xs = sorted(
        {lo, hi, *(lo * ratio**i for i in range(1, GRID_POINTS - 1)), *(k for k in knots if lo < k < hi)}
    )
    totals = [_total(curve, x, p, misses) for x in xs]
    best = 0
    for i in range(1, len(xs)):
        if better(totals[i], totals[best]):
            best = i
    x = _refine(curve, xs[max(0, best - 1)], xs[min(len(xs) - 1, best + 1)], xs[best], p, misses)
    return cost_at(curve, x, p, misses)


def _refine(curve: Curve, a: float, b: float, x0: float, p: Prices, misses: Misses | None) -> float:
    """Golden-section search for the least total in [a, b] around the grid's best x0; x0 stays
    unless a point is strictly cheaper."""
    if b <= a:
        return x0
    g = (math.sqrt(5.0) - 1.0) / 2.0
    c, d = b - g * (b - a), a + g * (b - a)
    fc, fd = _total(curve, c, p, misses), _total(curve, d, p, misses)
    for _ in range(REFINE_STEPS):
        if fc <= fd:
            b, d, fd = d, c, fc
            c = b - g * (b - a)
            fc = _total(curve, c, p, misses)
        else:
            a, c, fc = c, d, fd
            d = a + g * (b - a)
            fd = _total(curve, d, p, misses)
    x = c if fc <= fd else d
    return x if better(_total(curve, x, p, misses), _total(curve, x0, p, misses)) else x0


def cheaper_past(p: Prices, seen: float, best_total: float) -> bool:
    """Could a size past `seen` bytes cost less than `best_total`? Its memory alone costs at least
    seen x the price per byte (its misses cost at least nothing), so not when that is already as
    much: then an optimum found within the seen part is the optimum of every size."""
    return seen * p.per_byte_month < best_total


def least_past(curve: Curve, end: float, p: Prices, misses: Misses | None = None) -> float:
    """The least total any size past a curve's `end` could cost, as far as the curve says.

    Past its end the misses are assumed to fall no faster than over its last tenth, while they are
    not falling ever faster there (a curve of reuse distances flattens as it goes; a scan's loop
    beginning to fit steepens it): at that rate s a month per byte they reach nothing, so the least
    is the end's own total when a byte of memory costs more than the misses it saves, else the
    memory of the size where the misses would reach nothing. Misses falling faster at the end bound
    nothing but misses of nothing: the least is the end's memory alone."""

    def m(x: float) -> float:
        return cost_at(curve, x, p, misses).misses

    m_end, m_9, m_8 = m(end), m(0.9 * end), m(0.8 * end)
    s1, s0 = (m_9 - m_end) / (0.1 * end), (m_8 - m_9) / (0.1 * end)
    if s1 > s0 * (1 + 1e-9) and s1 > 0:
        return end * p.per_byte_month
    if s1 <= p.per_byte_month:
        return end * p.per_byte_month + m_end
    return (end + m_end / s1) * p.per_byte_month


def sample(
    curve: Curve, lo: float, hi: float, p: Prices, points: int = 64, misses: Misses | None = None
) -> list[Cost]:
    """The cost at `points` sizes spaced geometrically over [lo, hi], for a chart."""
    if points < 2 or hi <= lo:
        return [cost_at(curve, lo, p, misses)]
    r = (hi / lo) ** (1.0 / (points - 1))
    return [cost_at(curve, lo * r**i if i < points - 1 else hi, p, misses) for i in range(points)]
