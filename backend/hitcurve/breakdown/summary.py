"""A server's breakdown answer (pure but for its one query, crud.breakdown): per-prefix requests,
hit ratios, memory held and memory for a target, hot keys, the TTL-aware against the
TTL-oblivious memory for the target, and the items that left memcached (expired, evicted,
deleted) per class, from the newest good window carrying a breakdown."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy.orm import Session

from hitcurve.crud.breakdown import newest_good_breakdown
from hitcurve.rules.curves import memory_for
from hitcurve.schemas.breakdown import BreakdownOut, ClassLeftOut, HotKeyOut, LeftOut, PrefixOut, TtlOut


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


def latest_breakdown(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, target: float
) -> BreakdownOut | None:
    found = newest_good_breakdown(db, org_id, server_id)
    return summarise(server_id, *found, target) if found else None


def summarise(
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
        stored_bytes=(doc.get("measured") or {}).get("bytes"),
        prefixes_alone_bytes=_alone(out),
    )


def _alone(rows: list[PrefixOut]) -> float | None:
    """The prefixes' own-pool answers summed (None when one of them does not reach the target)."""
    needs = [p.memory_for_target for p in rows if not p.other]
    return sum(n for n in needs if n is not None) if needs and all(n is not None for n in needs) else None
