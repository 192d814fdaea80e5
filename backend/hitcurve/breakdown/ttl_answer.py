"""The TTL what-if answer for one prefix of a server's breakdown: "if prefix P's TTL were X, what
hit rate, and how much memory for today's hit rate", from the newest good window with a
breakdown (the model and its approximation: hitcurve.breakdown.ttlwhatif). ttl_answer is pure;
prefix_ttl reads the window it rests on (crud.breakdown)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from hitcurve.breakdown.ttlwhatif import MODEL, what_if
from hitcurve.core.domain import QueryRefused
from hitcurve.crud.breakdown import newest_good_breakdown
from hitcurve.schemas.breakdown import TtlGridPointOut, TtlWhatIfOut

# Below this many sampled reads of the prefix the replay's ratios are noise (a binomial ratio's
# standard error at 200 reads is up to 3.5 pp).
TTLW_MIN_READS = 200
GAPS = (
    "touch/gat TTL changes are not in the watch stream; keys stored before the agent started count from "
    "their first store or miss; a miss is assumed refilled by the client (cache-aside)"
)


def prefix_ttl(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, prefix: str, ttl_s: int
) -> TtlWhatIfOut | None:
    """The TTL what-if for one prefix of the latest window with a breakdown; None without a
    breakdown (ttl_answer says what else it refuses)."""
    found = newest_good_breakdown(db, org_id, server_id)
    if found is None:
        return None
    r, doc, windows_note = found
    return ttl_answer(server_id, r, doc, windows_note, prefix, ttl_s)


def ttl_answer(
    server_id: uuid.UUID, r: Any, doc: dict[str, Any], windows_note: str | None, prefix: str, ttl_s: int
) -> TtlWhatIfOut:
    """The TTL what-if from one window (`r` its snapshot row, `doc` its decoded breakdown; pure).
    QueryRefused (a 422 located on the query parameter) for a prefix without a replay, too few
    sampled reads, or a TTL outside the replayed grid."""
    ps = doc.get("prefixes") or []
    p = next((q for q in ps if q["prefix"] == prefix), None)
    with_data = [q["prefix"] for q in ps if q.get("ttl_whatif")]
    if p is None:
        raise QueryRefused(
            "unknown_prefix",
            "prefix",
            f"prefix {prefix!r} is not among the top prefixes of the window ending "
            f"{r.window_end.isoformat()}; those with TTL data: {', '.join(with_data) or 'none'}",
        )
    grid = doc.get("ttl_whatif_ttls_s")
    tw = p.get("ttl_whatif")
    if not tw or not grid:
        raise QueryRefused(
            "no_ttl_data",
            "prefix",
            f"prefix {prefix!r} has no TTL what-if in the window ending {r.window_end.isoformat()} (an agent "
            "older than the what-if, or no read of a key seen stored yet); those with it: "
            f"{', '.join(with_data) or 'none'}",
        )
    if tw["sampled_reads"] < TTLW_MIN_READS:
        raise QueryRefused(
            "too_few_reads",
            "prefix",
            f"prefix {prefix!r} had {tw['sampled_reads']} sampled reads in the window; the what-if needs at "
            f"least {TTLW_MIN_READS}",
        )
    if not grid[0] <= ttl_s <= grid[-1]:
        raise QueryRefused(
            "ttl_out_of_range",
            "ttl_s",
            f"ttl_s {ttl_s} is outside the TTLs the agent replayed: {grid[0]} ... {grid[-1]} s",
        )
    other = doc.get("prefix_other") or {"requests": 0}
    reads = sum(q["requests"] for q in ps) + other["requests"]
    share = p["requests"] / reads if reads else 0.0
    window_s = (r.window_end - r.window_start).total_seconds()
    server_hr = (doc.get("measured") or {}).get("hit_ratio")
    w = what_if(
        grid,
        tw["hit_ratio"],
        tw["live_byte_s"],
        window_s,
        p.get("points") or [],
        p["hit_ratio"],
        p["bytes"],
        share,
        server_hr,
        ttl_s,
        tw.get("sampled_hit_ratio"),
    )
    need = w.memory_for_today_hit_ratio
    return TtlWhatIfOut(
        server_id=server_id,
        snapshot_id=r.id,
        window_end=r.window_end,
        windows_note=windows_note,
        prefix=prefix,
        ttl_s=ttl_s,
        request_share=share,
        measured_hit_ratio=p["hit_ratio"],
        held_bytes=p["bytes"],
        server_measured_hit_ratio=server_hr,
        allowed_hit_ratio_today=w.allowed_today,
        allowed_hit_ratio=w.allowed,
        live_bytes_today=w.live_bytes_today,
        live_bytes=w.live_bytes,
        prefix_hit_ratio=w.prefix_hit_ratio,
        server_hit_ratio=w.server_hit_ratio,
        server_hit_ratio_unbounded=w.server_hit_ratio_unbounded,
        memory_for_today_hit_ratio=need,
        memory_change_bytes=None if need is None else need - p["bytes"],
        reachable=need is not None,
        bound=w.bound,
        sampled_reads=tw["sampled_reads"],
        sample_rate=tw["sample_rate"],
        sample_correction=w.sample_correction,
        grid=[TtlGridPointOut(**g.__dict__) for g in w.grid],
        model=MODEL,
        gaps=GAPS,
    )
