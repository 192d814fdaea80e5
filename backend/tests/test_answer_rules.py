"""The pure rules behind an operator's answer: the -m model (checked against a real memcached),
warm-up, the recommended limit's hysteresis, quiet/lossy windows, the uncertainty band."""

import math
import random
import sys
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from hitcurve.rules import band, hysteresis, memlimit, warmup, windows
from hitcurve.rules.curves import Pchip

MIB = 1 << 20
T0 = datetime(2026, 11, 25, 1, 0, tzinfo=UTC)


# ---- the -m model -------------------------------------------------------------------------


def test_items_per_page_is_chunk_rounded() -> None:
    assert memlimit.items_per_page(1184) == 885  # memcached 1.6: 1 KB values, class 12
    assert memlimit.items_per_page(96) == 10922
    assert memlimit.items_per_page(600_000) == 1  # one chunk per page, the rest unused
    with pytest.raises(ValueError):
        memlimit.items_per_page(0)


# memcached 1.6.18 at -m 32 after 64 MiB of seeded sets of 300-3,300 B values (five classes):
# chunk size, items, pages per class (bench/results/2026-12-02-memlimit-pages.md)
WEB_AT_32 = [(384, 5460, 2), (944, 5550, 5), (1480, 5664, 8), (2320, 4059, 9), (3632, 2304, 8)]
# the same mix: -m -> pages memcached held once full (total_malloced the same in MiB)
WEB_PAGES = {8: 8, 16: 16, 32: 32, 64: 64, 128: 128, 256: 256, 1024: 1024}
# 18 classes (50 B .. 225 KB values): one page a class past the limit at -m 8 and 16; 1.5.16,
# 1.6.14, 1.6.24 the same, and 1.6.18 with -I 2m, -I 4m + slab_chunk_max 1 MiB
WIDE_PAGES = {8: 18, 16: 18, 32: 32, 64: 64, 128: 128, 256: 256, 1024: 1024}


def test_the_limit_for_a_point_of_the_curve_is_its_pages_in_whole_mib() -> None:
    """The curve's memory is slab pages (the worker counts each class's chunks per page): the -m
    that holds it is those pages in whole MiB, at the five-class memcached of -m 32 as at any other.
    Rounding each class up to a whole page on top answered -m 37 for 32.1 MiB (+5 pages, one per
    class) and -m 10 for memcached's own -m 8."""
    classes = [memlimit.ClassNow(*c) for c in WEB_AT_32]
    assert memlimit.pages_at_limit(32 * MIB, classes) == 32
    for mem_mb, pages in WEB_PAGES.items():
        # what memcached at -m mem_mb holds is `pages` on the curve of the -m 32 memcached
        assert memlimit.pages_at_limit(mem_mb * MIB, classes) == pages
        assert memlimit.limit_for_bytes(pages * MIB) == mem_mb * MIB
    assert memlimit.limit_for_bytes(32.1 * MIB) == 33 * MIB
    assert memlimit.limit_for_bytes(10.2 * MIB) == 11 * MIB
    assert memlimit.limit_for_bytes(0) == MIB  # at least -m 1
    with pytest.raises(ValueError):
        memlimit.limit_for_bytes(float("nan"))
    with pytest.raises(ValueError):
        memlimit.limit_for_bytes(-1.0)


def test_each_class_keeps_its_first_page_below_the_limit() -> None:
    """memcached with more classes than -m pages holds one page a class (its first page is taken
    past the limit): 18 pages at -m 8 and 16 for 18 classes, -m pages from 32 up."""
    classes = [memlimit.ClassNow(152 * (k + 1), 20, 1) for k in range(18)]
    for mem_mb, pages in WIDE_PAGES.items():
        assert memlimit.pages_at_limit(mem_mb * MIB, classes) == pages
    held = memlimit.items_at_limit(8 * MIB, classes)
    assert all(v > 0 for v in held.values()) and len(held) == 18
    with pytest.raises(ValueError):
        memlimit.pages_at_limit(-1, classes)


