"""Calibration, uncertainty band, cluster combination and alert rules (pure, no database)."""

from __future__ import annotations

import math
from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from hitcurve.rules import alerts, shortage
from hitcurve_worker.calibrate import FLAT_TOLERANCE, calibrate, curve_at
from hitcurve_worker.cluster import ServerInput, combine

GIB = float(1 << 30)


def che_curve(memory: np.ndarray, capacity: float) -> np.ndarray:
    return 0.95 * (1 - np.exp(-memory / capacity))


def test_size_rescaling_recovers_a_known_effective_capacity() -> None:
    # The model is an LRU curve; "memcached" is the same curve with 1.3x effective capacity.
    memory = np.linspace(0.02, 2.0, 100) * GIB
    model = che_curve(memory, 0.5 * GIB)
    true = che_curve(1.3 * memory, 0.5 * GIB)
    now = 1.0 * GIB
    measured = float(che_curve(np.array([1.3 * now]), 0.5 * GIB)[0])
    cal = calibrate(memory, model, now, measured)
    assert cal.method == "size-scale"
    assert cal.scale == pytest.approx(1.3, rel=1e-3)
    assert float(curve_at(memory, cal.calibrated, now)) == pytest.approx(measured, abs=1e-9)
    inside = 1.3 * memory <= memory[-1]
    # exact (up to the grid's linear interpolation) where the model covers s*M
    assert np.max(np.abs(cal.calibrated[inside] - true[inside])) < 2e-3
    assert cal.valid_max_bytes == pytest.approx(memory[-1] / cal.scale)
    # a vertical shift would be off by the full model error at small memory
    shift = model + (measured - cal.predicted)
    assert np.max(np.abs(shift[inside] - true[inside])) > 5 * np.max(
        np.abs(cal.calibrated[inside] - true[inside])
    )


def test_calibration_edge_cases() -> None:
    memory = np.linspace(0.1, 1.0, 10) * GIB
    model = np.linspace(0.05, 0.5, 10)
    now = 0.5 * GIB
    none = calibrate(memory, model, now, None)
    assert none.method == "none" and none.calibrated is None
    above = calibrate(memory, model, now, 0.9)  # above the model's maximum 0.5
    assert above.method == "ratio"
    assert float(curve_at(memory, above.calibrated, now)) == pytest.approx(0.9)
    assert np.all(np.diff(above.calibrated) >= 0) and np.all(above.calibrated <= 1)
    tiny = calibrate(memory, model, now, 0.001)  # would need s = 0.004: clamped, then corrected
    assert tiny.method == "size-scale-clamped" and tiny.scale == pytest.approx(1 / 8)
    assert float(curve_at(memory, tiny.calibrated, now)) == pytest.approx(0.001, abs=1e-9)
    zero = calibrate(memory, model, now, 0.0)
    assert np.all(zero.calibrated == 0)
    # plateau: the model equals the measured ratio over a range containing today -> no change
    flat = np.array([0.1, 0.3, 0.5, 0.5, 0.5, 0.5, 0.5, 0.6, 0.7, 0.8])
    same = calibrate(memory, flat, now, 0.5)
    assert same.scale == pytest.approx(1.0) and np.allclose(same.calibrated, flat)
    empty = calibrate(memory, model, 0, 0.5)
    assert empty.method == "none"


MIB = 1 << 20


def test_a_flat_model_is_matched_by_a_ratio_not_rescaled_to_its_knee() -> None:
    """A TTL-aware model is flat once memory holds the expiry-bounded working set. A
    measured point a hair below that plateau would move a size rescaling to the knee (halving the
    effective capacity here); with flat_tolerance the curve is scaled by the ratio instead."""
    mem = np.linspace(1, 100, 100) * MIB
    model = np.minimum(mem / (40 * MIB), 1.0) * 0.65  # knee at 40 MiB, flat 0.65 beyond
    now = 80 * MIB
    rescaled = calibrate(mem, model, now, 0.649)
    assert rescaled.method == "size-scale" and rescaled.scale < 0.55
    flat = calibrate(mem, model, now, 0.649, flat_tolerance=FLAT_TOLERANCE)
    assert flat.method == "ratio-flat" and flat.scale == 1.0
    assert flat.calibrated is not None
    assert float(curve_at(mem, flat.calibrated, now)) == pytest.approx(0.649)
    half = float(curve_at(mem, flat.calibrated, 20 * MIB))
    assert half == pytest.approx(0.325 * 0.649 / 0.65, abs=1e-3)  # the knee stays where it was
    # below the plateau (memory short of the working set) a size rescaling is still used
    short = calibrate(mem, model, 30 * MIB, 0.45, flat_tolerance=FLAT_TOLERANCE)
    assert short.method == "size-scale"


