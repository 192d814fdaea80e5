"""The query behind a server's breakdown answers (the answers are hitcurve.breakdown's): the
window a page rests on, read from the rows extracted at ingest (snapshots.breakdown,
hitcurve.ingest.snapshot_rows.breakdown_json); no page decodes a stored upload. Which window:
the newest good one, as for the sizing answer (hitcurve/rules/windows.py): a window whose stream
loss was flagged, or that saw fewer than MIN_READS reads, never stands for the server when a good
one is in reach (bench_split read -6 to -10 pp on windows with more than 5 % loss); with none
good, the newest one with a breakdown, said to be so.

One statement picks the window among the newest LOOK_BACK with a breakdown by their flags alone;
a second reads that one row's breakdown, bounded by the protocol (~0.6 MB of JSON at most), with
its memory held by hitcurve.breakdown.memory's rule."""

from __future__ import annotations

import uuid
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from hitcurve.breakdown.memory import with_held_bytes
from hitcurve.models import Snapshot
from hitcurve.rules.windows import MIN_READS, flag_reason, reasons_text
from hitcurve.rules.words import counted

LOOK_BACK = 20  # windows with a breakdown searched for a good one


def _reasons(why: list[str]) -> str:
    return reasons_text(why)


def newest_good_breakdown(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID
) -> tuple[Any, dict[str, Any], str | None] | None:
    """The chosen window's row (id, window_start, window_end), its breakdown, and a note naming
    the newer windows left out; None when no recent window carries a breakdown."""
    rows = db.execute(
        select(
            Snapshot.id,
            Snapshot.window_start,
            Snapshot.window_end,
            Snapshot.flagged,
            Snapshot.cmd_get,
            Snapshot.loss_ratio,
            Snapshot.flag_detail,
        )
        .where(Snapshot.org_id == org_id, Snapshot.server_id == server_id, Snapshot.breakdown.is_not(None))
        # two windows can end at the same second (an agent restarted within it): the one
        # received last is the newer
        .order_by(Snapshot.window_end.desc(), Snapshot.received_at.desc())
        .limit(LOOK_BACK)
    ).all()
    if not rows:
        return None
    left_out: list[str] = []
    chosen, note = None, None
    for r in rows:
        why = (
            flag_reason(r.flag_detail, r.loss_ratio)
            if r.flagged
            else "quiet"
            if r.cmd_get < MIN_READS
            else None
        )
        if why is None:
            chosen = r
            if left_out:
                note = f"{counted(len(left_out), 'newer window')} left out ({_reasons(left_out)})"
            break
        left_out.append(why)
    if chosen is None:
        chosen = rows[0]
        note = f"no recent window without {_reasons(left_out)}: this one stands in, treat it with care"
    doc = db.execute(
        select(Snapshot.breakdown).where(
            Snapshot.org_id == org_id, Snapshot.id == chosen.id, Snapshot.window_end == chosen.window_end
        )
    ).scalar_one()
    return chosen, with_held_bytes(doc), note