def test_items_at_limit_shares_pages_as_today() -> None:
    classes = [memlimit.ClassNow(1184, 885 * 6, 6), memlimit.ClassNow(96, 10922 * 2, 2)]
    got = memlimit.items_at_limit(16 * MIB, classes)
    assert got == {0: 12 * 885, 1: 4 * 10922}


def test_hash_table_outside_the_limit() -> None:
    assert memlimit.hash_table_bytes(0) == 8 * 65536  # hashpower 16: 512 KiB
    assert memlimit.hash_table_bytes(98_304) == 8 * 65536  # 1.5 x 2^16: not yet expanded
    assert memlimit.hash_table_bytes(98_305) == 8 * 131072
    out = memlimit.outside_limit(1_000_000, 12)
    assert out.hash_table_bytes == 8 * (1 << 20)
    assert "hash table (8.0\u00a0MiB)" in out.describe() and "12 connection" in out.describe()


def test_human_bytes_picks_the_unit() -> None:
    assert memlimit.human_bytes(512) == "512\u00a0B"
    assert memlimit.human_bytes(64 * MIB) == "64\u00a0MiB"
    assert memlimit.human_bytes(88.54 * MIB) == "88.5\u00a0MiB"
    assert memlimit.human_bytes(3 * 1024 * 1024 * 1024) == "3.0\u00a0GiB"
    assert memlimit.human_bytes(1536) == "1.5\u00a0KiB"


