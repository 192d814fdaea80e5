"""The sizing answers: memory for a target hit ratio, hit ratio at a memory size, nodes for a
cluster target, from a Basis (pure), and the cached target answer of a subject. The API's /sizing
routes, the cluster overview, /metrics and the weekly report all answer through here, so they
cannot disagree."""

import math
import uuid

from sqlalchemy.orm import Session

from hitcurve.models import Cluster
from hitcurve.rules import band as band_model
from hitcurve.rules import hysteresis, knowledge, memlimit, shortage
from hitcurve.rules.percent import hit_rate as pct
from hitcurve.rules.percent import percent
from hitcurve.rules.status import Thresholds
from hitcurve.rules.words import counted
from hitcurve.schemas.sizing import Band, SizingAnswer, Subject, SubjectKind
from hitcurve.sizing.basis import Basis, ClusterFacts
from hitcurve.sizing.cache import best_basis
from hitcurve.sizing.headline import headline, past_held
from hitcurve.sizing.limits import held_bytes, levelled_off, limit_for, warming
from hitcurve.sizing.prose import (
    band_words,
    describe,
    ghost_words,
    hb,
    more_than,
    raw_words,
    set_m,
    stats_only_first,
    tail,
)
from hitcurve.sizing.sight import sight_of


def _ceil(v: float | None) -> int | None:
    return None if v is None else int(math.ceil(v - 1e-9))


def _facts(b: Basis) -> dict[str, object]:
    """The fields every answer carries about memcached's memory and fill."""
    f = b.fill
    sight = sight_of(b)
    return dict(
        seen_up_to_bytes=None if sight.whole else _ceil(sight.seen_bytes),
        seen_all_in_seconds=sight.seen_all_in_seconds(),
        current_memory_limit_bytes=b.limit_bytes,
        used_bytes=b.used_bytes,
        fill_ratio=f.fill_ratio if f else None,
        full_in_seconds=f.full_in_seconds if f and f.warming_up else None,
        windows=b.windows_used,
        nodes=b.nodes,
        data_basis=b.data_basis,
        ttl_aware=b.ttl_aware,
        flash_note=b.flash_note,
    )


def _band(b: Basis, **fields: object) -> Band:
    """The answer's band: its confidence and what its drift rests on, plus `fields`."""
    d = b.drift
    return Band(
        confidence=band_model.CONFIDENCE if b.conf_low is not None else None,
        basis=d.basis if d else None,
        graded_predictions=d.graded_predictions if d else None,
        drift_pp=round(d.pp, 3) if d else None,
        **fields,
    )


def _clamp(lo: float | None, v: float, hi: float | None) -> tuple[float | None, float | None]:
    """Band ends on either side of the answer's value (separately fitted interpolants may cross it
    by rounding)."""
    return (None if lo is None else min(lo, v)), (None if hi is None else max(hi, v))


def _beyond_curve(b: Basis, target: float) -> tuple[str, int | None, str]:
    """The answer when the curve, seen whole (hitcurve.rules.knowledge: only then is this asked),
    never reaches the target: (status, the bound in bytes or None, the message). "unreachable"
    when the curve has levelled off, else a bound at its end."""
    if levelled_off(b):
        msg = (
            f"no memory size reaches a hit rate of {pct(target)}: the curve levels off at "
            f"{pct(b.main.y_max)} (from {hb(b.main.x_max)} on)"
        )
        if b.ttl_aware:  # what caps it is the TTLs, not memory
            msg += "; it is TTL-aware: reads of items past their TTL miss at any size"
        return "unreachable", None, msg
    return (
        "above_curve",
        _ceil(b.main.x_max),
        f"a hit rate of {pct(target)} needs {more_than(b, b.main.x_max)} (the curve reaches "
        f"{pct(b.main.y_max)} there); to see further, run the agent with {ghost_words()}",
    )


