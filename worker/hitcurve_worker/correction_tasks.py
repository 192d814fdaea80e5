"""hitcurve.compute_policy_correction: simulate LRU, memcached's segmented LRU and the agent's ghost
view on a server's most recent sampled trace and store them (the gap below today's memory, the lift
above it: policy_correction.py) in policy_corrections, one row per server.

It is triggered after a trace chunk is processed, when enough new trace has arrived since the
stored correction was computed (RECOMPUTE_SHARE of what it used, at least RECOMPUTE_MIN_RECORDS
records), so the CPU it takes is bounded by the trace rate: at most one recomputation per
~0.5 M new sampled records once the cap (MAX_SAMPLED_REQUESTS) is reached. A per-server advisory
lock keeps two workers from computing the same correction; the row is upserted on server_id, so
re-running changes nothing but its age.
"""

from __future__ import annotations

import logging
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from celery import Task
from sqlalchemy import func, select, text
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from hitcurve.core import task_names as names
from hitcurve.crud.curves import latest_server_curve, packed_classes
from hitcurve.models import PolicyCorrection, Server, Snapshot, TraceChunk
from hitcurve_worker import policy_correction as pc
from hitcurve_worker import trace_chunks
from hitcurve_worker.celery_app import app
from hitcurve_worker.fair_tasks import queue as fair_queue
from hitcurve_worker.reliability import RETRY_OPTS, PoisonInput, describe, now, session
from hitcurve_worker.trace_data import assemble

log = logging.getLogger("hitcurve.worker.correction")

TASK = names.COMPUTE_POLICY_CORRECTION
# New trace (records of chunks received since the last correction) that makes it worth redoing.
RECOMPUTE_SHARE = 0.25
RECOMPUTE_MIN_RECORDS = 10_000
# Chunks are read newest first until they hold this many records (evictions included; the
# simulation then keeps the most recent MAX_SAMPLED_REQUESTS requests).
MAX_RECORDS = int(pc.MAX_SAMPLED_REQUESTS * 1.25)
# A correction whose trace ended longer ago than this before a window is not applied to it.
MAX_AGE = timedelta(hours=24)


def _records_since(db: Session, server_id: uuid.UUID, since: datetime | None) -> int:
    q = select(func.coalesce(func.sum(TraceChunk.record_count), 0)).where(
        TraceChunk.server_id == server_id, TraceChunk.status.in_(trace_chunks.CORRECTION_STATUSES)
    )
    if since is not None:
        q = q.where(TraceChunk.received_at > since)
    return int(db.execute(q).scalar_one())


def needs_update(db: Session, server_id: uuid.UUID) -> bool:
    """Whether enough new trace arrived since the stored correction (or there is none yet and
    there may be enough to compute one)."""
    row = db.execute(
        select(
            PolicyCorrection.status, PolicyCorrection.received_through, PolicyCorrection.sampled_requests
        ).where(PolicyCorrection.server_id == server_id)
    ).first()
    if row is None:
        return _records_since(db, server_id, None) >= pc.MIN_SAMPLED_GETS
    status, through, used = row
    new = _records_since(db, server_id, through)
    if status == "ok":
        return new >= max(RECOMPUTE_MIN_RECORDS, RECOMPUTE_SHARE * float(used))
    return new >= RECOMPUTE_MIN_RECORDS


def maybe_enqueue(server_id: uuid.UUID) -> bool:
    """After a trace chunk: hand the server's correction to a worker when it is due. Never raises
    (the chunk is processed either way; the next chunk asks again)."""
    try:
        with session() as db:
            due = needs_update(db, server_id)
            org_id = db.execute(select(Server.org_id).where(Server.id == server_id)).scalar_one_or_none()
        if due and org_id is not None:
            # on the organization's fair queue: a fleet's corrections do not hold up another
            # organization's simulations or corrections (fair_tasks)
            fair_queue(org_id, TASK, server_id)
        return due
    except Exception as exc:  # broker or database trouble: the next chunk triggers it
        log.warning("policy correction of server %s not enqueued: %s", server_id, describe(exc))
        return False


