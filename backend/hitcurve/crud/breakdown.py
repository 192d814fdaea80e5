"""The breakdown of a server (issue 16) read from its latest snapshot that carries one. The
agent's upload is stored whole (gzip) with each snapshot row; the breakdown fields were
validated at ingestion (schemas/agent.py), so here they are only decoded and summarised."""

from __future__ import annotations

import gzip
import json
import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hitcurve.core.errors import ApiError
from hitcurve.curves import memory_for
from hitcurve.models import Snapshot
from hitcurve.poolsplit import SplitPoint, split
from hitcurve.schemas.breakdown import (
    BreakdownOut,
    ClassLeftOut,
    HotKeyOut,
    LeftOut,
    PrefixOut,
    SplitCheckOut,
    SplitOut,
    SplitPointOut,
    TtlOut,
)
from hitcurve.windows import MIN_READS
from hitcurve.words import counted

LOOK_BACK = 20  # snapshots searched for one with a breakdown (an agent may have restarted without)


def _left(d: dict[str, Any] | None) -> LeftOut | None:
    return LeftOut(**d) if d else None


def _hot(rows: list[dict[str, Any]] | None) -> list[HotKeyOut]:
    return [
        HotKeyOut(
            key=h["key"],
            hashed=h.get("hashed", True),
            requests=h["requests"],
            bytes=h["bytes"],
            error=h.get("error", 0),
        )
        for h in rows or []
    ]


def newest_good_breakdown(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID
) -> tuple[Any, dict[str, Any], str | None] | None:
    """The newest good snapshot row carrying a breakdown, its decoded upload, and a note naming
    the newer windows left out. Good as for the sizing answer (hitcurve/windows.py): a window
    whose stream loss was flagged, or that saw fewer than MIN_READS reads, never stands for the
    server when a good one is in reach (bench_split read -6 to -10 pp on windows with more than
    5 % loss); with none good, the newest one with a breakdown, said to be so."""
    rows = db.execute(
        select(
            Snapshot.id,
            Snapshot.window_start,
            Snapshot.window_end,
            Snapshot.payload_gzip,
            Snapshot.flagged,
            Snapshot.cmd_get,
        )
        .where(Snapshot.org_id == org_id, Snapshot.server_id == server_id)
        .order_by(Snapshot.window_end.desc())
        .limit(LOOK_BACK)
    ).all()
    fallback: tuple[Any, dict[str, Any]] | None = None
    left_out: list[str] = []
    for r in rows:
        if r.payload_gzip is None:
            continue
        doc = json.loads(gzip.decompress(r.payload_gzip))
        if doc.get("prefixes") is None and doc.get("ttl_points") is None:
            continue
        why = "stream loss" if r.flagged else "quiet" if r.cmd_get < MIN_READS else None
        if why is None:
            note = None
            if left_out:
                note = (
                    f"{counted(len(left_out), 'newer window')} left out ({', '.join(sorted(set(left_out)))})"
                )
            return r, doc, note
        fallback = fallback or (r, doc)
        left_out.append(why)
    if fallback is None:
        return None
    why = ", ".join(sorted(set(left_out)))
    return fallback[0], fallback[1], f"no recent window without {why}: this one stands in, treat it with care"


def latest_breakdown(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, target: float
) -> BreakdownOut | None:
    found = newest_good_breakdown(db, org_id, server_id)
    return _summarise(server_id, *found, target) if found else None