def _on_curve_words(b: Basis, target: float, mem: float, band: Band, to_set: int, note: str | None) -> str:
    """The message of an answer on the curve: the memory, the one -m to set, the band's memory
    range (open-ended when the pessimistic side never reaches the target), this window's own -m
    when it differs, and how the curve was made."""
    range_txt = (
        f" ({percent(band_model.CONFIDENCE, 0)} band {hb(band.memory_bytes_min)} – "
        + (
            hb(band.memory_bytes_max)
            if band.memory_bytes_max is not None
            else f"more than {hb(b.main.x_max)}"
        )
        + ")"
        if band.memory_bytes_min is not None
        else ""
    )
    raw = f"; {note}" if note else ""
    return f"a hit rate of {pct(target)} needs {hb(mem)}: {set_m(b, to_set)}{range_txt}{raw}, {tail(b)}"


def _memory_band(b: Basis, target: float, mem: float | None) -> Band:
    """The band of a memory answer: the hit rates at the answer's memory (at the curve's end when
    there is none) and, on the curve, the memory range for the target, also as -m."""
    if b.conf_low is None or b.conf_high is None:
        return _band(b)
    x = mem if mem is not None else b.main.x_max
    hr_min, hr_max = _clamp(b.conf_low(x), b.main(x), b.conf_high(x))
    m_min = m_max = None
    if mem is not None:
        lo_m = b.conf_high.inverse(target)
        hi_m = b.conf_low.inverse(target)
        m_min, m_max = _clamp(lo_m, mem, hi_m)
        if lo_m is None:  # cannot happen: the optimistic side reaches what the curve reaches
            m_min = mem
    opt = b.conf_high.inverse(target) if mem is None else m_min  # past the curve: the optimistic -m
    return _band(
        b,
        memory_bytes_min=_ceil(m_min),
        memory_bytes_max=_ceil(m_max),
        memory_limit_bytes_min=limit_for(b, opt) if opt is not None else None,
        memory_limit_bytes_max=limit_for(b, m_max) if m_max is not None else None,
        hit_rate_min=hr_min,
        hit_rate_max=hr_max,
    )


def _outside_limit(b: Basis, mem: float | None) -> int | None:
    """What memcached allocates outside -m at the answer's memory (its hash table for the items
    that memory holds); None without today's items."""
    if mem is None or not b.items_now or not b.info.current_bytes:
        return None
    return memlimit.hash_table_bytes(b.items_now * mem / b.info.current_bytes)


def _against_today(
    b: Basis, status: str, to_set: int | None, band: Band, settled: bool
) -> shortage.Memory | None:
    """Today's -m against a known memory answer (hitcurve.rules.shortage): the band's -m range (past
    the curve, its low end is where the band's optimistic side reaches the target, None: nowhere);
    `settled`: the answer has held (its -m to set's hysteresis stable; past the curve, the last
    windows past it too: sizing.headline.past_held)."""
    return shortage.judge(
        status,
        b.limit_bytes,
        b.nodes,
        to_set,
        band.memory_limit_bytes_min,
        band.memory_limit_bytes_max,
        Thresholds.from_env().shortfall_margin,
        settled,
    )


def unknown_answer(
    subject: Subject, b: Basis, sight: knowledge.Sight, status: str, target: float
) -> SizingAnswer:
    """A memory answer not known yet (hitcurve.rules.knowledge): what it waits for, with the fill
    or how far the agent has seen and an ETA; no memory figure, -m or bound."""
    until = sight.until(status, target if status == knowledge.NOT_SEEN else None)
    return SizingAnswer(
        subject=subject,
        question="memory_for_hit_ratio",
        status=status,
        basis=b.basis,
        policy=b.policy,
        target_hit_ratio=target,
        band=_band(b),
        curve=b.fresh_info(),
        message=stats_only_first(b, f"a hit rate of {pct(target)} is {until}; {tail(b)}"),
        unknown_until=until,
        **_facts(b),
    )


