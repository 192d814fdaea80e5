"""How far an answer's curve is measured (hitcurve.rules.knowledge) for a server or a cluster,
now and in each window the recommended limit replays: from the agent's ghost reach and
memcached's evictions since the agent attached, each member's for a cluster."""

import math
import uuid
from datetime import UTC, datetime
from typing import Any

from sqlalchemy.orm import Session

from hitcurve.crud import curves as curves_crud
from hitcurve.rules import hysteresis, knowledge, warmup
from hitcurve.sizing.basis import Basis

# Windows of memcached's fill read per node for its fill state (warmup.RATE_SPAN_S reaches back).
RATE_ROWS = 60
# At most this many members' windows set a cluster's sight (bounded queries per cluster answer,
# which is cached like the rest of it).
SIGHT_MEMBERS = 32


def sight_of(b: Basis) -> knowledge.Sight:
    """The basis's sight; a basis built without the stored windows' facts (a simulated policy, the
    benchmark's recorded windows) is seen as far as its ghost reach says."""
    if b.sight is not None:
        return b.sight
    cur = float(b.info.current_bytes or 0)
    seen = knowledge.seen_bytes(cur, b.main.x_max, b.ghost_reach_bytes, None, None)
    return knowledge.Sight(b.fill, seen, b.main.x_max, cur)


def set_sight(b: Basis, fill_rows: list[Any], baseline: int | None) -> None:
    """A server's sight now and in each history window (pure; fill_rows: crud.curves.recent_fill,
    baseline: crud.curves.attach_evictions). A stats-only model is not measured by a ghost: only
    memcached's fill bounds what it knows."""
    cur = float(b.info.current_bytes or 0)
    if b.data_basis == "stats_only":
        b.sight = knowledge.Sight(b.fill, b.main.x_max, b.main.x_max, cur)
        return
    ev = knowledge.evictions(fill_rows, baseline)
    seen = knowledge.seen_bytes(
        cur, b.main.x_max, b.ghost_reach_bytes, ev.caps if ev else None, ev.items_now if ev else None
    )
    b.sight = knowledge.Sight(b.fill, seen, b.main.x_max, cur, ev)
    b.history_seen = []
    for end, today in zip(b.history_ends, b.history_current, strict=True):
        at = knowledge.evictions_at(fill_rows, baseline, datetime.fromtimestamp(end, UTC))
        if at is None:
            b.history_seen.append(None)
            continue
        evicted, items, full = at
        b.history_seen.append(knowledge.seen_bytes(today, math.inf, None, evicted, items) if full else 0.0)


def cluster_sight(db: Session, org_id: uuid.UUID, member_ids: list[uuid.UUID], b: Basis) -> None:
    """A cluster's sight: as far as its least-seen member (knowledge.combined), as a share of the
    cluster's memory, and never past its members' ghost reach (b.ghost_reach_bytes); a history
    window any member was filling in answers no recommended limit."""
    members = sorted(member_ids, key=str)[:SIGHT_MEMBERS]
    rows = curves_crud.recent_fill_by_server(db, org_id, members, limit=hysteresis.HISTORY_WINDOWS)
    cur = float(b.info.current_bytes or 0)
    sights = []
    per: list[tuple[list[Any], int | None]] = []
    bases = curves_crud.attach_evictions_by_server(
        db, org_id, {sid: rows[sid][-1].instance_id for sid in members if rows.get(sid)}
    )
    for sid in members:
        r = rows.get(sid) or []
        if not r:
            continue
        base = bases[sid]
        per.append((r, base))
        ev = knowledge.evictions(r, base)
        m_cur = float(r[-1].total_malloced or 0) or cur
        seen = knowledge.seen_bytes(
            m_cur, math.inf, None, ev.caps if ev else None, ev.items_now if ev else None
        )
        sights.append(knowledge.Sight(warmup.state_of(r[-RATE_ROWS:]), seen, math.inf, m_cur, ev))
    reach = b.ghost_reach_bytes if b.ghost_reach_bytes is not None else b.main.x_max
    own = knowledge.combined(sights, b.fill, cur, b.main.x_max)
    seen = min(own.seen_bytes, max(reach, min(cur, b.main.x_max)))
    b.sight = knowledge.Sight(b.fill, seen, b.main.x_max, cur, own.evictions)
    b.history_seen = [
        _seen_then(per, end, today) for end, today in zip(b.history_ends, b.history_current, strict=True)
    ]


def _seen_then(per: list[tuple[list[Any], int | None]], end: float, today: float) -> float | None:
    """How far a cluster history window (ending at `end`, memory `today`) was seen: 0.0 when a
    member was filling then, None when a member's rows do not say."""
    at = datetime.fromtimestamp(end, UTC)
    ratios: list[float] = []
    for r, base in per:
        e = knowledge.evictions_at(r, base, at)
        if e is None:
            return None
        evicted, items, full = e
        if not full:
            return 0.0
        ratios.append(math.inf if evicted is None or items <= 0 else 1.0 + evicted / items)
    return today * min(ratios) if ratios else None
