"""The cost model (hitcurve.cost.model) and the cost answer (hitcurve.cost.answer) on hand-computed
cases: the tangent point of a smooth curve, the smallest size of a flat one, the end of a linear
one, what memory that costs nothing buys, and the knowledge states (no optimum while memcached
fills, nor while a size past the seen part could still cost less)."""

import math
import uuid
from datetime import UTC, datetime

import pytest

from hitcurve.cost import model
from hitcurve.cost.answer import cost_answer
from hitcurve.rules import knowledge
from hitcurve.rules.curves import Pchip
from hitcurve.rules.warmup import FillState
from hitcurve.schemas.cost import CostPrices
from hitcurve.schemas.sizing import CurveInfo, Subject
from hitcurve.sizing.basis import Basis

MIB = 1 << 20
GIB = 1 << 30
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
FULL = FillState(False, 1.0, None, 64 * MIB, 64 * MIB)
SUBJECT = Subject(type="server", id=uuid.UUID(int=1))


def test_a_smooth_curve_is_cheapest_at_its_tangent_point() -> None:
    # h(x) = 1 - exp(-x / S): total = a x + B exp(-x / S), least where a = (B / S) exp(-x / S),
    # x* = S ln(B / (a S)). Memory at 10 a GiB-month, S = 64 MiB, and B = 4 a S (2.50 a month when
    # every read misses) put it at S ln 4 = 88.72 MiB.
    s = 64 * MIB
    a = 10 / GIB
    b_all = 4 * a * s
    reads = 100.0
    p = model.Prices(10.0, b_all / (reads * model.SECONDS_PER_MONTH) * 1e6, reads)
    assert p.per_miss_ratio_month == pytest.approx(2.5)

    def curve(x: float) -> float:
        return 1 - math.exp(-x / s)

    opt = model.optimum(curve, 1 * MIB, 1024 * MIB, p)
    assert opt.memory_bytes == pytest.approx(s * math.log(4), rel=1e-6)
    # the cost there by hand: memory 10 x 88.72 / 1024, misses 2.50 x 1/4
    assert opt.memory == pytest.approx(10 * s * math.log(4) / GIB)
    assert opt.misses == pytest.approx(2.5 / 4)
    # the slope of the curve there is the price of a byte over what its misses cost
    slope = (curve(opt.memory_bytes * 1.0001) - curve(opt.memory_bytes * 0.9999)) / (
        opt.memory_bytes * 0.0002
    )
    assert slope == pytest.approx(a / b_all, rel=1e-4)


def test_the_tangent_point_on_a_fitted_curve_is_the_least_of_every_size() -> None:
    xs = [float(MIB * k) for k in range(1, 257)]
    fit = Pchip.fit(xs, [1 - math.exp(-x / (64 * MIB)) for x in xs])
    p = model.Prices(10.0, 0.01, 100.0)
    opt = model.optimum(fit, xs[0], xs[-1], p, fit.x)
    brute = min(model.cost_at(fit, MIB + k * 16384.0, p).total for k in range(255 * 64))
    assert opt.total <= brute + 1e-12
    # the exponential's own tangent: x* = S ln(B / (a S)), B = 0.01 x 100 reads/s x 730 h / 1e6
    b_all = 0.01 * 100 * model.SECONDS_PER_MONTH / 1e6
    assert abs(opt.memory_bytes - 64 * MIB * math.log(b_all / (10 * 64 / 1024))) < 0.25 * MIB


def test_a_flat_curve_is_cheapest_at_its_smallest_size() -> None:
    flat = Pchip.fit([1.0 * MIB, 64.0 * MIB, 256.0 * MIB], [0.6, 0.6, 0.6])
    p = model.Prices(10.0, 5.0, 1000.0)
    opt = model.optimum(flat, MIB, 256 * MIB, p, flat.x)
    assert opt.memory_bytes == MIB
    assert opt.total == pytest.approx(10 / 1024 + 0.4 * 1000 * model.SECONDS_PER_MONTH * 5 / 1e6)


def test_a_linear_curve_is_cheapest_at_an_end() -> None:
    # h = x / 256 MiB: total = a x + B (1 - x / 256 MiB) is a line, falling when B / 256 MiB > a
    line = Pchip.fit([64.0 * MIB, 128.0 * MIB, 256.0 * MIB], [0.25, 0.5, 1.0])
    dear = model.Prices(1.0, 1.0, 100.0)  # B = 262.80 a month, memory 0.25 at 256 MiB
    assert model.optimum(line, MIB, 256 * MIB, dear, line.x).memory_bytes == 256 * MIB
    cheap = model.Prices(1.0, 1.0, 0.0001)  # B = 0.00026: memory dearer
    assert model.optimum(line, MIB, 256 * MIB, cheap, line.x).memory_bytes == MIB