def memory_answer(subject: Subject, b: Basis, target: float) -> SizingAnswer:
    """Memory for a target hit ratio: unknown until memcached is full and the agent has seen out
    to the target (no number then); on the curve, the memory, this window's -m and the one -m to
    set (sizing.headline); past a curve seen whole, a bound or "unreachable"; the band either way."""
    mem = b.main.inverse(target)
    sight = sight_of(b)
    unknown = sight.status(mem)
    if unknown is not None:
        return unknown_answer(subject, b, sight, unknown, target)
    limit: int | None = None
    note: str | None = None
    band = _memory_band(b, target, mem)
    if mem is None:
        status, at_least, msg = _beyond_curve(b, target)
        # no -m to hold; what holds is the answer being past the curve, over as many windows
        rec = hysteresis.Recommendation(None, past_held(b, target), 0, 0)
    else:
        status, at_least = "ok", None
        limit = limit_for(b, mem)
        rec = headline(b, target, limit, band.memory_bytes_min, band.memory_bytes_max)
        assert rec.memory_limit_bytes is not None
        note = None if rec.memory_limit_bytes == limit else raw_words(limit, b.nodes)
        msg = _on_curve_words(b, target, mem, band, rec.memory_limit_bytes, note)
    if status == "ok" and b.conf_low is not None and b.conf_high is not None:
        msg = msg + band_words(b)
    against = _against_today(b, status, rec.memory_limit_bytes, band, rec.stable)
    if against is not None and against.state != shortage.ENOUGH:
        msg = f"{msg}; {against.words()}"
    msg = stats_only_first(b, msg)
    return SizingAnswer(
        subject=subject,
        question="memory_for_hit_ratio",
        status=status,
        basis=b.basis,
        policy=b.policy,
        target_hit_ratio=target,
        memory_bytes=_ceil(mem),
        memory_limit_bytes=limit,
        memory_limit_note=note,
        memory_bytes_at_least=at_least,
        memory_limit_bytes_at_least=limit_for(b, at_least) if at_least is not None else None,
        recommended_memory_limit_bytes=rec.memory_limit_bytes,
        stable=rec.stable,
        outside_memory_limit_bytes=_outside_limit(b, mem),
        memory_state=against.state if against is not None else None,
        memory_state_words=against.words() if against is not None else None,
        band=band,
        curve=b.fresh_info(),
        message=msg,
        **_facts(b),
    )


def ratio_answer(subject: Subject, b: Basis, memory: float) -> SizingAnswer:
    asked = memory
    # below one page per slab class memcached holds that page each whatever -m (held_bytes): at
    # -m 8 and 16 with 18 classes it held 18 pages, and the same hit rate at both
    memory = held_bytes(b, asked)
    held = (
        f" (memcached holds {hb(memory)} there: one page for each of its "
        f"{memlimit.classes_holding(b.classes)} slab classes)"
        if memory > asked
        else ""
    )
    hr = b.main(memory)
    # Past the ghost's reach the curve is held flat (nothing measured there yet), and past its last
    # point it is flat by construction: either way the hit rate there is only a lower bound.
    sight = sight_of(b)
    reach = None if sight.whole else sight.seen_bytes
    past_reach = reach is not None and memory > reach * (1 + 1e-9)
    bound = memory > b.main.x_max or past_reach
    band = _band(b)
    if b.conf_low is not None and b.conf_high is not None:
        lo, hi = _clamp(b.conf_low(memory), hr, b.conf_high(memory))
        band = _band(b, hit_rate_min=lo, hit_rate_max=None if bound else hi)
    at_least = None
    if memory > b.main.x_max:
        status, at_least = "above_curve", hr
        msg = (
            f"{hb(memory)} is past the curve's last point ({hb(b.main.x_max)}); "
            f"the hit rate there is at least {pct(hr)}; "
            + (
                # memcached has evicted nothing yet: the curve ends near today's fill, not at the ghost
                "it sees further once memcached is full"
                if warming(b)
                else f"to see further, run the agent with {ghost_words()}"
            )
            + f"; {tail(b)}"
        )
    elif reach is not None and past_reach:
        status, at_least = "above_curve", hr
        msg = (
            f"{hb(memory)} is past what the agent's ghost sees so far ({hb(reach)}; the curve is held "
            f"flat from there): the hit rate there is at least {pct(hr)}; it sees out to "
            f"{hb(b.main.x_max)} once memcached has evicted more, or further with {ghost_words()}; "
            f"{tail(b)}"
        )
    else:
        status = "ok"
        rng = (
            f" ({percent(band_model.CONFIDENCE, 0)} band {pct(band.hit_rate_min)}–{pct(band.hit_rate_max)})"
            if band.hit_rate_min is not None and band.hit_rate_max is not None
            else ""
        )
        msg = f"{hb(asked)}{held} gives a hit rate of {pct(hr)}{rng}, {tail(b)}{band_words(b)}"
    if warming(b):
        assert b.fill is not None
        msg, status = f"{b.fill.describe()}: the answer is provisional until then; {msg}", "warming_up"
    msg = stats_only_first(b, msg)
    return SizingAnswer(
        subject=subject,
        question="hit_ratio_at_memory",
        status=status,
        basis=b.basis,
        policy=b.policy,
        memory_bytes=_ceil(asked),
        memory_limit_bytes=limit_for(b, asked),
        hit_ratio=hr,
        hit_ratio_at_least=at_least,
        band=band,
        curve=b.fresh_info(),
        message=msg,
        **_facts(b),
    )