@pytest.mark.live  # a real memcached process
@pytest.mark.parametrize("mem_mb", [6, 13])
def test_model_matches_a_real_memcached(mem_mb: int) -> None:
    """memcached -m N filled with one class holds exactly what the model says, and the model
    gives back -m N for what it holds."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "profiler-agent" / "tests" / "agent"))
    from agent_harness import Client, Memcached

    m = Memcached(mem_mb=mem_mb)
    try:
        c = Client(m.port)
        for i in range(20_000):  # 20 MB of 1000-byte values: every page taken, then evictions
            c.set(b"m%d" % i, b"v" * 1000)
        items = int(c.stats()["curr_items"])
        slabs = {}
        for ln in c.raw(b"stats slabs\r\n", (b"END",))[:-1]:
            _, k, v = ln.decode().split(" ", 2)
            slabs[k] = int(v.strip())
        c.close()
    finally:
        m.stop()
    (cls,) = {k.split(":")[0] for k in slabs if k.endswith(":chunk_size")}
    now = memlimit.ClassNow(slabs[f"{cls}:chunk_size"], items, slabs[f"{cls}:total_pages"])
    assert memlimit.items_at_limit(mem_mb * MIB, [now]) == {0: items}
    assert memlimit.pages_at_limit(mem_mb * MIB, [now]) == now.pages
    assert memlimit.limit_for_bytes(now.pages * MIB) == mem_mb * MIB


# ---- warm-up ------------------------------------------------------------------------------


def _fill(seq: list[tuple[int, bool | None]], limit: int = 64 * MIB) -> list[warmup.FillSample]:
    return [
        warmup.FillSample(T0 + timedelta(minutes=i), used, limit, full) for i, (used, full) in enumerate(seq)
    ]


def test_warming_until_full_then_settled() -> None:
    s = warmup.fill_state(_fill([(10 * MIB, False), (20 * MIB, False), (30 * MIB, False)]))
    assert s.warming_up and s.fill_ratio == pytest.approx(30 / 64)
    assert s.full_in_seconds == 204  # 34 MiB left at 10 MiB a minute
    assert "30\u00a0MiB of 64\u00a0MiB" in s.describe() and "full in about 3 min" in s.describe()
    s = warmup.fill_state(_fill([(30 * MIB, False), (64 * MIB, True)]))
    assert s.warming_up and s.full_in_seconds is None and "just filled" in s.describe()
    s = warmup.fill_state(_fill([(30 * MIB, False), (64 * MIB, True), (64 * MIB, True)]))
    assert not s.warming_up and s.fill_ratio == 1.0 and s.describe() == ""


def test_an_agent_started_beside_a_full_memcached_is_not_warming() -> None:
    assert not warmup.fill_state(_fill([(64 * MIB, True)])).warming_up


def test_unknown_fill_is_not_called_warming() -> None:
    s = warmup.fill_state(_fill([(0, None)]))
    assert not s.warming_up and s.fill_ratio is None
    assert not warmup.fill_state([]).warming_up


def test_a_memcached_that_stopped_filling_has_no_eta() -> None:
    s = warmup.fill_state(_fill([(30 * MIB, False), (30 * MIB, False)]))
    assert s.warming_up and s.full_in_seconds is None


def test_short_windows_measure_the_fill_rate_over_minutes() -> None:
    # 5 s windows; memcached takes a 1 MiB page every 20 s: the last five windows alone see none
    seq = [
        warmup.FillSample(T0 + timedelta(seconds=5 * i), (8 + i // 4) * MIB, 64 * MIB, False)
        for i in range(40)
    ]
    s = warmup.fill_state(seq)
    assert s.warming_up and s.full_in_seconds is not None
    assert s.full_in_seconds == pytest.approx((64 - 17) * 20, rel=0.15)


def test_a_cluster_warms_up_while_any_node_does() -> None:
    full = warmup.fill_state(_fill([(64 * MIB, True), (64 * MIB, True)]))
    filling = warmup.fill_state(_fill([(10 * MIB, False), (20 * MIB, False)]))
    c = warmup.combined([full, filling])
    assert c is not None and c.warming_up
    assert c.used_bytes == 84 * MIB and c.limit_bytes == 128 * MIB
    assert c.full_in_seconds == filling.full_in_seconds
    assert "84\u00a0MiB of 128\u00a0MiB" in c.describe()
    done = warmup.combined([full, full])
    assert done is not None and not done.warming_up and done.fill_ratio == 1.0
    assert warmup.combined([]) is None


# ---- hysteresis ---------------------------------------------------------------------------


def test_stationary_noise_gives_at_most_one_change_over_30_windows() -> None:
    rng = random.Random(7)
    raw = [72 * MIB * (1 + rng.gauss(0, 0.04)) for _ in range(30)]
    r = hysteresis.recommend(raw)
    assert r.changes <= 1 and r.stable and r.windows == 30
    assert r.memory_limit_bytes is not None and r.memory_limit_bytes % MIB == 0
    assert abs(r.memory_limit_bytes - 72 * MIB) <= 0.1 * 72 * MIB


def test_a_real_shift_moves_after_three_windows_and_single_outliers_do_not() -> None:
    raw: list[float | None] = [64 * MIB] * 5 + [90 * MIB] + [64 * MIB] * 3 + [None]
    r = hysteresis.recommend(raw)
    assert r.memory_limit_bytes == 64 * MIB and r.changes == 0 and r.stable
    r = hysteresis.recommend([64 * MIB] * 5 + [96 * MIB] * 2)
    assert r.memory_limit_bytes == 64 * MIB and not r.stable
    r = hysteresis.recommend([64 * MIB] * 5 + [96 * MIB] * 3)
    assert r.memory_limit_bytes == 96 * MIB and r.changes == 1 and r.stable
    assert hysteresis.recommend([None, None]).memory_limit_bytes is None


def test_alternating_sides_never_move_it() -> None:
    raw = [64 * MIB] + [80 * MIB, 48 * MIB] * 10
    r = hysteresis.recommend(raw)
    assert r.changes == 0 and not r.stable


# ---- quiet and lossy windows --------------------------------------------------------------


def _curve(top: float) -> tuple[list[float], list[float]]:
    xs = [i * MIB for i in range(1, 101)]
    return xs, [top * (1 - 0.97 ** (i + 1)) for i in range(100)]


def _win(i: int, top: float, reads: int, loss: float = 0.0, flagged: bool = False) -> windows.WindowCurve:
    xs, ys = _curve(top)
    return windows.WindowCurve(
        T0 + timedelta(minutes=i), xs, ys, reads, loss, flagged, 32 * MIB, ys[31] if reads else None
    )


def _answer(ws: list[windows.WindowCurve], target: float = 0.6) -> float:
    c = windows.combine(ws)
    assert c is not None
    mem = Pchip.fit(c.sizes_bytes, c.hit_ratios).inverse(target)
    assert mem is not None
    return mem


def test_quiet_windows_keep_the_last_good_answer() -> None:
    good = [_win(i, 0.9, 100_000) for i in range(6)]
    before = _answer(good)
    quiet = [_win(6, 0.0, 0), _win(7, 0.0, 40)]
    c = windows.combine(good + quiet)
    assert c is not None and c.reliable and c.newest is good[-1]
    assert set(c.skipped.values()) == {"quiet"} and "2 newer windows left out (quiet)" in c.describe()
    assert _answer(good + quiet) == pytest.approx(before)
    one = windows.combine(good + quiet[:1])
    assert one is not None and "1 newer window left out (quiet)" in one.describe()


def test_a_lossy_window_does_not_replace_a_good_curve() -> None:
    good = [_win(i, 0.9, 100_000) for i in range(6)]
    lossy = _win(6, 0.6, 100_000, loss=0.2, flagged=True)  # reads low after an agent restart
    c = windows.combine([*good, lossy])
    assert c is not None and c.skipped == {lossy.window_end: "stream loss"}
    assert abs(Pchip.fit(c.sizes_bytes, c.hit_ratios)(64 * MIB) - Pchip.fit(*_curve(0.9))(64 * MIB)) < 0.01


def test_recent_windows_are_weighted_by_reads() -> None:
    c = windows.combine([_win(0, 0.8, 100_000), _win(1, 0.9, 300_000)])
    assert c is not None and len(c.used) == 2
    y = Pchip.fit(c.sizes_bytes, c.hit_ratios)(50 * MIB)
    lo, hi = Pchip.fit(*_curve(0.8))(50 * MIB), Pchip.fit(*_curve(0.9))(50 * MIB)
    assert y == pytest.approx(0.25 * lo + 0.75 * hi, abs=1e-6)
    assert all(b >= a for a, b in zip(c.hit_ratios, c.hit_ratios[1:], strict=False))


def test_a_window_counts_only_as_far_as_its_ghost_reached() -> None:
    """Past an older window's ghost reach its curve is held flat (a lower bound): at sizes only the
    newest window measured, the combined curve is the newest's, not pulled down by the older."""
    xs, ys = _curve(0.9)
    flat = [min(y, ys[39]) for y in ys]  # an older window: measured to 40 MiB, held flat beyond
    old = replace(_win(0, 0.9, 300_000), hit_ratios=flat, ghost_reach_bytes=40 * MIB)
    new = replace(_win(1, 0.9, 100_000), ghost_reach_bytes=100 * MIB)
    c = windows.combine([old, new])
    assert c is not None and len(c.used) == 2
    f = Pchip.fit(c.sizes_bytes, c.hit_ratios)
    assert f(90 * MIB) == pytest.approx(Pchip.fit(xs, ys)(90 * MIB), abs=1e-6)  # the newest alone
    assert f(30 * MIB) == pytest.approx(Pchip.fit(xs, ys)(30 * MIB), abs=1e-6)  # both, equal there
    assert windows.measured_to(replace(new, ghost_reach_bytes=None)) == 100 * MIB


