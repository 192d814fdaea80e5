"""The memory alert opens only on a certain shortage (hitcurve.rules.shortage), pure: the answer a
cluster gives (hitcurve.sizing.answers.memory_answer, the function behind the API, the card, the
e-mail and /metrics) and the alerts the worker opens from it (cluster_alerts.alerts_for), on the
demo's numbers: memcached -m 64, a 90 % target whose -m to set is 66 MiB, band 62-69 MiB."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from hitcurve.rules import alerts, knowledge, shortage
from hitcurve.rules.curves import Pchip
from hitcurve.rules.windows import WindowCurve
from hitcurve.schemas.sizing import CurveInfo, Subject
from hitcurve.sizing.answers import memory_answer
from hitcurve.sizing.basis import Basis
from hitcurve.sizing.recent_windows import basis_from_windows
from hitcurve_worker.cluster_alerts import alerts_for

MIB = 1 << 20
T0 = datetime(2026, 12, 2, 6, 0, tzinfo=UTC)
SUBJECT = Subject(type="cluster", id="3f0c2a9e-3f55-4a0e-9a53-0d6a5e1c2b11")


def _curve(mib_at_90: float) -> Pchip:
    """A concave curve through 90 % at `mib_at_90` MiB, over 1..320 MiB."""
    xs = [float(MIB * k) for k in range(1, 321)]
    return Pchip.fit(xs, [min(0.99, 0.9 * (k / mib_at_90) ** 0.15) for k in range(1, 321)])


def _basis(
    limit_mib: int, at_90: float = 66.0, low: float = 62.0, high: float = 69.0, windows: int = 3
) -> Basis:
    """`windows` earlier windows with the same curve (the -m to set's hysteresis holds after 3)."""
    main = _curve(at_90)
    b = Basis(
        main,
        "calibrated",
        None,
        CurveInfo(
            computed_at=T0,
            window_end=T0,
            age_seconds=0.0,
            current_bytes=limit_mib * MIB,
            measured_hit_ratio=0.89,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
    )
    # the band: the optimistic side reaches 90 % at `low` MiB, the pessimistic at `high`
    b.conf_high, b.conf_low = _curve(low), _curve(high)
    b.limit_bytes = limit_mib * MIB
    b.nodes = 1
    b.history = [main] * windows
    b.history_seen = [None] * windows
    return b


def _alerts(b: Basis) -> dict[str, alerts.Firing | None]:
    ans = memory_answer(SUBJECT, b, 0.9)
    return dict(alerts_for(ans, "demo", 1.0, alerts.Thresholds()))


def test_a_shortage_inside_the_band_is_at_the_edge_and_opens_no_alert() -> None:
    """The demo's -m 64 lies inside the band 62-69 MiB of an answer whose -m to set is 66: the
    answer says "at the edge", and neither memory_short nor below_target opens (the old rule
    opened memory_short, a warning, at -m to set > 1.02 x the limit)."""
    ans = memory_answer(SUBJECT, _basis(64), 0.9)
    assert ans.status == "ok" and ans.recommended_memory_limit_bytes == 66 * MIB
    assert ans.band.memory_limit_bytes_min is not None and ans.band.memory_limit_bytes_min <= 64 * MIB
    assert ans.memory_state == shortage.AT_EDGE
    assert ans.memory_state_words is not None
    assert ans.memory_state_words.startswith("at the edge: within the estimate's band (-m 62 – 69)")
    assert ans.memory_state_words in ans.message  # the API's message says it, as every surface does
    fired = _alerts(_basis(64))
    assert fired[alerts.MEMORY_SHORT] is None and fired[alerts.BELOW_TARGET] is None


def test_a_certain_shortage_opens_the_alert_and_says_so() -> None:
    """-m 56 lies below the whole band: short for certain, one memory_short alert naming the
    band's low end; the answer's words and state say the same."""
    b = _basis(56)
    ans = memory_answer(SUBJECT, b, 0.9)
    assert ans.memory_state == shortage.SHORT
    assert ans.memory_state_words == (
        "short: today's -m 56 lies below the whole of the estimate's band (-m 62 – 69)"
    )
    short = _alerts(b)[alerts.MEMORY_SHORT]
    assert short is not None and short.severity == "warning"  # measured 89 %: 1 pp below
    assert "(10\u00a0MiB short, and short even at the band's low end 62\u00a0MiB)" in short.message
    assert short.details["memory_state"] == shortage.SHORT and short.details["band_low_bytes"] == 62 * MIB


def test_a_shortage_of_a_minus_m_step_stays_at_the_edge() -> None:
    """The live demo's case: the band 64.3-79 MiB starts just above -m 64 (its low -m 65), the -m to
    set is 69. Short for certain, but by a -m step, within the 2 % shortfall margin: at the edge, no
    alert (without the margin the alert opened and resolved as the low end moved between -m 64 and
    65 window by window); a band starting at -m 66 is short."""
    b = _basis(64, at_90=68.3, low=64.3, high=79.0)
    ans = memory_answer(SUBJECT, b, 0.9)
    assert ans.band.memory_limit_bytes_min == 65 * MIB and ans.recommended_memory_limit_bytes == 69 * MIB
    assert ans.memory_state == shortage.AT_EDGE
    assert ans.memory_state_words == (
        "at the edge: the estimate's band (-m 65 – 79) starts just above today's -m 64, within the 2\u00a0% "
        "alert margin: short by at most a -m step, no alert"
    )
    assert _alerts(b)[alerts.MEMORY_SHORT] is None
    b = _basis(64, at_90=68.3, low=65.3, high=79.0)
    assert memory_answer(SUBJECT, b, 0.9).memory_state == shortage.SHORT
    assert _alerts(b)[alerts.MEMORY_SHORT] is not None


def test_a_certain_shortage_waits_until_the_minus_m_to_set_has_held() -> None:
    """The live -m 32 memcached's first known window: band -m 33 - past the curve, the -m to set
    not yet held for 3 windows: at the edge for now, no alert (it opened for one minute, then the
    next window's band started at -m 32); once held, short and one alert."""
    b = _basis(56, windows=1)
    ans = memory_answer(SUBJECT, b, 0.9)
    assert ans.stable is False and ans.memory_state == shortage.AT_EDGE
    assert ans.memory_state_words == (
        "at the edge for now: the estimate's band (-m 62 – 69) lies above today's -m 56, but the -m to set "
        "is still settling: no alert until it holds"
    )
    assert _alerts(b)[alerts.MEMORY_SHORT] is None
    held = _basis(56, windows=3)
    assert memory_answer(SUBJECT, held, 0.9).stable is True
    assert _alerts(held)[alerts.MEMORY_SHORT] is not None


@pytest.mark.parametrize("limit_mib", [66, 80])
def test_enough_memory_says_enough(limit_mib: int) -> None:
    b = _basis(limit_mib)
    ans = memory_answer(SUBJECT, b, 0.9)
    assert ans.memory_state == shortage.ENOUGH
    assert ans.memory_state_words == f"enough: today's -m {limit_mib} reaches the target"
    assert "at the edge" not in ans.message and "short:" not in ans.message
    assert _alerts(b)[alerts.MEMORY_SHORT] is None


def test_the_judgement_in_numbers() -> None:
    """The rule alone: short only when the band's low -m is above today's (all nodes), at the edge
    between it and the -m to set; no state for an answer not known yet or without today's -m."""
    j = shortage.judge
    assert j("ok", 64 * MIB, 1, 66 * MIB, 64 * MIB, 69 * MIB).state == shortage.AT_EDGE  # type: ignore[union-attr]
    assert j("ok", 64 * MIB, 1, 66 * MIB, 65 * MIB, 69 * MIB).state == shortage.SHORT  # type: ignore[union-attr]
    assert j("ok", 128 * MIB, 2, 66 * MIB, 63 * MIB, 69 * MIB).state == shortage.AT_EDGE  # type: ignore[union-attr]
    assert j("ok", 120 * MIB, 2, 66 * MIB, 63 * MIB, 69 * MIB).state == shortage.SHORT  # type: ignore[union-attr]
    assert j("unreachable", 64 * MIB, 1, None, None, None).state == shortage.SHORT  # type: ignore[union-attr]
    for status in ("warming_up", "unknown", None):
        assert j(status, 64 * MIB, 1, None, None, None) is None
    assert j("ok", None, 1, 66 * MIB, 62 * MIB, 69 * MIB) is None
    # the shortfall margin: the low end must pass today's -m by more than it
    assert j("ok", 64 * MIB, 1, 69 * MIB, 65 * MIB, 79 * MIB, 0.02).state == shortage.AT_EDGE  # type: ignore[union-attr]
    assert j("ok", 64 * MIB, 1, 69 * MIB, 66 * MIB, 79 * MIB, 0.02).state == shortage.SHORT  # type: ignore[union-attr]


def _past(mib_at_90: float = 400.0) -> Pchip:
    """A curve still rising at its end (320 MiB) below 90 %: the target lies past it."""
    return _curve(mib_at_90)


def _past_basis(limit_mib: int, past_windows: int) -> Basis:
    """Three windows on the curve (90 % at 66 MiB), then `past_windows` windows whose curve ends
    below 90 % (the band's optimistic side too): today's answer is past the curve."""
    b = _basis(limit_mib)
    b.main = _past()
    b.conf_high, b.conf_low = _past(380.0), _past(420.0)
    b.history = [_curve(66.0)] * 3 + [_past()] * past_windows
    b.history_seen = [None] * len(b.history)
    return b


def test_one_window_past_the_curve_opens_no_alert() -> None:
    """One window whose answer lies past the curve's end, between windows on it: not even the band's
    optimistic side reaches 90 % at -m 64, a certain shortage, but one window of it (the batched
    drain never saw it, the one-at-a-time path opened memory_short and the next window resolved
    it). It waits as an -m to set does: at the edge for now, no alert, the answer not stable."""
    b = _past_basis(64, past_windows=1)
    ans = memory_answer(SUBJECT, b, 0.9)
    assert ans.status == "above_curve" and ans.recommended_memory_limit_bytes is None
    assert ans.stable is False and ans.memory_state == shortage.AT_EDGE
    assert ans.memory_state_words == (
        "at the edge for now: today's -m 64 does not reach the target within the curve, but the answer has "
        "not been past the curve for 3 windows in a row yet: no alert until it holds"
    )
    assert ans.memory_state_words in ans.message
    fired = _alerts(b)
    assert fired[alerts.MEMORY_SHORT] is None and fired[alerts.BELOW_TARGET] is None
    assert _alerts(_past_basis(64, past_windows=2))[alerts.MEMORY_SHORT] is None


def test_a_shortage_past_the_curve_opens_once_it_holds() -> None:
    """Three windows in a row past the curve (hysteresis.HOLD_WINDOWS, the -m to set's wait):
    held, short, one memory_short naming the curve's reach."""
    b = _past_basis(64, past_windows=3)
    ans = memory_answer(SUBJECT, b, 0.9)
    assert ans.status == "above_curve" and ans.stable is True and ans.memory_state == shortage.SHORT
    short = _alerts(b)[alerts.MEMORY_SHORT]
    assert short is not None and "the most the curve covers" in short.message, short
    # a window past the curve whose sight fell short of its end (memcached filling then) does not
    # count toward holding
    b.history_seen = [None] * 3 + [0.0, None, None]
    assert memory_answer(SUBJECT, b, 0.9).stable is False and _alerts(b)[alerts.MEMORY_SHORT] is None


def _window(k: int, ys: list[float]) -> WindowCurve:
    """Window k (a minute each) of a -m 32 memcached, full, 20,000 reads."""
    return WindowCurve(
        window_end=T0 + timedelta(minutes=k),
        sizes_bytes=[float(MIB * x) for x in range(1, 161)],
        hit_ratios=ys,
        reads=20_000,
        loss_ratio=0.0,
        flagged=False,
        current_bytes=32 * MIB,
        measured_hit_ratio=0.88,
    )


def _first_known(windows_after_fill: int) -> Basis:
    """Two windows right after memcached filled, whose curves level off at 60 %, then windows whose
    own curves reach 90 % at 36 MiB: the answer (the newest windows combined, hitcurve.rules.windows)
    is unknown while a levelled-off window is among them, and known from the first window without
    one; the band -m 34 - 40 lies wholly above today's -m 32."""
    low = [min(0.6, 0.6 * (x / 20) ** 0.3) for x in range(1, 161)]
    good = [min(0.97, 0.9 * (x / 36) ** 0.15) for x in range(1, 161)]
    wins = [_window(k, low) for k in range(2)]
    wins += [_window(2 + k, good) for k in range(windows_after_fill)]
    b = basis_from_windows(wins, limit_bytes=32 * MIB)
    assert b is not None
    b.nodes = 1
    b.conf_high, b.conf_low = _curve(34.0), _curve(40.0)
    # the agent has seen out to 60 MiB (memcached's evictions since it attached), in every window
    b.sight = knowledge.Sight(None, 60.0 * MIB, b.main.x_max, 32.0 * MIB)
    b.history_seen = [60.0 * MIB] * len(b.history)
    return b


def test_the_first_known_answer_after_unknown_windows_has_not_held() -> None:
    """A live -m 32 memcached: its answer said "unknown" for two windows whose own curves already
    reached 90 % (the levelled-off windows combined with them did not), then its first known answer
    was short and counted as held (the hysteresis read those windows' own curves), and a memory alert
    opened that the next window resolved. The answer has held only after 3 windows known in a row:
    at the edge for now until then, short and one alert after."""
    for after_fill in (3, 4):  # a levelled-off window among the newest 5: not seen to reach 90 %
        assert memory_answer(SUBJECT, _first_known(after_fill), 0.9).status == "unknown"
    b = _first_known(5)
    ans = memory_answer(SUBJECT, b, 0.9)
    assert ans.status == "ok" and ans.recommended_memory_limit_bytes == 36 * MIB
    assert ans.stable is False and ans.memory_state == shortage.AT_EDGE, ans.message
    assert ans.memory_state_words is not None and "still settling" in ans.memory_state_words
    assert _alerts(b)[alerts.MEMORY_SHORT] is None
    held = _first_known(7)
    ans = memory_answer(SUBJECT, held, 0.9)
    assert ans.stable is True and ans.memory_state == shortage.SHORT, ans.message
    assert _alerts(held)[alerts.MEMORY_SHORT] is not None