def test_free_memory_buys_the_least_size_where_the_curve_stops_rising() -> None:
    c = Pchip.fit([16.0 * MIB, 32.0 * MIB, 48.0 * MIB, 256.0 * MIB], [0.4, 0.7, 0.8, 0.8])
    opt = model.optimum(c, MIB, 256 * MIB, model.Prices(0.0, 1.0, 10.0), c.x)
    assert opt.memory_bytes == 48 * MIB


def test_bad_prices_and_ranges_are_refused() -> None:
    with pytest.raises(ValueError, match="memory_per_gib_month must be a finite number >= 0"):
        model.Prices(-1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="reads_per_second"):
        model.Prices(1.0, 1.0, math.nan)
    with pytest.raises(ValueError, match="0 < lo <= hi"):
        model.optimum(lambda x: 0.5, 0.0, MIB, model.Prices(1, 1, 1))


def test_past_the_seen_part_a_size_is_cheaper_only_if_its_memory_alone_costs_less() -> None:
    p = model.Prices(1024.0, 1.0, 1.0)  # 1 a MiB-month
    assert model.cheaper_past(p, 10 * MIB, 10.5)
    assert not model.cheaper_past(p, 10 * MIB, 10.0)


def test_past_a_curves_end_the_least_follows_its_last_slope_unless_it_steepens() -> None:
    def prices(per_miss_ratio_month: float) -> model.Prices:
        # memory 1 a MiB-month; one read a second, a whole miss ratio costing the given amount a month
        return model.Prices(1024.0, per_miss_ratio_month / model.SECONDS_PER_MONTH * 1e6, 1.0)

    def concave(x: float) -> float:  # 0.02 a MiB up to 90 MiB (0.8), then 0.01 a MiB (0.9 at 100)
        mb = x / MIB
        return 0.9 - 0.01 * (100.0 - mb) if mb >= 90 else 0.8 - 0.02 * (90.0 - mb)

    def steepening(x: float) -> float:  # 0.002 a MiB up to 90 MiB, then 0.01 a MiB
        mb = x / MIB
        return 0.9 - 0.01 * (100.0 - mb) if mb >= 90 else 0.8 - 0.002 * (90.0 - mb)

    # misses at 50 a month: a MiB past the end saves 0.5 of misses, less than it costs: the end's total
    assert model.least_past(concave, 100 * MIB, prices(50.0)) == pytest.approx(100 + 0.1 * 50)
    # 1,000 a month: each MiB saves 10; the hit ratio would reach 1 at 110 MiB: its memory
    assert model.least_past(concave, 100 * MIB, prices(1000.0)) == pytest.approx(110.0)
    # steepening at its end: nothing bounds it but a hit ratio of 1, the end's memory alone
    assert model.least_past(steepening, 100 * MIB, prices(1000.0)) == pytest.approx(100.0)


def _basis(seen: float | None = None, fill: FillState = FULL, band: bool = True) -> Basis:
    xs = [float(MIB * k) for k in range(1, 321)]
    ys = [1 - math.exp(-x / (64 * MIB)) for x in xs]
    main = Pchip.fit(xs, ys)
    info = CurveInfo(
        computed_at=T0, window_end=T0, age_seconds=0.0, current_bytes=64 * MIB, measured_hit_ratio=ys[63],
        max_bytes=xs[-1], max_hit_ratio=ys[-1],
    )  # fmt: skip
    b = Basis(main, "calibrated", None, info, fill=fill, limit_bytes=64 * MIB)
    if band:
        b.conf_low = Pchip.fit(xs, [y**1.1 for y in ys])
        b.conf_high = Pchip.fit(
            xs, [min(1.0, y + 0.02 * (1 + x / (64 * MIB))) for x, y in zip(xs, ys, strict=True)]
        )
    end = xs[-1]
    b.sight = knowledge.Sight(fill, end if seen is None else seen, end, 64 * MIB)
    return b


def _prices(miss_per_million: float | None = None, reads: float | None = 100.0) -> CostPrices:
    # the tangent at S ln 4 = 88.7 MiB (test_a_smooth_curve_is_cheapest_at_its_tangent_point)
    if miss_per_million is None:
        miss_per_million = 4 * 10 / GIB * 64 * MIB / (100.0 * model.SECONDS_PER_MONTH) * 1e6
    return CostPrices(
        memory_per_gib_month=10.0, miss_cost_per_million=miss_per_million, miss_cost_source="entered",
        reads_per_second=reads,
    )  # fmt: skip


