"""Misses priced per prefix (hitcurve.cost.prefixes) on hand-computed cases: the misses' monthly
cost with one dear prefix, the optimum moving out when the dear prefix needs more memory than the
rest, and a priced prefix without a curve named and priced at the cluster's cost. No database."""

import math
import uuid

import pytest
from test_cost_model import MIB, SUBJECT, _basis, _prices

from hitcurve.cost import model
from hitcurve.cost.answer import cost_answer, money
from hitcurve.cost.prefixes import PrefixTerm, Terms, prefix_misses, window_terms
from hitcurve.rules.curves import Pchip
from hitcurve_testing.snapshots import add_breakdown, make_snapshot


def _term(name: str, cost: float, share: float, scale: float) -> PrefixTerm:
    xs = [k * MIB for k in range(0, 321)]
    return PrefixTerm(name, cost, share, xs, [1 - math.exp(-x / scale) for x in xs])


def test_the_misses_cost_each_prefix_at_its_price() -> None:
    term = _term("page", 11.0, 0.2, 64 * MIB)
    per_read = 10.0 * model.SECONDS_PER_MONTH / 1e6  # 10 reads a second, a month, per million

    def curve(x: float) -> float:
        return 0.5

    misses = prefix_misses(curve, [term], 1.0, 10.0)
    x = 64 * MIB  # the prefix's hit ratio there: 1 - 1/e
    # every read at 1 a million (half miss) plus the dear prefix's misses at 10 more
    assert misses(x) == pytest.approx(per_read * (1.0 * 0.5 + 10.0 * 0.2 * math.exp(-1)))
    # a prefix cheaper than the rest lowers it (never below nothing)
    cheap = _term("flag", 0.0, 0.2, 64 * MIB)
    assert prefix_misses(curve, [cheap], 1.0, 10.0)(x) == pytest.approx(
        per_read * (0.5 - 1.0 * 0.2 * math.exp(-1))
    )


def test_a_dear_prefix_that_needs_more_memory_moves_the_optimum_out() -> None:
    b = _basis()
    p = _prices()  # one price: the tangent at S ln 4 = 88.7 MiB (test_cost_model)
    one = cost_answer(SUBJECT, b, p)
    assert one.status == "ok" and one.optimal_memory_bytes is not None
    # a fifth of the reads, with a curve 3x as long, at 10x the price
    c = p.miss_cost_per_million
    assert c is not None
    terms = Terms([_term("page", 10 * c, 0.2, 192 * MIB)], [])
    two = cost_answer(SUBJECT, b, p, terms=terms)
    assert two.status == "ok" and two.optimal_memory_bytes is not None, two.message
    assert two.optimal_memory_bytes > 1.5 * one.optimal_memory_bytes
    # its total is the curve's at that size plus the dear prefix's extra misses, by hand
    x = two.optimal_memory_bytes
    per_read = 100.0 * model.SECONDS_PER_MONTH / 1e6
    want = x / model.GIB * 10.0 + per_read * (c * (1 - b.main(x)) + 9 * c * 0.2 * math.exp(-x / (192 * MIB)))
    assert two.optimal is not None and two.optimal.total == pytest.approx(want, rel=1e-3)
    assert two.optimal.hit_ratio == pytest.approx(b.main(x), abs=1e-6)  # the hit ratio stays the curve's
    assert [r.prefix for r in two.prefix_costs] == ["page"]
    assert two.prefix_costs[0].read_share == pytest.approx(0.2)
    assert two.prefix_costs[0].hit_ratio == pytest.approx(1 - math.exp(-x / (192 * MIB)), abs=1e-3)
    assert f"a million misses cost of page {money(10 * c)}, of the rest {money(c)}" in two.message
    # at the rest's own price the answer is the one-price answer
    same = cost_answer(SUBJECT, b, p, terms=Terms([_term("page", c, 0.2, 192 * MIB)], []))
    assert same.optimal_memory_bytes == one.optimal_memory_bytes


def test_a_window_gives_a_term_per_priced_prefix_with_a_curve() -> None:
    snap = add_breakdown(make_snapshot("10.0.0.9:11211"))
    doc = {k: snap[k] for k in ("prefixes", "prefix_other", "ttl_points", "server")}
    doc["measured"] = {"hit_ratio": None}
    got, names = window_terms(uuid.uuid4(), doc, {"feed": 5.0, "nope": 9.0}, 0.5, 2.0)
    assert names == {"feed"} and [t.prefix for t in got] == ["feed"]
    reads = sum(q["requests"] for q in snap["prefixes"]) + snap["prefix_other"]["requests"]
    assert got[0].read_share == pytest.approx(0.5 * 240_000 / reads)
    # sizes in the subject's memory: twice the server's
    assert got[0].sizes[-1] == pytest.approx(2.0 * snap["ttl_points"][-1][0], rel=1e-9)
    # and the pooled curve at today's memory is the prefix's own at the bytes it holds today
    today = float(snap["server"]["limit_maxbytes"])
    feed = snap["prefixes"][2]
    resident = sum(q["bytes"] for q in snap["prefixes"]) + snap["prefix_other"]["bytes"]
    own = Pchip.fit([0.0] + [p[0] for p in feed["points"]], [0.0] + [p[1] for p in feed["points"]])
    assert got[0].hit_at(2.0 * today) == pytest.approx(own(feed["bytes"] / resident * today), abs=0.01)


def test_a_priced_prefix_without_a_curve_is_named() -> None:
    b = _basis()
    a = cost_answer(SUBJECT, b, _prices(), terms=Terms([], ["nope"]))
    assert a.status == "ok" and a.prefixes_without_curve == ["nope"]
    assert "for want of a curve in the agents' windows: nope" in a.message
