"""The pool-split answer for one prefix of a server's breakdown: "give prefix P its own pool of X
bytes and the rest the remainder: what hit rate, against today's pooled one", the best split, and
P's curve checked against its measured hit ratio (the model: hitcurve.breakdown.poolsplit).
split_answer is pure; prefix_split reads the window it rests on (crud.breakdown)."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from hitcurve.breakdown.poolsplit import SplitPoint, split
from hitcurve.core.domain import QueryRefused
from hitcurve.crud.breakdown import newest_good_breakdown
from hitcurve.schemas.breakdown import SplitCheckOut, SplitOut, SplitPointOut

# Below this many reads of the prefix in the window its curve is noise (the agent's window cut
# short at a restart held ~350 reads per prefix on bench_split, and its check was -24 pp).
SPLIT_MIN_READS = 1000
# P's own curve at the memory it holds today against its measured hit ratio: within this the
# window's split answer is trusted (bench_split: |diff| <= 0.6 pp on full windows).
SPLIT_CHECK_PP = 3.0


def prefix_split(
    db: Session,
    org_id: uuid.UUID,
    server_id: uuid.UUID,
    prefix: str,
    total: float | None,
    prefix_bytes: float | None,
) -> SplitOut | None:
    """The pool-split what-if for one prefix of the latest window with a breakdown; None without
    a breakdown (split_answer says what else it refuses)."""
    found = newest_good_breakdown(db, org_id, server_id)
    if found is None:
        return None
    r, doc, windows_note = found
    return split_answer(server_id, r, doc, windows_note, prefix, total, prefix_bytes)


def split_answer(
    server_id: uuid.UUID,
    r: Any,
    doc: dict[str, Any],
    windows_note: str | None,
    prefix: str,
    total: float | None,
    prefix_bytes: float | None,
) -> SplitOut:
    """The pool-split answer from one window (`r` its snapshot row, `doc` its decoded breakdown;
    pure). QueryRefused (a 422 located on the query parameter) for a prefix without a curve or
    with too few reads, a window without the merged curve, a split outside the total, or no rest
    left to give a pool."""
    ps = doc.get("prefixes") or []
    merged = doc.get("ttl_points")
    p = next((q for q in ps if q["prefix"] == prefix), None)
    if p is None or not p.get("points"):
        names = ", ".join(q["prefix"] for q in ps) or "none"
        raise QueryRefused(
            "unknown_prefix",
            "prefix",
            f"prefix {prefix!r} has no curve in the window ending {r.window_end.isoformat()}: the prefixes "
            f"with one are {names} ('(other)' has none)",
        )
    if not merged:
        raise QueryRefused(
            "no_merged_curve", "prefix", "the window has no merged ttl_points (the curve to split)"
        )
    if p["requests"] < SPLIT_MIN_READS:
        raise QueryRefused(
            "too_few_reads",
            "prefix",
            f"prefix {prefix!r} had {p['requests']} reads in the window; its curve needs at least "
            f"{SPLIT_MIN_READS}",
        )
    today = float(doc["server"]["limit_maxbytes"])
    total = today if total is None else total
    if prefix_bytes is not None and prefix_bytes >= total:
        raise QueryRefused(
            "split_outside_total",
            "prefix_bytes",
            f"prefix_bytes {prefix_bytes:.0f} is not below total_bytes {total:.0f}: the rest needs "
            "some memory",
        )
    other = doc.get("prefix_other") or {"requests": 0, "bytes": 0}
    reads = sum(q["requests"] for q in ps) + other["requests"]
    if reads - p["requests"] < SPLIT_MIN_READS:
        # the rest's curve is the merged curve minus P's, weighted by the rest's share of reads:
        # with (almost) none there is no rest to give a pool (a share of 1 divided by zero: 500)
        raise QueryRefused(
            "no_rest",
            "prefix",
            f"prefix {prefix!r} carries {p['requests']} of the window's {reads} reads; the rest had "
            f"{reads - p['requests']}, fewer than the {SPLIT_MIN_READS} a pool of its own needs, so there "
            "is nothing to split off",
        )
    resident = sum(q["bytes"] for q in ps) + other["bytes"]
    share = p["requests"] / reads
    occupancy = p["bytes"] / resident if resident else share
    measured = (doc.get("measured") or {}).get("hit_ratio")
    sp = split(
        merged, p["points"], share, occupancy, today, total, prefix_bytes, measured, p.get("hit_ratio")
    )
    at_occ = sp.check_pp / 100 + p["hit_ratio"] if sp.check_pp is not None else None

    def pt(q: SplitPoint) -> SplitPointOut:
        return SplitPointOut(**q.__dict__)

    return SplitOut(
        server_id=server_id,
        snapshot_id=r.id,
        window_end=r.window_end,
        windows_note=windows_note,
        prefix=prefix,
        request_share=share,
        occupancy_share=occupancy,
        today_bytes=int(today),
        total_bytes=total,
        pooled_hit_ratio=sp.pooled_hit_ratio,
        measured_hit_ratio=measured,
        today_split=pt(sp.today),
        best=pt(sp.best),
        chosen=pt(sp.chosen) if sp.chosen else None,
        gain_pp=100 * (sp.best.hit_ratio - sp.pooled_hit_ratio),
        points=[pt(q) for q in sp.points],
        rest_known_up_to=sp.rest_range_end,
        check=SplitCheckOut(
            prefix_curve_at_occupancy=at_occ,
            prefix_measured_hit_ratio=p.get("hit_ratio"),
            diff_pp=sp.check_pp,
            tolerance_pp=SPLIT_CHECK_PP,
            passed=None if sp.check_pp is None else abs(sp.check_pp) <= SPLIT_CHECK_PP,
        ),
        calibration_scale=sp.scale,
        model=MODEL,
    )


MODEL = (
    "the prefix alone: its own TTL-aware byte curve; the rest alone: the merged TTL-aware curve (calibrated "
    "in size through memcached's measured hit ratio at today's memory) minus the prefix's, at the pool's "
    "natural partition (each part's occupancy grows with its byte miss rate, fitted to the prefix's "
    "measured share of resident bytes). Verified on real memcached: profiler-agent/README.md, 'Pool-split "
    "what-if'"
)
