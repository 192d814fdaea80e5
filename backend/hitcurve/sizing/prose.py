"""The words of the sizing answers (pure): how the curve was made and how old it is, bounds and
`-m` in both units, what the band rests on, the stats-only first sentence, and the remedy for a
curve that does not see far enough."""

from hitcurve.rules import band as band_model
from hitcurve.rules import hysteresis, memlimit
from hitcurve.rules.percent import percent
from hitcurve.schemas.sizing import STATS_ONLY_LABEL
from hitcurve.sizing.basis import Basis, now
from hitcurve.sizing.limits import limit_for

# The answer of a stats-only server says so first (what the dashboard shows, too).
STATS_ONLY_NOTE = (
    f"{STATS_ONLY_LABEL} — memcached refused `watch`, so the curve is a Che + Zipf model fitted to its "
    f"counters; band ±{band_model.STATS_ONLY_PER_DOUBLING_PP:g} pp per doubling from today's memory "
    f"(watch-based curves: ±{band_model.PER_DOUBLING_PP:g} pp)"
)


hb = memlimit.human_bytes


def describe(b: Basis) -> str:
    what = f"simulated {b.policy}" if b.basis == "simulated" else b.basis
    if b.data_basis == "stats_only" and b.basis != "simulated":
        what = "stats-only model"
    if b.ttl_aware and b.basis != "simulated":
        what = f"TTL-aware {what}"
    note = f" ({b.note})" if b.note else ""
    return f"{what} curve{note}, {(now() - b.info.window_end).total_seconds():.0f} s old"


# Agent memory per tracked key for each step of --ghost-factor (profiler-agent/README.md).
GHOST_BYTES_PER_KEY_PER_STEP = 19


def stats_only_first(b: Basis, msg: str) -> str:
    """A stats-only answer says so before anything else."""
    if b.data_basis == "stats_only":
        return f"{STATS_ONLY_NOTE}. {msg[:1].upper()}{msg[1:]}"
    if b.data_basis == "mixed":
        return f"some servers' curves are {STATS_ONLY_LABEL} (wider band). {msg[:1].upper()}{msg[1:]}"
    return msg


def more_than(b: Basis, mem: float) -> str:
    """A lower bound in words, in both units: "more than 63.7 MiB (-m above 70)"."""
    each = f" on each of its {b.nodes} nodes" if b.nodes and b.nodes > 1 else ""
    return f"more than {hb(mem)} (-m above {limit_for(b, mem) // memlimit.MIB}{each})"


def set_m(b: Basis, limit: int) -> str:
    each = f" on each of its {b.nodes} nodes" if b.nodes and b.nodes > 1 else ""
    return f"set -m {limit // memlimit.MIB}{each}"


def tail(b: Basis) -> str:
    parts = [describe(b)]
    if b.windows_note:
        parts.append(b.windows_note)
    return "; ".join(parts)


def band_words(b: Basis) -> str:
    """Which basis the band uses, for the message."""
    d = b.drift
    if d is None:
        return ""
    who = "its servers" if b.nodes else "this server"
    if d.basis == "benchmark_prior":
        return (
            f"; the band rests on the benchmark's prediction error ({band_model.PRIOR_DRIFT_PP:g} pp), "
            f"no prediction of {who} graded yet"
        )
    n = d.graded_predictions
    return (
        f"; the band rests on {n} graded prediction{'s' if n != 1 else ''} of {who} "
        f"and the benchmark's error (drift {d.pp:.1f} pp)"
    )


def ghost_words() -> str:
    """The remedy for a curve that does not see far enough, and what it costs, in words."""
    return (
        f"a larger --ghost-factor (about {GHOST_BYTES_PER_KEY_PER_STEP} B of agent memory per tracked "
        "key for each step)"
    )


def raw_words(limit: int, nodes: int | None) -> str:
    """The one line every surface puts beside the -m to set when the newest curve alone says
    another (SizingAnswer.memory_limit_note): what it is and why it differs."""
    each = f" on each of {nodes} nodes" if nodes and nodes > 1 else ""
    return (
        f"this window's curve alone says -m {limit // memlimit.MIB}{each}; the -m to set holds until "
        f"{hysteresis.HOLD_WINDOWS} windows in a row leave its ±{percent(hysteresis.BAND_FRACTION, 0)} band"
    )