def _cliff_model(memory: np.ndarray, now: float) -> np.ndarray:
    """A ghost-fed model with the scan mix's shape: smooth, then a loop of keys that
    comes back after 4.1x today's memory, a +20 pp step there."""
    return che_curve(memory, 2.0 * now) * 0.7 + 0.2 * (memory >= 4.1 * now)


def test_above_today_the_ghost_keeps_its_size_axis() -> None:
    """Calibration above today's memory, scan mix at 4M: the model read 0.1-0.6 pp under memcached at today's
    memory; a rescaling of the whole axis by s = 1.006-1.036 moved the cliff at 4.1 N onto 4 N (+4 pp there).
    Above today's memory the model is the ghost, counted in memcached's own evictions: the calibration adds
    the offset at today's memory, (s - 1) x today, and no more."""
    now = 1.0 * GIB
    memory = np.linspace(0.05, 5.0, 100) * GIB
    model = _cliff_model(memory, now)
    predicted = float(curve_at(memory, model, now))
    measured = predicted + 0.005  # memcached half a point above the model at today's memory
    plain = calibrate(memory, model, now, measured)
    ghost = calibrate(memory, model, now, measured, ghost_above=True)
    assert ghost.method == plain.method == "size-scale" and ghost.scale == pytest.approx(plain.scale)
    s = ghost.scale
    assert 1.01 < s < 1.05
    offset = (s - 1) * now
    assert ghost.offset_above_bytes == pytest.approx(offset) and plain.offset_above_bytes is None
    assert ghost.calibrated is not None and plain.calibrated is not None
    # both pass through the measured point; below it they are the same rescaling
    for cal in (plain, ghost):
        assert float(curve_at(memory, cal.calibrated, now)) == pytest.approx(measured, abs=1e-9)
    below = memory <= now
    assert np.allclose(ghost.calibrated[below], plain.calibrated[below])
    # above: the model moved by the fixed offset, so at 4x today the cliff is still ahead
    at4 = float(curve_at(memory, ghost.calibrated, 4 * now))
    assert at4 == pytest.approx(float(curve_at(memory, model, 4 * now + offset)), abs=1e-9)
    assert at4 < float(curve_at(memory, model, 4 * now)) + 0.01
    # ...where the whole-axis rescaling reads s x 4 today, past the cliff (what the bench saw)
    assert float(curve_at(memory, plain.calibrated, 4 * now)) > at4 + 0.05
    # the curve stays non-decreasing and continuous at today's memory
    assert np.all(np.diff(ghost.calibrated) >= -1e-12)
    assert float(curve_at(memory, ghost.calibrated, now * 1.0001)) == pytest.approx(measured, abs=1e-3)
    # the model's valid range and any model size map back through the same offset
    assert ghost.valid_max_bytes == pytest.approx(memory[-1] - offset)
    assert plain.valid_max_bytes == pytest.approx(memory[-1] / s)
    for x in (2 * now, 3.5 * now):
        back = ghost.calibrated_bytes(x)
        assert back == pytest.approx(x - offset)
        assert float(curve_at(memory, ghost.calibrated, back)) == pytest.approx(
            float(curve_at(memory, model, x)), abs=1e-3
        )
    assert ghost.calibrated_bytes(0.5 * now) == pytest.approx(0.5 * now / s)


def test_ghost_offset_when_the_model_reads_above_memcached() -> None:
    """s < 1 (the model above the measured point): the curve above today's memory moves right by
    the same fixed amount, never below the measured point."""
    now = 1.0 * GIB
    memory = np.linspace(0.05, 5.0, 100) * GIB
    model = _cliff_model(memory, now)
    measured = float(curve_at(memory, model, now)) - 0.005
    cal = calibrate(memory, model, now, measured, ghost_above=True)
    assert cal.calibrated is not None and cal.scale < 1
    assert float(curve_at(memory, cal.calibrated, now)) == pytest.approx(measured, abs=1e-9)
    assert np.all(np.diff(cal.calibrated) >= -1e-12)
    assert np.all(cal.calibrated[memory > now] >= measured - 1e-12)
    x = 4.2 * now  # the cliff now starts at 4.1 today + |offset|
    assert float(curve_at(memory, cal.calibrated, x)) == pytest.approx(
        float(curve_at(memory, model, x + (cal.scale - 1) * now)), abs=1e-9
    )