def _summarise(
    server_id: uuid.UUID, r: Any, doc: dict[str, Any], windows_note: str | None, target: float
) -> BreakdownOut:
    prefixes = doc.get("prefixes") or []
    other = doc.get("prefix_other")
    total_req = sum(p["requests"] for p in prefixes) + (other["requests"] if other else 0)
    total_bytes = sum(p["bytes"] for p in prefixes) + (other["bytes"] if other else 0)
    out: list[PrefixOut] = []
    for p in prefixes:
        out.append(
            PrefixOut(
                prefix=p["prefix"],
                other=False,
                requests=p["requests"],
                request_share=p["requests"] / total_req if total_req else 0.0,
                hit_ratio=p["hit_ratio"],
                bytes=p["bytes"],
                memory_share=p["bytes"] / total_bytes if total_bytes else None,
                memory_for_target=memory_for(p["points"], target) if p["points"] else None,
                curve_step=p["points"][0][0] if p["points"] else None,
                ttl_whatif=bool(p.get("ttl_whatif")),
                points=[(x, y) for x, y in p["points"]],
                left=_left(p.get("left")),
            )
        )
    if other and other["requests"] > 0:
        out.append(
            PrefixOut(
                prefix="(other)",
                other=True,
                requests=other["requests"],
                request_share=other["requests"] / total_req if total_req else 0.0,
                hit_ratio=other["hit_ratio"],
                bytes=other["bytes"],
                memory_share=other["bytes"] / total_bytes if total_bytes else None,
                memory_for_target=None,
                curve_step=None,
                points=[],
                left=_left(other.get("left")),
            )
        )
    ttl = None
    if doc.get("ttl_points") and doc.get("ttl"):
        t = doc["ttl"]
        aware = memory_for(doc["ttl_points"], target)
        obl = memory_for(t["oblivious_points"], target)
        ttl = TtlOut(
            points=[(x, y) for x, y in doc["ttl_points"]],
            oblivious_points=[(x, y) for x, y in t["oblivious_points"]],
            working_set_bytes=t["working_set_bytes"],
            working_set_bytes_oblivious=t["working_set_bytes_oblivious"],
            memory_for_target=aware,
            memory_for_target_oblivious=obl,
            saved_ratio=1 - aware / obl if aware is not None and obl else None,
            expired_reads=t.get("expired_reads", 0),
            gaps=t.get("gaps", ""),
        )
    classes = [
        ClassLeftOut(
            id=c["id"],
            chunk_size=c["chunk_size"],
            **c["left"],
            # the agent's figure is from memcached's counters, `left` from the stream: the
            # page-move share can't exceed what the stream saw evicted
            evicted_by_page_moves=min(c.get("page_move_evictions", 0), c["left"]["evicted"]),
        )
        for c in doc["classes"]
        if c.get("left")
    ]
    left = LeftOut(
        expired=sum(c.expired for c in classes),
        evicted=sum(c.evicted for c in classes),
        deleted=sum(c.deleted for c in classes),
        evicted_by_page_moves=sum(c.evicted_by_page_moves for c in classes),
    )
    return BreakdownOut(
        server_id=server_id,
        snapshot_id=r.id,
        window_start=r.window_start,
        window_end=r.window_end,
        windows_note=windows_note,
        target=target,
        prefix_rule=doc.get("prefix_rule"),
        prefixes=out,
        hot_keys_hashed=bool(doc.get("hot_keys_hashed", True)),
        hot_keys=_hot(doc.get("hot_keys")),
        hot_keys_by_bytes=_hot(doc.get("hot_keys_by_bytes")),
        ttl=ttl,
        classes=classes,
        left=left,
    )


# Below this many reads of the prefix in the window its curve is noise (the agent's window cut
# short at a restart held ~350 reads per prefix on bench_split, and its check was -24 pp).
SPLIT_MIN_READS = 1000
# P's own curve at the memory it holds today against its measured hit ratio: within this the
# window's split answer is trusted (bench_split: |diff| <= 0.6 pp on full windows).
SPLIT_CHECK_PP = 3.0


def query_error(code: str, param: str, msg: str) -> ApiError:
    """A 422 located on one query parameter (the what-ifs' answers to what they cannot answer)."""
    return ApiError(422, code, [{"loc": ["query", param], "msg": msg, "type": code}])


def prefix_split(
    db: Session,
    org_id: uuid.UUID,
    server_id: uuid.UUID,
    prefix: str,
    total: float | None,
    prefix_bytes: float | None,
) -> SplitOut | None:
    """The pool-split what-if for one prefix of the latest window with a breakdown (model and
    its derivation: hitcurve/poolsplit.py). None without a breakdown; ApiError 422 (located on
    the query parameter) for a prefix without a curve or a split outside the total."""
    found = newest_good_breakdown(db, org_id, server_id)
    if found is None:
        return None
    r, doc, windows_note = found
    ps = doc.get("prefixes") or []
    merged = doc.get("ttl_points")
    p = next((q for q in ps if q["prefix"] == prefix), None)
    if p is None or not p.get("points"):
        names = ", ".join(q["prefix"] for q in ps) or "none"
        raise query_error(
            "unknown_prefix",
            "prefix",
            f"prefix {prefix!r} has no curve in the window ending {r.window_end.isoformat()}: the prefixes "
            f"with one are {names} ('(other)' has none)",
        )
    if not merged:
        raise query_error(
            "no_merged_curve", "prefix", "the window has no merged ttl_points (the curve to split)"
        )
    if p["requests"] < SPLIT_MIN_READS:
        raise query_error(
            "too_few_reads",
            "prefix",
            f"prefix {prefix!r} had {p['requests']} reads in the window; its curve needs at least "
            f"{SPLIT_MIN_READS}",
        )
    today = float(doc["server"]["limit_maxbytes"])
    total = today if total is None else total
    if prefix_bytes is not None and prefix_bytes >= total:
        raise query_error(
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
        raise query_error(
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
