"""The cost answer of a subject from its sizing Basis and its prices (pure): the cost-optimal
size (cost.model) on the answer's curve, the band carried through (the optimum of the band's
pessimistic and optimistic sides beside the curve's: a range of optimal sizes), the saving
against today's memory, and what it does not know (hitcurve.rules.knowledge): no optimum while
memcached fills, nor while a size past what the agent has seen could still cost less. The API's
/sizing/.../cost, the dashboard's cost view, the weekly e-mail's row and /metrics read this."""

from hitcurve.cost import catalogue as nodes
from hitcurve.cost import model
from hitcurve.cost import prefixes as pp
from hitcurve.cost import serverless as sl
from hitcurve.rules import band as band_model
from hitcurve.rules import knowledge
from hitcurve.rules.curves import Pchip
from hitcurve.rules.percent import hit_rate as pct
from hitcurve.schemas.cost import (
    CostAnswer,
    CostPoint,
    CostPrices,
    NodeOptionOut,
    PrefixCostOut,
    ServerlessOut,
)
from hitcurve.schemas.sizing import Subject
from hitcurve.sizing.answers import memory_answer
from hitcurve.sizing.basis import Basis
from hitcurve.sizing.limits import levelled_off, limit_for
from hitcurve.sizing.prose import ghost_words, hb, set_m, stats_only_first, tail
from hitcurve.sizing.sight import sight_of

CHART_POINTS = 64


def money(v: float) -> str:
    """A monthly amount in the cluster's currency (the price's own unit)."""
    return f"{v:,.2f}"


def point(c: model.Cost) -> CostPoint:
    return CostPoint(
        memory_bytes=c.memory_bytes, hit_ratio=c.hit_ratio, memory=c.memory, misses=c.misses, total=c.total
    )


