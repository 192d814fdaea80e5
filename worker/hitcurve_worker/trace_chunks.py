"""Stored trace chunks, decoded for replay: the one loader of the policy simulations
(simulation_tasks) and the policy correction (correction_tasks).

Which chunks a reader takes is named here. A simulation, asked for by a user over a time window,
takes every chunk of the window that is not parked (pending and failed ones too: the worker may be
behind, and a chunk that does not decode is left out and counted); the policy correction runs
after a chunk is processed and takes processed chunks only, the ones its trigger counts
(correction_tasks.needs_update). Decoding is trace_data's and tracecodec's: this module only reads
rows."""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import Session

from hitcurve.ingest import tracecodec
from hitcurve.models import TraceChunk

# The statuses each reader takes (see above); "parked" chunks never decode or are inconsistent.
SIMULATION_STATUSES = ("pending", "processed", "failed")
CORRECTION_STATUSES = ("processed",)
READS = (1, 2)  # the agent's op codes of a read (hit, miss)
# Chunks whose bytes are fetched in one query (bounds the raw bytes held besides the decoded ones).
FETCH_BATCH = 32


@dataclass
class Chunk:
    server_id: uuid.UUID
    start: datetime
    end: datetime
    received_at: datetime
    rate: float
    cols: dict[str, np.ndarray]

    @property
    def reads(self) -> int:
        return int(np.isin(self.cols["op"], READS).sum())


def newest_within(counts: Sequence[int], limit: int | None) -> int:
    """How many of the newest chunks (their record counts, newest first) a reader of at most
    `limit` records takes: chunks until they hold limit records (the last may pass it); all
    without a limit."""
    if limit is None:
        return len(counts)
    taken = total = 0
    for n in counts:
        if total >= limit:
            break
        taken += 1
        total += n
    return taken


def _where(
    org_id: uuid.UUID,
    server_ids: Sequence[uuid.UUID],
    statuses: Sequence[str],
    start: datetime | None,
    end: datetime | None,
) -> list[ColumnElement[bool]]:
    out = [
        TraceChunk.org_id == org_id,
        TraceChunk.server_id.in_(list(server_ids)),
        TraceChunk.status.in_(list(statuses)),
    ]
    if start is not None:
        out.append(TraceChunk.window_end > start)
    if end is not None:
        out.append(TraceChunk.window_start < end)
    return out


def count(
    db: Session,
    org_id: uuid.UUID,
    server_ids: Sequence[uuid.UUID],
    statuses: Sequence[str],
    start: datetime | None = None,
    end: datetime | None = None,
) -> int:
    """How many chunks load() would read (without reading them)."""
    where = _where(org_id, server_ids, statuses, start, end)
    return int(db.execute(select(func.count()).select_from(TraceChunk).where(*where)).scalar_one())


def load(
    db: Session,
    org_id: uuid.UUID,
    server_ids: Sequence[uuid.UUID],
    statuses: Sequence[str],
    start: datetime | None = None,
    end: datetime | None = None,
    newest_records: int | None = None,
) -> tuple[list[Chunk], int]:
    """The servers' chunks overlapping [start, end) (either bound may be open), decoded, in time
    order (window start, then the agent's sequence number); with newest_records, only the newest
    chunks until they hold that many records. Also how many were left out as undecodable."""
    where = _where(org_id, server_ids, statuses, start, end)
    meta = db.execute(
        select(TraceChunk.id, TraceChunk.record_count)
        .where(*where)
        .order_by(TraceChunk.window_start.desc(), TraceChunk.seq.desc())
    ).all()
    chosen = [cid for cid, _ in meta[: newest_within([int(n) for _, n in meta], newest_records)]][::-1]
    out: list[Chunk] = []
    bad = 0
    for i in range(0, len(chosen), FETCH_BATCH):
        batch = chosen[i : i + FETCH_BATCH]
        rows: dict[Any, Any] = {
            r.id: r
            for r in db.execute(
                select(
                    TraceChunk.id,
                    TraceChunk.data,
                    TraceChunk.data_format,
                    TraceChunk.sample_rate,
                    TraceChunk.server_id,
                    TraceChunk.window_start,
                    TraceChunk.window_end,
                    TraceChunk.received_at,
                ).where(TraceChunk.org_id == org_id, TraceChunk.id.in_(batch))
            ).all()
        }
        for cid in batch:
            r = rows[cid]
            if r.data_format != tracecodec.FORMAT:
                bad += 1
                continue
            try:
                cols = tracecodec.decode_records(r.data)
            except Exception:  # a damaged chunk is parked by process_trace_chunk; skipped here
                bad += 1
                continue
            out.append(
                Chunk(r.server_id, r.window_start, r.window_end, r.received_at, float(r.sample_rate), cols)
            )
    return out, bad
