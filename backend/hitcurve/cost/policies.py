"""The policy comparison in money (pure): what each simulated replacement policy would cost and
save against LRU, at the target hit rate and at a given memory.

At the target: the memory each policy needs for it (linear between its simulated sizes; none when
its largest size falls short, then "more than" that size) at the cluster's price of memory, and
the saving against LRU's memory for the same hit rate.

At a memory size (today's, or the one the page compares at): what the policy's misses cost a
month. With an entered miss cost, its misses (1 - hit ratio) x reads x month x the cost of a
miss. With the measured one, the refill time the simulator counted for the policy's misses
(recompute_cost_total_us, each miss's measured miss-to-set time: what GD-Wheel's cost-aware
eviction keeps low: Li and Cox, GD-Wheel, §III), scaled from the sample to the whole traffic and a
month, as CPU time at the cluster's CPU-hour price: so a policy that misses as often as LRU but
on cheaper keys saves here, which a hit rate does not show."""

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from hitcurve.cost.model import GIB, SECONDS_PER_MONTH

BASE = "lru"


@dataclass(frozen=True)
class Point:
    size_bytes: int
    hit_ratio: float
    recompute_cost_total_us: float | None


@dataclass(frozen=True)
class Sample:
    """What a run's results rest on (its details): the sampled share of the traffic and the span of
    traffic time it covers."""

    sample_rate: float | None
    span_seconds: float | None


@dataclass(frozen=True)
class Money:
    policy: str
    memory_bytes_for_target: float | None  # None: its largest simulated size falls short
    memory_bytes_for_target_at_least: float | None
    memory_per_month_for_target: float | None
    memory_saving_per_month: float | None  # against LRU's memory for the target (> 0: cheaper)
    hit_ratio_at: float | None  # at the compared memory
    misses_per_month_at: float | None
    misses_saving_per_month: float | None  # against LRU's misses there


def memory_for(points: Sequence[Point], target: float) -> tuple[float | None, float | None]:
    """The memory a policy needs for `target` on its simulated sizes: (bytes, None), or (None, the
    largest size) when none reaches it. Below its smallest size: the smallest (at most that)."""
    pts = sorted(points, key=lambda p: p.size_bytes)
    if not pts:
        return None, None
    for i, p in enumerate(pts):
        if p.hit_ratio >= target:
            if i == 0:
                return float(p.size_bytes), None
            q = pts[i - 1]
            span = p.hit_ratio - q.hit_ratio
            f = 1.0 if span <= 0 else (target - q.hit_ratio) / span
            return q.size_bytes + f * (p.size_bytes - q.size_bytes), None
    return None, float(pts[-1].size_bytes)


def at_size(points: Sequence[Point], size: float) -> Point | None:
    """The smallest simulated size at or above `size` (the size the page's table reads)."""
    pts = sorted((p for p in points if p.size_bytes >= size), key=lambda p: p.size_bytes)
    return pts[0] if pts else None


def refill_cpu_seconds_per_month(p: Point, sample: Sample) -> float | None:
    """The simulated misses' refill time, from the sample to the whole traffic and a month."""
    if p.recompute_cost_total_us is None or not sample.sample_rate or not sample.span_seconds:
        return None
    return p.recompute_cost_total_us / 1e6 / sample.sample_rate * SECONDS_PER_MONTH / sample.span_seconds


def misses_money(
    p: Point,
    sample: Sample,
    source: str,
    miss_cost_per_million: float | None,
    reads_per_second: float | None,
    cpu_price_per_hour: float | None,
) -> float | None:
    if source == "measured":
        cpu = refill_cpu_seconds_per_month(p, sample)
        return None if cpu is None or cpu_price_per_hour is None else cpu * cpu_price_per_hour / 3600.0
    if miss_cost_per_million is None or reads_per_second is None:
        return None
    return (1.0 - p.hit_ratio) * reads_per_second * SECONDS_PER_MONTH * miss_cost_per_million / 1e6


def compare(
    results: Mapping[str, Sequence[Point]],
    sample: Sample,
    target: float,
    at_bytes: float,
    memory_per_gib_month: float,
    source: str,
    miss_cost_per_million: float | None,
    reads_per_second: float | None,
    cpu_price_per_hour: float | None,
) -> list[Money]:
    """One row per policy, LRU first, then by name."""
    if not 0.0 < target <= 1.0:
        raise ValueError(f"target must lie in (0, 1], not {target!r}")
    if not math.isfinite(at_bytes) or at_bytes <= 0:
        raise ValueError(f"at_bytes must be a finite number > 0, not {at_bytes!r}")
    per_byte = memory_per_gib_month / GIB

    def row(policy: str) -> tuple[Money, float | None]:
        pts = results[policy]
        mem, at_least = memory_for(pts, target)
        here = at_size(pts, at_bytes)
        miss = None if here is None else misses_money(
            here, sample, source, miss_cost_per_million, reads_per_second, cpu_price_per_hour
        )  # fmt: skip
        m = Money(
            policy, mem, at_least, None if mem is None else mem * per_byte, None,
            None if here is None else here.hit_ratio, miss, None,
        )  # fmt: skip
        return m, mem

    rows = {p: row(p) for p in results}
    base = rows.get(BASE)
    out = []
    for policy in sorted(results, key=lambda p: (p != BASE, p)):
        m, mem = rows[policy]
        mem_saving = miss_saving = None
        if base is not None and policy != BASE:
            bm, bmem = base
            if mem is not None and bmem is not None:
                mem_saving = (bmem - mem) * per_byte
            if m.misses_per_month_at is not None and bm.misses_per_month_at is not None:
                miss_saving = bm.misses_per_month_at - m.misses_per_month_at
        out.append(
            Money(
                m.policy,
                m.memory_bytes_for_target,
                m.memory_bytes_for_target_at_least,
                m.memory_per_month_for_target,
                mem_saving,
                m.hit_ratio_at,
                m.misses_per_month_at,
                miss_saving,
            )  # fmt: skip
        )
    return out
