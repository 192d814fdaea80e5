"""hitcurve.drain_snapshots: the pending snapshots of many servers per message.

Why: a Celery message costs the worker ~6-7 ms of CPU around ~10 ms of work (the consumer
handing it to a prefork child, late-ack bookkeeping, the result written to Redis), and the
per-upload task adds its own round trips (in-order check, attempt claim); bench/results/
2026-11-27-fleet-fourth-pass.md. The API publishes a drain only when none is queued (hitcurve.core.tasks.
request_drain), a second later, so the uploads of that second are one message; the drain claims
them in batches and processes each batch with the code of process_snapshot's one (snapshot_tasks.work:
the batch's inputs loaded one statement per kind, its rows stored one statement per table).

What is kept:
- exactly once: each snapshot is processed under its row lock and only while `pending`; a batch
  is one transaction, so a killed worker leaves its snapshots pending (and their attempts
  counted, committed by the claim: an input that kills the worker is parked after MAX_ATTEMPTS).
- in order per server: a claim takes each server's earliest pending window only, and none of a
  server whose earliest another drain or task holds (snapshot_store._CLAIM).
- a bad snapshot does not sink the batch: when the batch's transaction fails, each snapshot is
  done again in its own transaction, and only the bad one is parked (poison input) or failed.
- nothing waits for a message: a drain deletes the "queued" key when it starts and again before
  the claim that ends it (one found nothing: it claims once more after the delete), so a snapshot
  committed before that delete is claimed by it, and one committed after it publishes the next
  drain; the re-enqueue job requests a drain for pending snapshots older than
  HITCURVE_REQUEUE_AFTER_S (a drain lost with a killed worker). Not before every claim: each
  delete lets the next upload publish another drain, and at 33 uploads/s the queue then held
  hundreds of drains that mostly found nothing, ~6 ms of the worker's CPU each (fifth pass).
Nothing reads a drain's result: it is not stored (ignore_result)."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from celery import Task

from hitcurve.core import task_names as names
from hitcurve.core.tasks import drain_started, request_drain
from hitcurve.models import Snapshot
from hitcurve.schemas.agent import MAX_PAST
from hitcurve_worker import snapshot_store as store
from hitcurve_worker.celery_app import app
from hitcurve_worker.notification_tasks import PENDING_KEY, enqueue_remembered
from hitcurve_worker.reliability import (
    MAX_ATTEMPTS,
    RETRY_OPTS,
    PoisonInput,
    describe,
    is_retryable,
    mark,
    now,
    session,
)
from hitcurve_worker.snapshot_tasks import process, work

log = logging.getLogger("hitcurve.worker.drain")

# Snapshots per claim and transaction: the row locks of a batch are held until it commits (~10 ms
# per snapshot), and a claim takes one window per server.
DRAIN_BATCH = 50
# A drain hands over to a fresh message after this long (a catch-up runs for minutes; one task
# must stay well inside the broker's visibility timeout).
DRAIN_MAX_S = 60.0
# Pending windows a drain claims: those that ended since this long before now (an upload is at
# most MAX_PAST late; a day more for its wait). Older pending rows, and failed ones, go to
# process_snapshot one by one (housekeeping.requeue). A bound on the partition column, so the
# claim plans ~9 day partitions, not all of them.
CLAIM_SPAN = MAX_PAST + timedelta(days=1)

Key = tuple[uuid.UUID, datetime]


def _one_by_one(keys: Sequence[Key]) -> tuple[int, int, int]:
    """Each snapshot of a batch whose transaction failed, in its own (the attempt is counted):
    processed, parked (poison input) or failed with its error (the re-enqueue job retries it)."""
    done = parked = failed = 0
    for sid, end in keys:
        bound = (Snapshot.window_end == end,)
        try:
            done += process(sid, end).get("status") == "processed"
        except PoisonInput as exc:
            log.warning("snapshot %s parked: %s", sid, exc)
            mark(Snapshot, sid, "parked", f"poison input: {exc}", bound)
            parked += 1
        except Exception as exc:
            mark(Snapshot, sid, "failed", describe(exc), bound)
            if is_retryable(exc):
                raise
            log.exception("snapshot %s failed; the re-enqueue job retries it", sid)
            failed += 1
    return done, parked, failed


def _settle(keys: Sequence[Key]) -> tuple[int, int, int]:
    """One claimed batch in one transaction: (processed, parked, failed)."""
    with session() as db:
        snaps = store.lock_claimed(db, keys)
        try:
            work(db, snaps, now())
            store.mark_processed(db, [(s.id, s.window_end) for s in snaps], now())
            db.commit()
        except Exception as exc:
            db.rollback()
            db.info.pop(PENDING_KEY, None)
            if is_retryable(exc):
                raise  # the database or broker is away: the drain retries (the rows stay pending)
            log.warning("a batch of %d failed (%s); each on its own", len(snaps), describe(exc))
            return _one_by_one([(s.id, s.window_end) for s in snaps])
        enqueue_remembered(db)
        return len(snaps), 0, 0


def drain(batch: int = DRAIN_BATCH, max_s: float = DRAIN_MAX_S, sender: Any = None) -> dict[str, int]:
    """Claim and process pending snapshots until none is left (or max_s passed: then a fresh drain
    is published to go on)."""
    t0 = time.monotonic()
    counts = {"batches": 0, "processed": 0, "parked": 0, "failed": 0}
    drain_started()
    fresh = True  # the key was deleted since the last claim
    while True:
        with session() as db:
            keys = store.claim_pending(db, now() - CLAIM_SPAN, batch, MAX_ATTEMPTS)
        if not keys:
            if fresh:
                break
            drain_started()  # from here on a new snapshot publishes a drain; claim once more
            fresh = True
            continue
        fresh = False
        done, parked, failed = _settle(keys)
        counts["batches"] += 1
        counts["processed"] += done
        counts["parked"] += parked
        counts["failed"] += failed
        if time.monotonic() - t0 > max_s:
            request_drain(0.0, sender=sender or app)
            break
    return counts


@app.task(name=names.DRAIN_SNAPSHOTS, bind=True, ignore_result=True, **RETRY_OPTS)
def drain_snapshots(self: Task) -> dict[str, int]:
    return drain()
