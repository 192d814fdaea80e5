"""A target above today's memory reads "unreachable" only where the curve is measured.

The agent's ghost fills only with evictions: after memcached is full it takes (K - 1) x N of them
before the curve is measured out to K x N, and until then the points past the ghost's reach are
held flat. Before the agent reported that reach (`curve.ghost_reach_items`), such a flat tail read
as a plateau and the 95 % answer was "unreachable" in 12-17 of 30 polls of the accuracy
benchmark's Zipf 1.1 run. The answers here come from hitcurve.sizing's own functions (the ones the
sizing routes call) on windows built as the API weighs them; the worker's side (the reach on the
server's memory axis from the classes) is checked with merge.ghost_reach_bytes.
"""

import uuid
from datetime import UTC, datetime, timedelta

import pytest

from hitcurve.rules import windows
from hitcurve.schemas.sizing import Subject
from hitcurve.sizing.answers import memory_answer, ratio_answer
from hitcurve.sizing.basis import Basis
from hitcurve.sizing.recent_windows import basis_from_windows

MIB = 1 << 20
NOW = 32 * MIB  # today's memory
# A curve measured out to 5x today's memory that has levelled off at 0.80 from 3x on.
SIZES = [NOW * f / 4 for f in range(1, 21)]
RATIOS = [min(0.5 + 0.1 * f / 4, 0.8) if f <= 12 else 0.8 for f in range(1, 21)]


def _basis(reach: float | None) -> Basis:
    end = datetime.now(UTC) - timedelta(seconds=5)
    wins = [
        windows.WindowCurve(
            end - timedelta(seconds=60 * (2 - i)), SIZES, RATIOS, 50_000, 0.0, False, NOW, 0.7, reach
        )
        for i in range(3)
    ]
    b = basis_from_windows(wins)
    assert b is not None
    return b


def _answer(reach: float | None, target: float = 0.9):
    return memory_answer(Subject(type="server", id=uuid.uuid4()), _basis(reach), target)


def test_a_target_past_what_the_ghost_has_seen_is_unknown_not_a_bound() -> None:
    # the curve is held flat past the reach: nothing says the target needs more, or is out of reach
    a = _answer(reach=2 * NOW)
    assert a.status == "unknown"
    assert (
        a.memory_bytes is None
        and a.memory_bytes_at_least is None
        and a.recommended_memory_limit_bytes is None
    )
    assert a.seen_up_to_bytes == 2 * NOW
    assert a.unknown_until is not None and "seen the curve up to 64\u00a0MiB so far" in a.unknown_until


def test_a_measured_plateau_is_unreachable() -> None:
    # the ghost sees out to the curve's end: the plateau is measured
    a = _answer(reach=5 * NOW)
    assert a.status == "unreachable" and a.memory_bytes_at_least is None
    # an agent that does not report its reach: as before (the flat tail is taken as measured)
    assert _answer(reach=None).status == "unreachable"


def test_reachable_targets_are_not_affected_by_the_reach() -> None:
    # 55 % lies at half today's memory, well inside what the ghost has seen
    a = _answer(reach=1.2 * NOW, target=0.55)
    assert a.status == "ok" and a.memory_bytes is not None and a.memory_bytes < NOW


def test_the_worker_puts_the_reach_on_the_memory_axis() -> None:
    import numpy as np

    from hitcurve_worker.merge import ClassCurve, ghost_reach_bytes

    def cls(cid: int, items: int, reach: float | None, requests: float = 1000.0) -> ClassCurve:
        sizes = np.linspace(items * 5 / 100, items * 5, 100)
        return ClassCurve(cid, 96, 10, items, requests, sizes, np.linspace(0.1, 0.8, 100), reach)

    # the least-filled class with reads bounds the server's reach
    assert ghost_reach_bytes([cls(1, 1000, 3000.0), cls(2, 500, 1000.0)], NOW) == pytest.approx(2 * NOW)
    # a class without reads does not count; an older agent (no reach) says nothing
    assert ghost_reach_bytes([cls(1, 1000, 5000.0), cls(2, 500, 500.0, 0.0)], NOW) == pytest.approx(5 * NOW)
    assert ghost_reach_bytes([cls(1, 1000, None)], NOW) is None


def test_the_worker_keeps_the_coarsest_ghost_of_the_classes_with_reads() -> None:
    import numpy as np

    from hitcurve_worker.merge import ClassCurve, class_from_protocol, ghost_filters

    def cls(cid: int, filters: int | None, requests: float = 1000.0) -> ClassCurve:
        sizes = np.linspace(50, 5000, 100)
        return ClassCurve(cid, 96, 10, 1000, requests, sizes, np.linspace(0.1, 0.8, 100), 5000.0, filters)

    assert ghost_filters([cls(1, 33), cls(2, 17)]) == 17  # the widest span bounds the band
    assert ghost_filters([cls(1, 33), cls(2, 9, 0.0)]) == 33  # a class without reads does not count
    assert ghost_filters([cls(1, 33), cls(2, None)]) is None  # an older agent says nothing
    doc = {
        "id": 5,
        "chunk_size": 96,
        "pages": 1,
        "requests": 10,
        "curve": {"unit": "items", "current_items": 10, "points": [[10, 0.5]], "ghost_filters": 33},
    }
    assert class_from_protocol(doc).ghost_filters == 33


def _ratio(reach: float | None, memory: float):
    return ratio_answer(Subject(type="server", id=uuid.uuid4()), _basis(reach), memory)


def test_hit_rate_past_the_reach_is_a_lower_bound_with_the_remedy() -> None:
    # the ghost sees out to 2x today: 3x is on the held-flat part of the curve
    a = _ratio(reach=2 * NOW, memory=3 * NOW)
    assert a.status == "above_curve" and a.hit_ratio_at_least == a.hit_ratio
    assert a.band.hit_rate_max is None
    assert "at least" in a.message and "--ghost-factor" in a.message
    # inside the reach, or a ghost that sees out to the curve's end: an ordinary answer
    assert _ratio(reach=2 * NOW, memory=1.5 * NOW).status == "ok"
    for reach in (5 * NOW, None):
        ok = _ratio(reach=reach, memory=3 * NOW)
        assert ok.status == "ok" and ok.hit_ratio_at_least is None
    # past the curve's last point: a bound whatever the reach
    assert _ratio(reach=None, memory=6 * NOW).status == "above_curve"