def stored_values(corr: pc.Correction) -> dict[str, Any]:
    """The policy_corrections columns that hold a computed correction (from_stored reads them
    back; the accuracy bench round-trips its in-process correction through both)."""
    return {
        "sample_rate": corr.sample_rate,
        "sampled_requests": corr.sampled_requests,
        "sampled_gets": corr.sampled_gets,
        "warmup": corr.warmup,
        "sample_adjust": corr.sample_adjust,
        "reference_bytes": int(corr.reference_bytes),
        "reference_items": int(corr.reference_items),
        "sizes_bytes": corr.sizes_bytes.tolist(),
        "hit_ratio_lru": corr.lru.tolist(),
        "hit_ratio_policy": corr.policy.tolist(),
        "hit_ratio_ghost_view": None if corr.ghost_view is None else corr.ghost_view.tolist(),
    }


def from_stored(row: Any) -> pc.Correction | None:
    """The correction a policy_corrections row (or anything with its columns) holds; None when its
    arrays are unusable. A row stored before revision 0014 has no ghost view: no lift above
    today's memory."""
    return pc.from_row(
        row.sizes_bytes or [],
        row.hit_ratio_lru or [],
        row.hit_ratio_policy or [],
        row.sampled_gets,
        row.sampled_requests,
        float(row.sample_rate or 0.0),
        float(row.reference_bytes or 0),
        float(row.reference_items or 0),
        row.sample_adjust,
        ghost_view=row.hit_ratio_ghost_view,
    )


def usable_correction(row: PolicyCorrection | None, window_end: datetime) -> tuple[pc.Correction | None, str]:
    """The server's stored correction (row: its policy_corrections row, None when it has none,
    read for a whole batch by snapshot_loads.corrections) when it is usable for a window ending
    at window_end, else None and the reason (for the curve's calibration record)."""
    if row is None:
        return None, "no policy correction for this server yet (it needs sampled trace chunks)"
    if row.status != "ok":
        return None, f"no policy correction: {row.reason or 'too little sampled trace'}"
    if row.trace_end is not None and row.trace_end < window_end - MAX_AGE:
        return None, f"the policy correction's trace is older than {MAX_AGE} (the agent sends no trace?)"
    corr = from_stored(row)
    if corr is None:
        return None, "the stored policy correction is unusable"
    return corr, ""


def _reference(db: Session, org_id: uuid.UUID, server_id: uuid.UUID) -> tuple[float, float] | None:
    """Today's memory (bytes of slab pages) and items, from the newest server curve."""
    latest = latest_server_curve(db, org_id, server_id)
    if latest is None:
        return None
    items = sum(c.current_items for c in packed_classes(db, org_id, latest.snapshot_id, latest.window_end))
    return float(latest.current_bytes), float(items)


def sample_read_ratio(
    db: Session, org_id: uuid.UUID, chunks: Sequence[tuple[uuid.UUID, datetime, datetime, float, int]]
) -> tuple[float | None, str]:
    """Sampled / expected reads (SHARDS_adj, policy_correction.read_ratio) of trace chunks from one
    or more servers, from each server's snapshot read counters. chunks: (server id, start, end,
    sample rate, sampled reads)."""
    sampled = expected = 0.0
    for sid in sorted({c[0] for c in chunks}):
        mine = [c for c in chunks if c[0] == sid]
        t0, t1 = min(c[1] for c in mine), max(c[2] for c in mine)
        windows = db.execute(
            select(Snapshot.window_start, Snapshot.window_end, Snapshot.cmd_get, Snapshot.loss_ratio).where(
                Snapshot.org_id == org_id,
                Snapshot.server_id == sid,
                Snapshot.window_end > t0,
                Snapshot.window_start < t1,
            )
        ).all()
        ratio, why = pc.read_ratio(
            [(c[1].timestamp(), c[2].timestamp(), c[3], c[4]) for c in mine],
            [(w0.timestamp(), w1.timestamp(), float(g) * (1.0 - float(loss))) for w0, w1, g, loss in windows],
        )
        if ratio is None:
            return None, why
        n = float(sum(c[4] for c in mine))
        sampled += n
        expected += n / ratio
    if expected <= 0:
        return None, "no sample-size adjustment: no sampled reads"
    return sampled / expected, ""


