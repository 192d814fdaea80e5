"""The policy comparison in money (hitcurve.cost.policies) on hand-computed cases: the memory for
the target between simulated sizes, a policy that falls short, the misses priced at an entered
cost and, measured, as the simulated refill time scaled from the sample to a month."""

import pytest

from hitcurve.cost import policies
from hitcurve.cost.model import GIB, SECONDS_PER_MONTH
from hitcurve.cost.policies import Point, Sample

MIB = 1 << 20
SAMPLE = Sample(sample_rate=0.01, span_seconds=3600.0)
RESULTS = {
    # LRU reaches 0.9 halfway between 64 and 128 MiB; GD-Wheel at 64 MiB exactly
    "lru": [Point(32 * MIB, 0.70, 9e6), Point(64 * MIB, 0.80, 6e6), Point(128 * MIB, 1.00, 0.0)],
    "gdwheel": [Point(32 * MIB, 0.75, 3e6), Point(64 * MIB, 0.90, 2e6), Point(128 * MIB, 0.95, 1e6)],
    # never reaches 0.9 on its sizes
    "clock": [Point(32 * MIB, 0.60, 9e6), Point(64 * MIB, 0.70, 8e6), Point(128 * MIB, 0.80, 7e6)],
}


def test_memory_for_the_target_between_sizes_or_short() -> None:
    assert policies.memory_for(RESULTS["lru"], 0.9) == (96 * MIB, None)
    assert policies.memory_for(RESULTS["gdwheel"], 0.9) == (64 * MIB, None)
    assert policies.memory_for(RESULTS["clock"], 0.9) == (None, 128 * MIB)
    # below the smallest size: the smallest
    assert policies.memory_for(RESULTS["lru"], 0.5) == (32 * MIB, None)
    assert policies.memory_for([], 0.9) == (None, None)


def test_entered_miss_cost_against_lru_by_hand() -> None:
    rows = policies.compare(
        RESULTS, SAMPLE, 0.9, 64 * MIB, memory_per_gib_month=1024.0, source="entered",
        miss_cost_per_million=1.0, reads_per_second=100.0, cpu_price_per_hour=None,
    )  # fmt: skip
    by = {r.policy: r for r in rows}
    assert [r.policy for r in rows] == ["lru", "clock", "gdwheel"]  # LRU first, then by name
    # 1024 a GiB-month: a MiB costs 1 a month; GD-Wheel needs 64 MiB where LRU needs 96
    assert by["lru"].memory_per_month_for_target == pytest.approx(96.0)
    assert by["gdwheel"].memory_saving_per_month == pytest.approx(32.0)
    assert (
        by["clock"].memory_bytes_for_target is None
        and by["clock"].memory_bytes_for_target_at_least == 128 * MIB
    )
    assert by["clock"].memory_saving_per_month is None and by["lru"].memory_saving_per_month is None
    # at 64 MiB: misses x 100 reads/s x a month x 1 per million
    month = 100.0 * SECONDS_PER_MONTH / 1e6
    assert by["lru"].misses_per_month_at == pytest.approx(0.2 * month)
    assert by["gdwheel"].misses_saving_per_month == pytest.approx((0.2 - 0.1) * month)
    assert by["clock"].misses_saving_per_month == pytest.approx((0.2 - 0.3) * month)  # dearer: negative


def test_measured_miss_cost_is_the_refill_time_scaled_to_the_traffic() -> None:
    rows = policies.compare(
        RESULTS, SAMPLE, 0.9, 64 * MIB, memory_per_gib_month=0.0, source="measured",
        miss_cost_per_million=None, reads_per_second=None, cpu_price_per_hour=3.6,
    )  # fmt: skip
    by = {r.policy: r for r in rows}
    # 6 s of refill in the 1 % sample of an hour: 600 s an hour, x 730 h, at 0.001 a CPU-second
    assert by["lru"].misses_per_month_at == pytest.approx(6.0 / 0.01 * SECONDS_PER_MONTH / 3600.0 * 0.001)
    assert by["gdwheel"].misses_saving_per_month == pytest.approx(4.0 / 0.01 * 730 * 0.001)
    # free memory: no memory saving in money, the sizes still said
    assert by["gdwheel"].memory_saving_per_month == 0.0 and by["gdwheel"].memory_bytes_for_target == 64 * MIB
    # no CPU price, or a sample without its rate: no miss money
    none = policies.compare(RESULTS, Sample(None, 3600.0), 0.9, 64 * MIB, 0.0, "measured", None, None, 3.6)
    assert all(r.misses_per_month_at is None for r in none)


def test_the_compared_size_is_the_smallest_simulated_at_or_above_it() -> None:
    rows = policies.compare(RESULTS, SAMPLE, 0.9, 50 * MIB, 1.0 * GIB / GIB, "entered", 1.0, 100.0, None)
    assert {r.policy: r.hit_ratio_at for r in rows} == {"lru": 0.80, "gdwheel": 0.90, "clock": 0.70}
    past = policies.compare(RESULTS, SAMPLE, 0.9, 200 * MIB, 1.0, "entered", 1.0, 100.0, None)
    assert all(r.hit_ratio_at is None and r.misses_per_month_at is None for r in past)


@pytest.mark.parametrize("target, at", [(0.0, 64 * MIB), (1.5, 64 * MIB), (0.9, 0.0), (0.9, float("nan"))])
def test_bad_input_is_refused(target, at) -> None:
    with pytest.raises(ValueError):
        policies.compare(RESULTS, SAMPLE, target, at, 1.0, "entered", 1.0, 100.0, None)