def test_only_bad_windows_are_used_but_said_unreliable() -> None:
    c = windows.combine([_win(0, 0.0, 0)])
    assert c is not None and not c.reliable and "with care" in c.describe()
    assert windows.combine([]) is None


# ---- the band -----------------------------------------------------------------------------


def test_band_is_tight_at_the_measured_point_and_widens_with_distance() -> None:
    xs, ys = _curve(0.9)
    m = band.BandModel(current_bytes=32 * MIB, drift_pp=0.5)
    lo, hi = band.band_curves(xs, ys, m)
    i_now, i_4x = 31, 99  # 32 MiB today, 100 MiB ~ 3x
    assert hi[i_now] - lo[i_now] < 0.04  # ~ +-1.6 pp at today's memory
    assert lo[i_now] <= ys[i_now] <= hi[i_now]
    assert (hi[i_4x] - lo[i_4x]) > (hi[i_now] - lo[i_now])
    assert all(a <= b for a, b in zip(lo, hi, strict=True))
    assert all(b >= a for a, b in zip(lo, lo[1:], strict=False))
    lossy = band.BandModel(current_bytes=32 * MIB, drift_pp=0.5, loss_ratio=0.1)
    _, hi_l = band.band_curves(xs, ys, lossy)
    assert hi_l[i_4x] > hi[i_4x] and hi_l[10] == hi[10]  # loss widens only above today


