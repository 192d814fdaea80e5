"""process_trace_chunk: check that a stored chunk decodes and is consistent, then mark it ready
for the simulator (processed). Undecodable or inconsistent chunks are parked with the reason."""

from __future__ import annotations

import logging
import uuid
from typing import Any

import numpy as np
from celery import Task
from sqlalchemy import select, update

from hitcurve.core import task_names as names
from hitcurve.ingest import tracecodec
from hitcurve.models import TraceChunk
from hitcurve_worker.celery_app import app
from hitcurve_worker.correction_tasks import maybe_enqueue
from hitcurve_worker.reliability import (
    RETRY_OPTS,
    PoisonInput,
    describe,
    now,
    run_reliably,
    session,
)

log = logging.getLogger("hitcurve.worker.trace")
VALID_OPS = (1, 2, 3, 4, 5)


def check_records(cols: dict[str, np.ndarray], record_count: int) -> dict[int, int]:
    """Raise PoisonInput unless the columns are complete, equally long and in range."""
    missing = [c for c in tracecodec.COLUMNS if c not in cols]
    if missing:
        raise PoisonInput(f"missing columns: {', '.join(missing)}")
    lengths = {c: len(cols[c]) for c in tracecodec.COLUMNS}
    if len(set(lengths.values())) != 1:
        raise PoisonInput(f"columns differ in length: {lengths}")
    n = lengths["ts_us"]
    if n != record_count:
        raise PoisonInput(f"{n} records stored, {record_count} declared")
    ops = cols["op"]
    if n and not np.isin(ops, VALID_OPS).all():
        raise PoisonInput("op values outside 1..5")
    if n and (cols["size"] < 0).any():
        raise PoisonInput("negative sizes")
    return {int(k): int(v) for k, v in zip(*np.unique(ops, return_counts=True), strict=True)}


def process(chunk_id: uuid.UUID) -> dict[str, Any]:
    with session() as db:
        row = db.execute(
            select(TraceChunk).where(TraceChunk.id == chunk_id).with_for_update()
        ).scalar_one_or_none()
        if row is None:
            return {"status": "missing"}
        if row.status in ("processed", "parked"):
            return {"status": row.status}
        if row.data_format != tracecodec.FORMAT:
            raise PoisonInput(f"unknown data format {row.data_format!r}")
        try:
            cols = tracecodec.decode_records(row.data)
        except Exception as exc:  # zip, npz or dtype errors: the stored bytes are unusable
            raise PoisonInput(f"undecodable records: {describe(exc)}") from exc
        ops = check_records(cols, row.record_count)
        db.execute(
            update(TraceChunk)
            .where(TraceChunk.id == chunk_id)
            .values(status="processed", processed_at=now(), error=None)
        )
        server_id, records = row.server_id, row.record_count
        db.commit()
    # Enough new trace since the server's policy correction? Then recompute it (own task).
    due = maybe_enqueue(server_id)
    return {"status": "processed", "records": records, "ops": ops, "correction_due": due}


@app.task(name=names.PROCESS_TRACE_CHUNK, bind=True, **RETRY_OPTS)
def process_trace_chunk(self: Task, chunk_id: str) -> dict[str, Any]:
    return run_reliably(TraceChunk, chunk_id, process, "trace chunk", log)