def test_the_answer_gives_the_optimum_its_band_and_the_saving_against_today() -> None:
    b = _basis()
    ans = cost_answer(SUBJECT, b, _prices())
    assert ans.status == "ok"
    assert (
        ans.optimal_memory_bytes is not None
        and abs(ans.optimal_memory_bytes - 64 * MIB * math.log(4)) < 0.01 * MIB
    )
    assert ans.optimal_memory_limit_bytes is not None and ans.optimal_memory_limit_bytes >= 89 * MIB
    lo, hi = ans.optimal_memory_bytes_min, ans.optimal_memory_bytes_max
    assert lo is not None and hi is not None and lo <= ans.optimal_memory_bytes <= hi and lo < hi
    # the range: the optima of the band's two sides and of the curve, the least and the most
    p = model.Prices(10.0, _prices().miss_cost_per_million or 0.0, 100.0)
    sides = [model.optimum(c, MIB, 320 * MIB, p, c.x).memory_bytes for c in (b.conf_low, b.conf_high) if c]
    assert (lo, hi) == (math.ceil(min(sides + [ans.optimal_memory_bytes])), math.ceil(max(sides)))
    # today at 64 MiB by hand: 10 x 64/1024 memory + 2.50 x e^-1 misses
    assert ans.today is not None and ans.today.total == pytest.approx(0.625 + 2.5 * math.exp(-1))
    assert ans.optimal is not None and ans.saving_per_month == pytest.approx(
        ans.today.total - ans.optimal.total
    )
    assert ans.saving_per_month > 0 and "a saving of" in ans.message and "set -m" in ans.message
    # the node catalogue's answer for the optimum: one node of each type with a memory figure
    assert {o.name: o.count for o in ans.node_options} == {
        "cache.t2.medium": 1, "cache.m4.large": 1, "cache.r4.large": 1
    }  # fmt: skip
    assert ans.cheapest_node is None and ans.catalogue_as_of == "2026-12-03" and ans.memorystore_nodes == 1
    assert len(ans.points) == 64 and min(pt.total for pt in ans.points) >= ans.optimal.total - 1e-12


def test_no_optimum_while_memcached_fills_or_past_what_the_agent_has_seen() -> None:
    filling = FillState(True, 0.5, 600, 32 * MIB, 64 * MIB)
    ans = cost_answer(SUBJECT, _basis(fill=filling), _prices())
    assert ans.status == "warming_up" and ans.optimal_memory_bytes is None and ans.optimal is None
    assert ans.unknown_until and ans.unknown_until.startswith("unknown until memcached is full")
    # seen to 70 MiB only: the seen part's best (its end) costs more than 70 MiB of memory alone
    ans = cost_answer(SUBJECT, _basis(seen=70 * MIB), _prices())
    assert (
        ans.status == "unknown"
        and ans.optimal_memory_bytes is None
        and ans.optimal_memory_limit_bytes is None
    )
    assert ans.searched_bytes_max == 70 * MIB
    # seen to 200 MiB: nothing past it can cost less than the optimum at 88.7 MiB, so it is known
    ans = cost_answer(SUBJECT, _basis(seen=200 * MIB), _prices())
    assert ans.status == "ok" and ans.optimal_memory_bytes is not None


def test_a_total_still_falling_at_the_curves_end_is_a_bound() -> None:
    ans = cost_answer(SUBJECT, _basis(), _prices(miss_per_million=1000.0))
    assert ans.status == "above_curve" and ans.optimal_memory_bytes is None
    assert ans.optimal_memory_bytes_at_least == 320 * MIB