def _read_ratio(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, chunks: list[trace_chunks.Chunk], rate: float
) -> tuple[float | None, str]:
    """Sampled / expected reads over the replayed chunks, from the snapshots' read counters."""
    kept = [c for c in chunks if c.rate == rate]
    if not kept:
        return None, ""
    return sample_read_ratio(db, org_id, [(server_id, c.start, c.end, c.rate, c.reads) for c in kept])


def compute_for_server(server_id: uuid.UUID, force: bool = False) -> dict[str, Any]:
    with session() as db:
        got = db.execute(
            text("SELECT pg_try_advisory_xact_lock(hashtext(:k))"), {"k": f"policy-correction:{server_id}"}
        ).scalar_one()
        if not got:
            return {"status": "busy"}
        server = db.get(Server, server_id)
        if server is None:
            return {"status": "missing"}
        if not force and not needs_update(db, server_id):
            return {"status": "up-to-date"}
        ref = _reference(db, server.org_id, server_id)
        if ref is None:
            return {"status": "waiting", "reason": "no server curve yet (today's memory is unknown)"}
        chunks, bad = trace_chunks.load(
            db, server.org_id, [server_id], trace_chunks.CORRECTION_STATUSES, newest_records=MAX_RECORDS
        )
        rates = [c.rate for c in chunks]
        values: dict[str, Any] = {
            "org_id": server.org_id,
            "server_id": server_id,
            "policy": pc.POLICY,
            "computed_at": now(),
            "trace_start": chunks[0].start if chunks else None,
            "trace_end": chunks[-1].end if chunks else None,
            "received_through": max((c.received_at for c in chunks), default=None),
            "chunks": len(chunks),
            "reference_bytes": int(ref[0]),
            "reference_items": int(ref[1]),
        }
        notes = [f"{bad} undecodable chunks left out"] if bad else []
        try:
            trace = assemble([c.cols for c in chunks], rates)
            ratio, why = _read_ratio(db, server.org_id, server_id, chunks, trace.sample_rate)
            if why:
                notes.append(why)
            corr = pc.compute(trace, ref[0], ref[1], sample_adjust=ratio)
        except (pc.InsufficientTrace, PoisonInput) as exc:
            values |= {
                "status": "insufficient",
                "reason": str(exc),
                "sample_rate": float(np.median(rates)) if rates else None,
                "sampled_requests": 0,
                "sampled_gets": 0,
                "warmup": None,
                "sample_adjust": None,
                "sizes_bytes": None,
                "hit_ratio_lru": None,
                "hit_ratio_policy": None,
                "hit_ratio_ghost_view": None,
                "notes": notes,
            }
        else:
            values |= stored_values(corr) | {"status": "ok", "reason": None, "notes": corr.notes + notes}
        db.execute(
            pg_insert(PolicyCorrection)
            .values(**values)
            .on_conflict_do_update(
                index_elements=["server_id"], set_={k: v for k, v in values.items() if k != "server_id"}
            )
        )
        db.commit()
        out = {"status": values["status"], "chunks": values["chunks"], "sampled_gets": values["sampled_gets"]}
        if values["status"] == "ok":
            out["gap_pp"] = [round(g * 100, 3) for g in corr.gap.tolist()]
        else:
            out["reason"] = values["reason"]
        return out


@app.task(name=TASK, bind=True, **RETRY_OPTS)
def compute_policy_correction(self: Task, server_id: str, force: bool = False) -> dict[str, Any]:
    try:
        sid = uuid.UUID(str(server_id))
    except ValueError:
        return {"status": "bad-id"}
    return compute_for_server(sid, force=force)