def test_cluster_of_equal_servers_is_each_server_scaled_by_node_count() -> None:
    # 4 equal servers with the same curve: the cluster at total T equals one server at T/4.
    x = np.linspace(0.01, 2, 100) * GIB
    y = che_curve(x, 0.4 * GIB)
    servers = [ServerInput(f"s{i}", x, y, 1.0 * GIB, 1000.0, measured=0.8) for i in range(4)]
    res = combine(servers, node_size_bytes=int(1 * GIB))
    assert res.current_bytes == pytest.approx(4 * GIB)
    assert res.sizes_bytes[-1] == pytest.approx(8 * GIB)
    for t, h in zip(res.sizes_bytes, res.hit_ratios, strict=True):
        assert h == pytest.approx(float(curve_at(x, y, t / 4)), abs=1e-12)
    assert res.node_counts == list(range(1, 9))
    assert res.node_hit_ratios[3] == pytest.approx(float(curve_at(x, y, 1.0 * GIB)), abs=1e-9)
    assert res.measured == pytest.approx(0.8)


def test_cluster_weights_servers_by_reads() -> None:
    x = np.linspace(0.1, 1, 10) * GIB
    a = ServerInput("a", x, np.full(10, 0.9), 0.5 * GIB, 3000.0, measured=0.9)
    b = ServerInput("b", x, np.full(10, 0.5), 0.5 * GIB, 1000.0, measured=0.5)
    c = ServerInput("c", x, np.full(10, 0.1), 0.0, 1000.0)  # no memory: skipped, named
    res = combine([a, b, c])
    assert res.hit_ratios[-1] == pytest.approx(0.75 * 0.9 + 0.25 * 0.5)
    assert res.measured == pytest.approx(0.8)
    assert res.used == ["a", "b"] and "c" in res.skipped
    assert res.memory_for(0.5) is not None and res.memory_for(0.99) is None


def test_alert_rules() -> None:
    th = alerts.Thresholds()
    MIB = float(1 << 20)

    def sizing(
        measured: float | None,
        needed: float | None,
        allocated: float = 64 * MIB,
        low: float | None = None,
        status: str = "ok",
    ) -> tuple:
        # no band given: the -m to set is the band's low end too (an answer without a band yet)
        memory = shortage.judge(status, allocated, 1, needed, low, None, th.shortfall_margin)
        return alerts.sizing("cluster web", measured, 0.9, memory, 0.95, 178 * MIB, th)

    # target met, memory enough: nothing
    assert sizing(0.95, 60 * MIB) == (None, None)
    # one cause, one alert: memory short is the cause, below_target stays quiet
    below, short = sizing(0.80, 72 * MIB)
    assert below is None and short is not None and short.kind == "memory_short"
    assert short.severity == "critical"  # 10 pp below the target
    assert short.message == (
        "cluster web: the target hit rate 90\u00a0% needs a memory limit (-m) of 72\u00a0MiB; "
        "the limit today is 64\u00a0MiB (8.0\u00a0MiB short, and short even at the band's low end "
        "72\u00a0MiB); measured 80\u00a0%, 10.0 pp below"
    )
    assert sizing(0.88, 72 * MIB)[1].severity == "warning"  # type: ignore[union-attr]
    # today's -m inside the band (its low end 62 MiB): at the edge, no alert of either kind
    assert sizing(0.88, 66 * MIB, low=62 * MIB) == (None, None)
    assert sizing(0.88, 66 * MIB, low=66 * MIB)[1] is not None  # the low end 3 % above 64: certain
    assert sizing(0.88, 66 * MIB, low=65 * MIB) == (None, None)  # a -m step, inside the 2 % margin
    # a cluster's -m in all, and per node as its answer gives it
    two = shortage.judge("ok", 128 * MIB, 2, 72 * MIB, 70 * MIB, 74 * MIB, th.shortfall_margin)
    _, short = alerts.sizing("cluster web", 0.80, 0.9, two, 0.95, 356 * MIB, th)
    assert short is not None
    assert "of 144\u00a0MiB (72\u00a0MiB on each of 2 nodes); the limit today is 128" in short.message
    # beyond the curve: a lower bound in the text, still memory (the band's optimistic side does
    # not reach the target either)
    below, short = sizing(0.80, None, status="above_curve")
    assert below is None and short is not None
    assert "needs a memory limit (-m) of more than 178\u00a0MiB" in short.message
    # ... but when the optimistic side reaches it below today's -m, the estimate cannot tell
    assert sizing(0.80, None, low=60 * MIB, status="above_curve") == (None, None)
    # below target although the curve says 64 MiB reaches it: not memory; below_target alone
    below, short = sizing(0.80, 50 * MIB)
    assert (
        short is None and below is not None and below.kind == "below_target" and below.severity == "critical"
    )
    assert below.message.startswith("cluster web: hit rate 80\u00a0% is 10.0 pp below the target 90\u00a0%")
    assert sizing(None, 50 * MIB) == (None, None)
    assert sizing(0.95, 72 * MIB)[0] is None and sizing(0.95, 72 * MIB)[1] is not None  # short, target met
    # an answer not known yet: nothing at all
    assert alerts.sizing(
        "cluster web", 0.5, 0.9, shortage.judge("unknown", 64 * MIB, 1, None, None, None), 0.95, 178 * MIB, th
    ) == (None, None)
    # units are automatic: small sizes are never "0.00 GiB"
    assert "KiB" in sizing(0.5, 900 * 1024.0, 512 * 1024.0)[1].message  # type: ignore[union-attr]
    s = alerts.savings("cluster web", 5 * GIB, 10 * GIB, 0.9, 2.0, th)
    assert s is not None and s.details["saving_per_month"] == pytest.approx(10.0)
    assert "(-m) of 5.0\u00a0GiB of the 10\u00a0GiB set today: 5.0\u00a0GiB could be saved" in s.message
    assert alerts.savings("cluster web", 8 * GIB, 10 * GIB, 0.9, 2.0, th) is None
    now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    srv = "server cache-1 (10.0.0.7:11211)"
    assert alerts.stale_agent(srv, now - timedelta(seconds=100), now, th) is None
    stale = alerts.stale_agent(srv, now - timedelta(seconds=900), now, th)
    assert stale is not None and stale.message.startswith(srv)
    assert alerts.stale_agent(srv, None, now, th) is None
    assert alerts.stream_loss(srv, 0.01, th) is None and alerts.stream_loss(srv, 0.2, th) is not None
    assert alerts.stream_loss(srv, math.nan, th) is None
    assert alerts.curve_error(srv, [9.0, 9.0], th) is None  # too little history to judge
    assert alerts.curve_error(srv, [1.0, -2.0, 1.5], th) is None
    assert alerts.curve_error(srv, [8.0, -7.0, 6.0], th) is not None
    assert alerts.curve_error(srv, [8.0, -7.0, 6.0], th, warming_up=True) is None


