"""The TTL what-if model (hitcurve/breakdown/ttlwhatif.py) on columns a cache-aside replay gives for keys
read at known Poisson rates (hitcurve_testing.snapshots.whatif_columns): reading the grid,
identities at today's TTL, the direction of each answer, and the unreachable case. Its accuracy
against real memcached re-run at the new TTL: profiler-agent/loadgen/bench_ttlwhatif.py."""

from __future__ import annotations

import math

import pytest

from hitcurve.breakdown.ttlwhatif import at_ttl, what_if
from hitcurve_testing.snapshots import WHATIF_TTLS, byte_curve, whatif_columns

M = 64 * 2**20


def test_at_ttl_reads_the_grid_and_interpolates_in_log_ttl() -> None:
    grid, vals = [1, 2, 4], [0.1, 0.3, 0.7]
    assert at_ttl(grid, vals, 2) == 0.3
    assert at_ttl(grid, vals, 4) == 0.7
    assert abs(at_ttl(grid, vals, 3) - (0.3 + 0.4 * math.log(1.5) / math.log(2))) < 1e-12
    with pytest.raises(ValueError, match="outside the grid"):
        at_ttl(grid, vals, 5)


def answer(ttl: int, today: int = 3, measured: float = 0.74, held: float = 4e6, points=None):
    cols = whatif_columns(today, held, 60.0)
    pts = points if points is not None else byte_curve(2 * M, 0.80, 0.02 * M)
    return what_if(
        WHATIF_TTLS, cols["hit_ratio"], cols["live_byte_s"], 60.0, pts, measured, held, 0.25, 0.80, ttl
    )


def test_todays_ttl_gives_back_today() -> None:
    w = answer(3)
    assert w.allowed == w.allowed_today and w.hit_ratio_scale == 1.0
    assert abs(w.size_scale - 1.0) < 1e-6 and abs(w.live_bytes_today - 4e6) < 1
    assert abs(w.prefix_hit_ratio - 0.74) < 1e-6  # calibrated on the measured hit ratio
    assert w.server_hit_ratio is not None and abs(w.server_hit_ratio - 0.80) < 1e-6
    assert w.memory_for_today_hit_ratio is not None and abs(w.memory_for_today_hit_ratio - 4e6) < 0.01 * 4e6
    assert len(w.grid) == len(WHATIF_TTLS)


def test_longer_ttl_more_hits_and_live_bytes_less_memory_for_today() -> None:
    today, longer = answer(3), answer(12)
    assert longer.allowed > today.allowed and longer.live_bytes > today.live_bytes
    assert longer.server_hit_ratio_unbounded is not None and longer.server_hit_ratio_unbounded > 0.80
    # more hits per byte of the curve: today's hit ratio needs less of the (stretched) curve only
    # when the hit-ratio gain outruns the stretch; both are the replay's, so check the formula
    need = longer.memory_for_today_hit_ratio
    assert need is not None and need > 0
    assert longer.bound and not today.bound
    shorter = answer(1)
    assert shorter.allowed < today.allowed and shorter.live_bytes < today.live_bytes
    assert shorter.prefix_hit_ratio < 0.74
    assert shorter.server_hit_ratio is not None and shorter.server_hit_ratio < 0.80


def test_a_ttl_that_caps_the_prefix_below_today_is_unreachable() -> None:
    # the curve's plateau (0.80) scaled by v(1 s) / v(3 s) stays under today's h_P(x0)
    w = answer(1, held=0.3 * M)
    assert w.hit_ratio_scale < 0.9
    assert w.memory_for_today_hit_ratio is None


def test_the_samples_bias_scales_what_ttl_allows_not_the_ratios() -> None:
    """A sample that over-reads hot keys reads every column high; scaled by the prefix's measured
    hit ratio over the sample's own, the allowed hit ratios move, r, l, h' and Y do not."""
    plain, biased = answer(12), answer(12)
    cols = whatif_columns(3, 4e6, 60.0)
    w = what_if(
        WHATIF_TTLS,
        cols["hit_ratio"],
        cols["live_byte_s"],
        60.0,
        byte_curve(2 * M, 0.80, 0.02 * M),
        0.74,
        4e6,
        0.25,
        0.80,
        12,
        sampled_measured=0.74 * 1.05,
    )
    assert abs(w.sample_correction - 1 / 1.05) < 1e-12
    assert (
        abs(w.allowed - plain.allowed / 1.05) < 1e-9
        and abs(w.allowed_today - plain.allowed_today / 1.05) < 1e-9
    )
    assert abs(w.hit_ratio_scale - biased.hit_ratio_scale) < 1e-12 and w.size_scale == biased.size_scale
    assert w.prefix_hit_ratio == plain.prefix_hit_ratio
    assert w.memory_for_today_hit_ratio == plain.memory_for_today_hit_ratio