def test_above_today_the_band_spans_one_ghost_filter_on_the_memory_axis() -> None:
    # the scan mix's cliff (mcslru on its seeded reads): 0.618 at 4.00 N, 0.738 at 4.25 N; a ghost
    # reaching 5 N places a distance there only within (5 - 1) N / 9 = 0.44 N
    n = 32 * MIB
    xs = [n * f / 4 for f in range(1, 21)]  # 0.25 N .. 5 N
    ys = [min(0.5 + 0.03 * (x / n), 0.62) if x < 4.1 * n else 0.74 for x in xs]
    plain = band.BandModel(current_bytes=n, drift_pp=0.5)
    ghost = band.BandModel(current_bytes=n, drift_pp=0.5, ghost_span_bytes=band.ghost_span(5 * n, n))
    assert band.ghost_span(5 * n, n) == pytest.approx(4 * n / 9)
    assert band.ghost_span(None, n) == 0.0 and band.ghost_span(0.5 * n, n) == 0.0
    # an agent that reports its filters (curve.ghost_filters; 33 on today's defaults) narrows it
    assert band.ghost_span(5 * n, n, 33) == pytest.approx(4 * n / 33)
    assert band.reported_filters(33) == 33
    assert [band.reported_filters(v) for v in (None, 1, True, 33.0, "33")] == [None] * 5
    lo0, hi0 = band.band_curves(xs, ys, plain)
    lo, hi = band.band_curves(xs, ys, ghost)
    i4 = xs.index(4 * n)
    # at 4 N, just below the step: the high side reaches the step's top, as the ghost may place it
    assert hi0[i4] < 0.70 and hi[i4] >= 0.74
    # just above the step the low side reaches down to the curve below it
    i425 = xs.index(4.25 * n)
    assert lo0[i425] > 0.68 and lo[i425] <= 0.62 + 1e-9
    # below today's memory nothing changes; where the curve is smooth it widens by slope x span
    i_half = xs.index(0.5 * n)
    assert (lo[i_half], hi[i_half]) == (lo0[i_half], hi0[i_half])
    i2 = xs.index(2 * n)
    assert lo0[i2] - lo[i2] == pytest.approx(0.03 * 4 / 9, abs=0.002)
    assert hi[i2] - hi0[i2] == pytest.approx(0.03 * 4 / 9, abs=0.002)


def test_the_drift_is_the_servers_record_shrunk_toward_the_benchmarks_error() -> None:
    new = band.drift_estimate([])
    assert new.basis == "benchmark_prior" and new.graded_predictions == 0
    assert new.pp == pytest.approx(band.PRIOR_DRIFT_PP)
    d = band.drift_estimate([3.0, -4.0, 0.0])
    assert d.basis == "server_record" and d.graded_predictions == 3
    assert d.pp == pytest.approx(math.sqrt((25 + band.PRIOR_WEIGHT * band.PRIOR_DRIFT_PP**2) / 13))
    # a new server whose first graded predictions came while its agent settled (the benchmark's
    # second windows: -14.6 and -9.6 pp) is between the prior and its own raw RMS...
    first = [-14.6, -9.6, -4.1]
    raw = math.sqrt(sum(e * e for e in first) / 3)
    assert band.PRIOR_DRIFT_PP < band.drift_estimate(first).pp < raw
    # ... and a long record of a server more accurate than the benchmark narrows toward its own
    good = band.drift_estimate([0.3, -0.2] * 30)
    assert good.pp < band.PRIOR_DRIFT_PP and good.pp > 0.25
    assert band.drift_estimate([float("nan"), 1.0]).graded_predictions == 1