def test_thresholds_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HITCURVE_ALERT_LOSS_RATIO", "0.2")
    monkeypatch.setenv("HITCURVE_ALERT_SILENT_AFTER_S", "bogus")
    th = alerts.Thresholds.from_env()
    assert th.loss_ratio == 0.2 and th.silent_after_s == 300.0


def test_alert_and_api_status_share_one_threshold_and_statistic() -> None:
    """The agent-silent alert fires exactly when the API calls the server silent, with the same
    severity (warning past silent_after_s, critical after an hour); the curve-error alert and the
    API's curve_error_warning judge the same statistic (mean |error|)."""
    from hitcurve.rules.status import curve_error_warning, mean_abs_error, server_status

    th = alerts.Thresholds(silent_after_s=120.0, curve_error_pp=5.0)
    now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)
    for age in (60.0, 119.0, 121.0, 900.0, 4000.0):
        last = now - timedelta(seconds=age)
        fired = alerts.stale_agent("server s", last, now, th)
        status, why = server_status(last, 0.0, 0.0, now, th)
        assert (fired.severity if fired else "ok") == status, age
        assert (why == "agent silent") == (fired is not None) == (age > 120.0), age
    assert status == "critical"  # 4,000 s: past the hour
    # RMS of these is above 5 pp, the mean absolute error is not: neither side warns
    errors = [9.0, 1.0, 1.0, 1.0, 1.0]
    assert mean_abs_error(errors) == pytest.approx(2.6)
    assert alerts.curve_error("server s", errors, th) is None and not curve_error_warning(
        mean_abs_error(errors), th
    )
    errors = [7.0, -6.0, 5.5]
    assert alerts.curve_error("server s", errors, th) is not None and curve_error_warning(
        mean_abs_error(errors), th
    )


def test_worker_settings_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    from hitcurve_worker.settings import worker_settings

    assert worker_settings().worker_max_attempts == 8 and worker_settings().worker_test_pause_s == 0.0
    monkeypatch.setenv("HITCURVE_WORKER_MAX_ATTEMPTS", "3")
    monkeypatch.setenv("HITCURVE_RETENTION_DAYS", "bogus")  # keeps its default
    monkeypatch.setenv("HITCURVE_WORKER_TEST_PAUSE_S", "0.5")
    s = worker_settings()
    assert (s.worker_max_attempts, s.retention_days, s.worker_test_pause_s) == (3, 400.0, 0.5)