def test_a_curve_rising_again_at_its_end_gives_the_least_within_it_or_a_size_past_it() -> None:
    # a scan's loop: 0.6 from 32 MiB on, rising again over the last 20 MiB (0.6 -> 0.7 at 160 MiB)
    xs = [float(MIB * k) for k in (1, 8, 16, 24, 32, 64, 100, 140, 150, 160)]
    ys = [0.05, 0.3, 0.5, 0.58, 0.6, 0.6, 0.6, 0.6, 0.65, 0.7]
    b = _basis()
    b.main, b.conf_low, b.conf_high = Pchip.fit(xs, ys), None, None
    b.info = b.info.model_copy(update=dict(max_bytes=xs[-1], max_hit_ratio=ys[-1]))
    b.sight = knowledge.Sight(FULL, xs[-1], xs[-1], 64 * MIB)
    # memory 1 a MiB-month (1024 a GiB-month); a whole miss ratio 1,000 a month: the least within the
    # curve is 32 MiB (32 + 400 = 432); memory at 160 MiB alone costs 160, so a larger size could cost less
    per_million = 1000.0 / (100.0 * model.SECONDS_PER_MONTH) * 1e6
    p = CostPrices(
        memory_per_gib_month=1024.0, miss_cost_per_million=per_million, miss_cost_source="entered",
        reads_per_second=100.0,
    )  # fmt: skip
    ans = cost_answer(SUBJECT, b, p)
    assert ans.status == "past_curve", ans.message
    assert ans.optimal_memory_bytes is None and ans.optimal_memory_limit_bytes is None
    assert ans.optimal_within_curve_bytes is not None
    # where the slope falls to 1/1000 a MiB, just short of the plateau at 32 MiB
    assert 30 * MIB <= ans.optimal_within_curve_bytes <= 32 * MIB
    assert ans.optimal is not None and ans.optimal.total == pytest.approx(432.0, abs=2.0)
    assert ans.searched_bytes_max == 160 * MIB
    assert "or more than 160\xa0MiB" in ans.message and "--ghost-factor" in ans.message
    # misses ten times cheaper: the least (at 24 MiB, 24 + 42 = 66) is below 160 MiB of memory alone
    p2 = p.model_copy(update=dict(miss_cost_per_million=per_million / 10))
    ans = cost_answer(SUBJECT, b, p2)
    assert ans.status == "ok" and ans.optimal_memory_bytes is not None
    assert ans.optimal_memory_bytes < 40 * MIB and ans.optimal_within_curve_bytes is None
    # the same curve levelled off at its end (no rise over its last fifth) keeps its least
    b.main = Pchip.fit(xs, [min(y, 0.6) for y in ys])
    assert cost_answer(SUBJECT, b, p).status == "ok"


def test_without_a_miss_cost_or_reads_there_is_no_optimum() -> None:
    p = _prices().model_copy(update=dict(miss_cost_per_million=None))
    ans = cost_answer(SUBJECT, _basis(), p)
    assert ans.status == "no_prices" and "needs a miss cost: enter what a million misses cost" in ans.message
    ans = cost_answer(SUBJECT, _basis(), _prices(reads=None))
    assert ans.status == "no_prices" and "needs reads measured" in ans.message


def test_a_server_in_no_cluster_is_told_to_join_one() -> None:
    p = CostPrices(memory_per_gib_month=0.0, miss_cost_per_million=None, reads_per_second=None)
    ans = cost_answer(SUBJECT, _basis(), p)
    assert ans.status == "no_prices" and "needs a cluster: assign the server to one" in ans.message


def test_the_serverless_maximum_is_the_memory_answers_one_m_in_whole_gb() -> None:
    from hitcurve.cost import serverless
    from hitcurve.sizing.answers import memory_answer

    b = _basis()
    ans = cost_answer(SUBJECT, b, _prices(), target=0.9)
    a = memory_answer(SUBJECT, b, 0.9)
    s = ans.serverless
    assert s is not None and s.status == "ok" and a.recommended_memory_limit_bytes is not None
    assert s.data_storage_maximum_gb == serverless.maximum_gb(a.recommended_memory_limit_bytes) == 1
    # full: 1 GB (the minimum) x $0.125 x 730 h, and 100 reads + 10 refills a second at 1 ECPU
    assert s.storage_per_month == pytest.approx(0.125 * 730)
    assert s.ecpu_per_second == pytest.approx(110.0)
    assert s.total_per_month == pytest.approx(91.25 + 110 * model.SECONDS_PER_MONTH / 1e6 * 0.0034)
    assert "allow at most 1 GB of data storage" in s.message
    # no miss cost: no optimum, but the serverless maximum needs none
    p = _prices().model_copy(update=dict(miss_cost_per_million=None))
    nop = cost_answer(SUBJECT, b, p, target=0.9)
    assert (
        nop.status == "no_prices"
        and nop.serverless is not None
        and nop.serverless.data_storage_maximum_gb == 1
    )
    # while memcached fills, no maximum either: the memory answer has none
    filling = cost_answer(
        SUBJECT, _basis(fill=FillState(True, 0.5, 600, 32 * MIB, 64 * MIB)), _prices(), target=0.9
    )
    assert filling.serverless is not None and filling.serverless.status == "warming_up"
    assert filling.serverless.data_storage_maximum_gb is None and filling.serverless.total_per_month is None
    # no target (a server in no cluster): no serverless answer
    assert cost_answer(SUBJECT, b, _prices()).serverless is None