def nodes_answer(
    subject: Subject, b: Basis, cc: ClusterFacts, size: int, target: float, policy: str | None
) -> SizingAnswer:
    """Nodes of `size` bytes for a target: the worker's node curve when it was made for this node
    size (it accounts for how keys spread over nodes), else the memory answer over the node size."""
    ans = memory_answer(subject, b, target)
    if not knowledge.known(ans.status):
        # unknown until memcached is full and the agent has seen that far: no node count either
        return ans.model_copy(update=dict(question="nodes_for_hit_ratio", node_size_bytes=size, nodes=None))
    nodes: int | None = None
    if (
        policy is None
        and cc.curve_node_size == size
        and cc.node_counts
        and cc.node_hit_ratios
        and len(cc.node_counts) == len(cc.node_hit_ratios)
    ):
        nodes = next(
            (n for n, h in sorted(zip(cc.node_counts, cc.node_hit_ratios, strict=True)) if h >= target), None
        )
    if nodes is None and ans.memory_bytes is not None:
        nodes = max(1, math.ceil(ans.memory_bytes / size))

    def count(mem: float | None) -> int | None:
        return None if mem is None else max(1, math.ceil(mem / size))

    # the node band: the memory band over the node size, on either side of the node answer
    lo_n, hi_n = count(ans.band.memory_bytes_min), count(ans.band.memory_bytes_max)
    if nodes is not None:
        lo_n = None if lo_n is None else min(lo_n, nodes)
        hi_n = None if hi_n is None else max(hi_n, nodes)
    band = ans.band.model_copy(update=dict(nodes_min=lo_n, nodes_max=hi_n if lo_n is not None else None))
    status: str
    # above the curve: more than memory_bytes_at_least in all, so at least one node more than
    # that many bytes fill
    at_least_n = (
        None
        if nodes is not None or ans.memory_bytes_at_least is None
        else ans.memory_bytes_at_least // size + 1
    )
    if nodes is None:
        msg = ans.message
        status = ans.status if ans.status != "ok" else "unreachable"
    else:
        msg = stats_only_first(
            b, f"a hit rate of {pct(target)} needs {counted(nodes, 'node')} of {hb(size)}, {describe(b)}"
        )
        status = "ok"
    return ans.model_copy(
        update=dict(
            question="nodes_for_hit_ratio",
            nodes=nodes,
            node_size_bytes=size,
            nodes_at_least=at_least_n,
            status=status,
            band=band,
            message=msg,
            # -m per node: the node size in whole MiB
            memory_limit_bytes=memlimit.limit_for_bytes(size) if nodes is not None else None,
            recommended_memory_limit_bytes=None,
            stable=None,
        )
    )


def target_answer(
    db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID, target: float
) -> SizingAnswer | None:
    """The answer of GET /sizing/{servers|clusters}/{id}/memory from the same cached fitted curve
    (cluster overview, metrics); None while the subject has no curve yet."""
    b = best_basis(db, kind, org_id, subject_id)
    return None if b is None else memory_answer(Subject(type=kind, id=subject_id), b, target)


def memory_for_target(db: Session, c: Cluster) -> SizingAnswer | None:
    """The cluster's target answer (None without a curve), so the overview and the sizing API agree."""
    return target_answer(db, "cluster", c.org_id, c.id, c.target_hit_ratio)
