"""An autoscaler polling every window on a stationary workload sees the recommended memory limit
change at most once over 30 windows.

The windows are a real recorded sequence: `bench/accuracy/bench_accuracy.py --record-windows`
ran memcached 1.6.18 at 32 MiB with the agent on its defaults under a seeded Zipf 0.9 workload
and kept each window as the API weighs it (the worker pipeline's calibrated curve, reads, stream
loss, slab classes, fill, accuracy-record error). Each poll builds the answer the API would give
after that window (hitcurve.sizing.recent_windows.basis_from_windows over the newest 30 windows, then
memory_answer) -- the same functions the sizing routes call, without the database.
"""

import gzip
import json
from datetime import datetime
from pathlib import Path

import recorded

from hitcurve.rules import hysteresis, windows
from hitcurve.schemas.sizing import Subject
from hitcurve.sizing.answers import memory_answer
from hitcurve.sizing.recent_windows import basis_from_windows

FIXTURE = Path(__file__).parent / "data" / "stationary-windows-zipf0.9.json.gz"
POLLS = 30
HISTORY = hysteresis.HISTORY_WINDOWS  # windows an answer reads (server_facts)


def _load() -> tuple[float, list[dict]]:
    doc = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    return float(doc["target_hit_ratio"]), doc["windows"]


def _polls(target: float, recs: list[dict]) -> list[tuple[int | None, int | None, str]]:
    """(raw -m, recommended -m, status) the API answers after each window."""
    import uuid

    subject = Subject(type="server", id=uuid.uuid4())
    out = []
    for b in recorded.bases(recs):
        ans = memory_answer(subject, b, target)
        out.append((ans.memory_limit_bytes, ans.recommended_memory_limit_bytes, ans.status))
    return out


def _changes(values: list[int | None]) -> int:
    return sum(1 for a, b in zip(values, values[1:], strict=False) if a != b)


def test_the_recording_is_a_stationary_full_server_with_a_moving_raw_answer() -> None:
    target, recs = _load()
    assert len(recs) >= POLLS + 10
    polls = _polls(target, recs)[-POLLS:]
    assert all(status == "ok" for _, _, status in polls)
    raw = [r for r, _, _ in polls]
    # The raw answer (this window's -m) does move between windows: a limit that followed it
    # would flap. This is what makes the next test fail without the hysteresis.
    assert _changes(raw) >= 2, raw


def test_recommended_limit_changes_at_most_once_over_30_stationary_windows() -> None:
    target, recs = _load()
    polls = _polls(target, recs)[-POLLS:]
    rec = [r for _, r, _ in polls]
    assert None not in rec
    assert _changes(rec) <= 1, rec
    # and it stays inside the hysteresis band around the raw answers it summarises
    raw = [r for r, _, _ in polls if r is not None]
    lo, hi = min(raw), max(raw)
    slack = max(hysteresis.BAND_FRACTION * hi, hysteresis.BAND_MIN_BYTES)
    assert all(lo - slack <= r <= hi + slack for r in rec if r is not None), (rec, raw)


# ---- the anchored replay on synthetic sequences (hysteresis.recommend_periodic) ----------------

MIB = 1 << 20


def _recs(raws: list[float | None], length_s: float = 60.0, t0: float = 1_795_000_000.0) -> list[int | None]:
    """The recommendation an autoscaler sees after each window (the API reads the newest
    HISTORY_WINDOWS windows)."""
    ends = [t0 + length_s * (i + 1) for i in range(len(raws))]
    out = []
    for i in range(len(raws)):
        lo = max(0, i + 1 - hysteresis.HISTORY_WINDOWS)
        out.append(hysteresis.recommend_periodic(ends[lo : i + 1], raws[lo : i + 1]).memory_limit_bytes)
    return out


def test_noise_inside_the_band_moves_it_at_most_once_in_any_30_polls() -> None:
    import random

    for seed in range(20):
        rnd = random.Random(seed)
        raws: list[float | None] = [64 * MIB * (1 + rnd.uniform(-0.06, 0.06)) for _ in range(300)]
        recs = _recs(raws, length_s=rnd.choice([10.0, 60.0, 61.3, 300.0]))
        for i in range(len(recs) - POLLS + 1):
            assert _changes(recs[i : i + POLLS]) <= 1, (seed, i)


def test_a_real_shift_is_followed_within_a_few_windows() -> None:
    raws: list[float | None] = [64 * MIB] * 100 + [96 * MIB] * 10
    recs = _recs(raws)
    assert recs[99] == 64 * MIB
    assert recs[99 + hysteresis.HOLD_WINDOWS] == 96 * MIB


def test_window_ends_and_answers_must_pair() -> None:
    import pytest

    with pytest.raises(ValueError):
        hysteresis.recommend_periodic([1.0, 2.0], [64 * MIB])
    assert hysteresis.recommend_periodic([], []).memory_limit_bytes is None


# ---- the band above today's memory widens with the loss the ghost saw ---------------------------


def test_a_lossy_window_left_out_of_the_answer_still_widens_the_band_above_today() -> None:
    from datetime import UTC, timedelta

    t0 = datetime(2026, 11, 25, 5, 0, tzinfo=UTC)
    xs = [8 * MIB, 16 * MIB, 32 * MIB, 64 * MIB, 128 * MIB, 160 * MIB]
    ys = [0.5, 0.58, 0.66, 0.74, 0.82, 0.83]

    def win(i: int, loss: float) -> windows.WindowCurve:
        return windows.WindowCurve(
            t0 + timedelta(minutes=i), xs, ys, 60_000, loss, loss > 0.05, 32 * MIB, 0.66
        )

    clean = [win(i, 0.0) for i in range(10)]
    lossy = [win(i, 0.3 if i == 2 else 0.0) for i in range(10)]
    b_clean = basis_from_windows(clean)
    b_lossy = basis_from_windows(lossy)
    assert b_clean is not None and b_lossy is not None
    assert b_lossy.windows_used == b_clean.windows_used  # the lossy window is not among the newest 5
    assert b_lossy.conf_high is not None and b_clean.conf_high is not None
    assert b_lossy.conf_low is not None and b_clean.conf_low is not None
    # at today's memory the band is the same and passes through the measured point
    assert b_lossy.conf_high(32 * MIB) == b_clean.conf_high(32 * MIB)
    assert b_lossy.conf_low(32 * MIB) <= 0.66 <= b_lossy.conf_high(32 * MIB)
    # above it the high side is wider by the loss the ghost saw
    assert b_lossy.conf_high(64 * MIB) > b_clean.conf_high(64 * MIB) + 0.005
    assert b_lossy.conf_low(64 * MIB) == b_clean.conf_low(64 * MIB)


def test_windows_before_the_base_period_do_not_change_the_recommendation() -> None:
    import random

    rnd = random.Random(7)
    raws: list[float | None] = [64 * MIB * (1 + rnd.uniform(-0.2, 0.2)) for _ in range(128)]
    ends = [1_795_000_000.0 + 60.0 * (i + 1) for i in range(128)]
    first = hysteresis.needed_from(ends)
    assert 0 < first < 128 - hysteresis.PERIOD_WINDOWS
    cut = hysteresis.recommend_periodic(ends[first:], raws[first:])
    full = hysteresis.recommend_periodic(ends, raws)
    assert (cut.memory_limit_bytes, cut.stable, cut.changes) == (
        full.memory_limit_bytes,
        full.stable,
        full.changes,
    )