def _ceil(v: float) -> int:
    return int(-(-v // 1))


def search_range(b: Basis) -> tuple[float, float]:
    """The sizes an optimum may be answered for: from the curve's first measured point to its
    end, or as far as the agent has seen it."""
    m = b.main
    lo = next((x for x in m.x if x > 0), m.x_max)
    sight = sight_of(b)
    hi = m.x_max if sight.whole else min(m.x_max, sight.seen_bytes)
    return lo, max(lo, hi)


def _side_optimum(
    curve: Pchip | None, lo: float, hi: float, p: model.Prices, terms: pp.Terms | None
) -> model.Cost | None:
    return None if curve is None else model.optimum(curve, lo, hi, p, curve.x, _misses(curve, p, terms))


def _misses(curve: Pchip, p: model.Prices, terms: pp.Terms | None) -> model.Misses | None:
    """The misses' cost with the priced prefixes at their prices (cost.prefixes); None: one price."""
    if terms is None or not terms.terms:
        return None
    return pp.prefix_misses(curve, terms.terms, p.miss_cost_per_million, p.reads_per_second)


def _prefix_rows(terms: pp.Terms | None, at: float) -> list[PrefixCostOut]:
    """Per priced prefix (its servers summed): its share of the reads, its hit ratio in the pool of
    `at` bytes and what its misses cost a month there."""
    if terms is None:
        return []
    rows: dict[str, list[pp.PrefixTerm]] = {}
    for t in terms.terms:
        rows.setdefault(t.prefix, []).append(t)
    out = []
    for name, ts in sorted(rows.items()):
        share = sum(t.read_share for t in ts)
        hit = sum(t.read_share * t.hit_at(at) for t in ts) / share if share else 0.0
        out.append(
            PrefixCostOut(
                prefix=name, miss_cost_per_million=ts[0].per_million, read_share=share, hit_ratio=hit,
            )
        )  # fmt: skip
    return out


def _prefix_words(terms: pp.Terms | None, p: model.Prices) -> str:
    if terms is None or (not terms.terms and not terms.without_curve):
        return ""
    priced = sorted({(t.prefix, t.per_million) for t in terms.terms})
    words = ", ".join(f"of {name} {money(c)}" for name, c in priced)
    txt = f"; a million misses cost {words}, of the rest {money(p.miss_cost_per_million)}" if priced else ""
    if terms.without_curve:
        txt += (
            f"; priced at the cluster's miss cost for want of a curve in the agents' windows: "
            f"{', '.join(terms.without_curve)}"
        )
    return txt


def _no_prices(p: CostPrices) -> str:
    if p.miss_cost_source is None:
        why = "a cluster: assign the server to one, and it is priced at that cluster's prices"
    elif p.reads_per_second is None:
        why = "reads measured: the read rate comes from the agents' windows"
    elif p.miss_cost_source == "measured" and p.cpu_price_per_hour is None:
        why = "a CPU-hour price to price the agents' measured refill time at (the cluster's settings)"
    elif p.miss_cost_source == "measured":
        why = "a refill the agents have timed (the miss-to-set time of a SET after a miss)"
    else:
        why = (
            "a miss cost: enter what a million misses cost in the cluster's settings, or a CPU-hour "
            "price to price the agents' measured refill time"
        )
    return f"the cost-optimal size needs {why}"


def node_fields(cat: nodes.Catalogue, memory_bytes: float) -> dict[str, object]:
    """The catalogue's answers for a size: N x each type, the cheapest priced, Memorystore's count."""
    opts = nodes.options(cat, memory_bytes)
    best = nodes.cheapest(opts)
    return dict(
        node_options=[NodeOptionOut(**o.__dict__) for o in opts],
        cheapest_node=None if best is None else NodeOptionOut(**best.__dict__),
        memorystore_nodes=nodes.shape_nodes(cat, memory_bytes),
    )


def serverless_out(
    subject: Subject, b: Basis, target: float, reads_per_second: float | None, p: sl.ServerlessPrices
) -> ServerlessOut:
    """A serverless cache for `target`: the maximum data storage from the memory answer's one -m to
    set (the answer every surface gives for the target), and the bill at it."""
    a = memory_answer(subject, b, target)
    head = dict(name=p.name, region=p.region, target_hit_ratio=target, status=a.status)
    per = dict(per_gb_hour=p.per_gb_hour, per_million_ecpu=p.per_million_ecpu)
    if a.status != "ok" or a.recommended_memory_limit_bytes is None:
        why = a.unknown_until or a.message
        return ServerlessOut(
            **head, **per, message=f"the maximum data storage to allow for {pct(target)}: {why}"
        )
    need = a.recommended_memory_limit_bytes * (b.nodes or 1)
    bill = sl.bill(need, target, reads_per_second, p)
    words = f"{p.name}: for {pct(target)} allow at most {bill.maximum_gb} GB of data storage"
    if bill.total is not None and bill.ecpu_per_second is not None:
        words += (
            f", about {money(bill.total)} a month full: {money(bill.storage or 0.0)} for "
            f"{bill.metered_gb:g} GB stored and {money(bill.requests or 0.0)} for "
            f"{bill.ecpu_per_second:,.0f} ECPUs a second (one a read and one a refill, {p.region})"
        )
    elif bill.storage is not None:
        words += (
            f", {money(bill.storage)} a month for {bill.metered_gb:g} GB stored (requests: no reads measured)"
        )
    return ServerlessOut(
        **head, **per, data_storage_maximum_gb=bill.maximum_gb, metered_gb=bill.metered_gb,
        storage_per_month=bill.storage, requests_per_month=bill.requests,
        ecpu_per_second=bill.ecpu_per_second, total_per_month=bill.total, message=words,
    )  # fmt: skip


def cost_answer(
    subject: Subject,
    b: Basis,
    prices: CostPrices,
    cat: nodes.Catalogue | None = None,
    target: float | None = None,
    terms: pp.Terms | None = None,
) -> CostAnswer:
    """The cost-optimal size of a subject (statuses in schemas.cost.CostAnswer), with the node
    catalogue's answers for it (default: the shipped node_types.json), for a target hit ratio
    (the cluster's) a serverless cache's maximum and bill, and with `terms` misses priced per
    prefix (cost.prefixes)."""
    cat = cat or nodes.load()
    base = dict(
        subject=subject, basis=b.basis, policy=b.policy, prices=prices, nodes=b.nodes,
        catalogue_as_of=cat.as_of, catalogue_sources=sorted(set(cat.sources.values())),
        serverless=None
        if target is None or cat.serverless is None
        else serverless_out(subject, b, target, prices.reads_per_second, cat.serverless),
    )  # fmt: skip
    info = b.fresh_info()
    if prices.miss_cost_per_million is None or prices.reads_per_second is None:
        return CostAnswer(**base, status="no_prices", curve=info, message=_no_prices(prices))
    p = model.Prices(prices.memory_per_gib_month, prices.miss_cost_per_million, prices.reads_per_second)
    sight = sight_of(b)
    if sight.filling:
        until = sight.until(knowledge.FILLING)
        return CostAnswer(
            **base, status="warming_up", curve=info, unknown_until=until,
            message=stats_only_first(b, f"the cost-optimal size is {until}; {tail(b)}"),
        )  # fmt: skip
    lo, hi = search_range(b)
    misses = _misses(b.main, p, terms)
    today_x = float(b.info.current_bytes or 0)
    today = model.cost_at(b.main, today_x, p, misses) if today_x > 0 else None
    opt = model.optimum(b.main, lo, hi, p, b.main.x, misses)
    points = [point(c) for c in model.sample(b.main, lo, hi, p, CHART_POINTS, misses)]
    common = dict(
        **base, curve=info, points=points, searched_bytes_min=lo, searched_bytes_max=hi,
        today=point(today) if today else None, prefix_costs=_prefix_rows(terms, opt.memory_bytes),
        prefixes_without_curve=terms.without_curve if terms else [],
    )  # fmt: skip
    per_prefix = _prefix_words(terms, p)
    if not sight.whole and model.cheaper_past(p, hi, opt.total):
        until = sight.until(knowledge.NOT_SEEN)
        msg = (
            f"the cost-optimal size is {until}: a larger cache could still cost less than the "
            f"{money(opt.total)} a month the seen part's best size ({hb(opt.memory_bytes)}) costs; {tail(b)}"
        )
        return CostAnswer(**common, status="unknown", unknown_until=until, message=stats_only_first(b, msg))
    # within 1 % of the end (less than a step of the optimum's grid, cost.model.GRID_POINTS) is the
    # end: "at 159 MiB or more than 160" says no more than "more than 160"
    at_end = opt.memory_bytes >= hi * (1 - 1e-2)
    past = model.least_past(b.main, hi, p, misses)
    if at_end and not levelled_off(b) and model.better(past, opt.total):
        msg = (
            f"the total cost still falls at the curve's end ({hb(hi)}, {money(opt.total)} a month): the "
            f"cost-optimal size is more than that{per_prefix}; {tail(b)}"
        )
        return CostAnswer(
            **common, status="above_curve", optimal_memory_bytes_at_least=_ceil(hi), optimal=point(opt),
            message=stats_only_first(b, msg),
        )  # fmt: skip
    if not levelled_off(b) and model.better(past, opt.total):
        # a least inside the curve, but the curve still rises at its end (a scan's loop beginning to
        # fit, say) so that a size past the end could cost less (cost.model.least_past)
        msg = (
            f"the cost-optimal size is {hb(opt.memory_bytes)} ({money(opt.total)} a month, the least "
            f"within the curve's reach) or more than {hb(hi)}: the curve still rises at its end, and a "
            f"larger cache could cost as little as {money(past)} a month; {ghost_words()} sees further"
            f"{per_prefix}; {tail(b)}"
        )
        return CostAnswer(
            **common, status="past_curve", optimal=point(opt),
            optimal_within_curve_bytes=_ceil(opt.memory_bytes), message=stats_only_first(b, msg),
        )  # fmt: skip
    band: dict[str, object] = {}
    rng = ""
    sides = [_side_optimum(c, lo, hi, p, terms) for c in (b.conf_low, b.conf_high)]
    if all(s is not None for s in sides):
        xs = [opt.memory_bytes] + [s.memory_bytes for s in sides if s is not None]
        # an end at the edge of the seen part may lie past it
        open_end = not sight.whole and max(xs) >= hi * (1 - 1e-9)
        x_min, x_max = min(xs), (None if open_end else max(xs))
        band = dict(
            optimal_memory_bytes_min=_ceil(x_min),
            optimal_memory_bytes_max=None if x_max is None else _ceil(x_max),
            optimal_memory_limit_bytes_min=limit_for(b, x_min),
            optimal_memory_limit_bytes_max=None if x_max is None else limit_for(b, x_max),
            confidence=band_model.CONFIDENCE,
        )
        rng = f" (band {hb(x_min)} – {hb(x_max) if x_max is not None else f'more than {hb(hi)}'})"
    limit = limit_for(b, opt.memory_bytes)
    saving = today.total - opt.total if today else None
    now_txt = (
        f"; today {money(today.total)} at {hb(today.memory_bytes)}, "
        + (f"a saving of {money(saving)} a month" if saving and saving > 0 else "already the least")
        if today and saving is not None
        else ""
    )
    msg = (
        f"the least total cost is {money(opt.total)} a month at {hb(opt.memory_bytes)}: {set_m(b, limit)}"
        f"{rng}; {money(opt.memory)} memory and {money(opt.misses)} misses at a hit rate of "
        f"{pct(opt.hit_ratio)}{now_txt}{per_prefix}; {tail(b)}"
    )
    return CostAnswer(
        **common,
        status="ok",
        optimal_memory_bytes=_ceil(opt.memory_bytes),
        optimal_memory_limit_bytes=limit,
        optimal=point(opt),
        saving_per_month=saving,
        message=stats_only_first(b, msg),
        **band,
        **node_fields(cat, opt.memory_bytes),
    )


def cost_row(a: CostAnswer) -> str:
    """The cost answer in the one line the weekly e-mail shows (HTML and text): the optimum, its
    -m, its total and the saving while known; else why not."""
    if a.status != "ok" or a.optimal is None or a.optimal_memory_bytes is None:
        return a.unknown_until or a.message
    each = f" on each of {a.nodes} nodes" if a.nodes and a.nodes > 1 else ""
    m = f" (-m {a.optimal_memory_limit_bytes // (1 << 20)}{each})" if a.optimal_memory_limit_bytes else ""
    saving = (
        f", {money(a.saving_per_month)} a month less than today"
        if a.saving_per_month is not None and a.saving_per_month > 0
        else ", today's memory is already the cheapest"
    )
    return f"{hb(a.optimal_memory_bytes)}{m}: {money(a.optimal.total)} a month in all{saving}"
