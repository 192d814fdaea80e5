"""What an answer knows (hitcurve.rules.knowledge) and the one -m to set (sizing.headline), on the
demo's own numbers: memcached -m 64 just full, 220,736 items, the agent's ghost complete from the
start (it reports the whole 5 x curve as seen), ~400 evictions a second."""

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

from hitcurve.rules import knowledge
from hitcurve.rules.curves import Pchip
from hitcurve.rules.warmup import FillState
from hitcurve.schemas.sizing import CurveInfo
from hitcurve.sizing.basis import Basis
from hitcurve.sizing.headline import headline

MIB = 1 << 20
T0 = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
FULL = FillState(False, 1.0, None, 64 * MIB, 64 * MIB)


def rows(evictions: list[int], first: int = 0) -> list[SimpleNamespace]:
    """Fill rows 20 s apart, the agent attached at `first` evictions."""
    out = [
        SimpleNamespace(
            window_end=T0, instance_id="i", evictions_total=first, curr_items=220_736, memory_full=True
        )
    ]
    for k, e in enumerate(evictions, start=1):
        out.append(
            SimpleNamespace(
                window_end=T0 + timedelta(seconds=20 * k),
                instance_id="i",
                evictions_total=e,
                curr_items=220_736,
                memory_full=True,
            )
        )
    return out


def test_a_complete_ghost_is_seen_only_as_far_as_the_evictions_since_it_attached() -> None:
    ev = knowledge.evictions(rows([8_000, 16_000, 23_098]))
    assert ev is not None and ev.caps == 23_098 and ev.per_second is not None and 380 < ev.per_second < 390
    seen = knowledge.seen_bytes(64 * MIB, 320 * MIB, 320 * MIB, ev.caps, ev.items_now)
    assert 70 * MIB < seen < 71 * MIB  # the demo's first full minute: 70.7 MiB, not the reported 320
    sight = knowledge.Sight(FULL, seen, 320 * MIB, 64 * MIB, ev)
    assert sight.status(66 * MIB) is None  # 90 % at 66 MiB: seen, known
    assert sight.status(88 * MIB) == knowledge.NOT_SEEN  # 95 % at 88 MiB: not yet
    assert sight.status(None) == knowledge.NOT_SEEN  # not reached on the seen part: no "unreachable"
    assert sight.seen_all_in_seconds() is not None and 2000 < sight.seen_all_in_seconds() < 2400  # ~37 min
    until = sight.until(knowledge.NOT_SEEN, 0.95)
    assert "seen the curve up to 70.7\u00a0MiB so far and stays below 95\u00a0% there" in until
    # memcached still filling: unknown whatever the target
    filling = knowledge.Sight(FillState(True, 0.5, 240, 32 * MIB, 64 * MIB), 32 * MIB, 160 * MIB, 32 * MIB)
    assert filling.status(10 * MIB) == knowledge.FILLING
    assert filling.until(knowledge.FILLING).startswith(
        "unknown until memcached is full (memcached still filling"
    )


def test_an_agent_attached_to_an_evicting_memcached_reports_its_own_reach() -> None:
    ev = knowledge.evictions(rows([5_023_000], first=5_000_000))
    assert ev is not None and ev.caps is None  # its ghost is not complete: the reach it reports says it
    assert knowledge.seen_bytes(64 * MIB, 320 * MIB, 96 * MIB, ev.caps, ev.items_now) == 96 * MIB
    assert knowledge.known("ok") and not knowledge.known("unknown") and not knowledge.known("warming_up")


def _basis(history_ys: list[list[float]], seen: list[float | None]) -> Basis:
    xs = [float(MIB * k) for k in range(1, 161)]
    main = Pchip.fit(xs, history_ys[-1])
    b = Basis(
        main,
        "calibrated",
        None,
        CurveInfo(
            computed_at=T0,
            window_end=T0,
            age_seconds=0.0,
            current_bytes=64 * MIB,
            measured_hit_ratio=0.89,
            max_bytes=xs[-1],
            max_hit_ratio=history_ys[-1][-1],
        ),
    )
    b.history = [Pchip.fit(xs, ys) for ys in history_ys]
    b.history_seen = seen
    return b


def test_the_minus_m_to_set_skips_transients_and_stays_inside_its_band() -> None:
    def curve(mib_at_90: float) -> list[float]:
        return [min(0.99, 0.9 * (k / mib_at_90) ** 0.1) for k in range(1, 161)]

    # the first post-fill window said 72 MiB while the agent had seen only 66: a transient
    hist = [curve(72), curve(66), curve(66), curve(66)]
    b = _basis(hist, [66.0 * MIB, 100.0 * MIB, 100.0 * MIB, 100.0 * MIB])
    rec = headline(b, 0.9, 66 * MIB, 64 * MIB, 68 * MIB)
    assert rec.memory_limit_bytes == 66 * MIB and rec.stable
    # counted, the transient would have held the limit at 72 MiB, outside the band 64-68: clamped
    b = _basis(hist, [None] * 4)
    rec = headline(b, 0.9, 66 * MIB, 64 * MIB, 68 * MIB)
    assert rec.memory_limit_bytes == 68 * MIB and not rec.stable
