"""Group commit of snapshot uploads: the uploads an API process receives while it is
storing others are stored together, by one thread, in one transaction on that thread's own
connection (one commit) followed by one drain request (one Redis `SET NX`), instead of each paying
for a pool checkout, a ping, a commit and a `SET NX`.

No upload waits for a timer: the first one starts a flush in a thread at once, and what arrives
meanwhile forms the next batch, so an idle API stores each upload alone as before and a busy one
in batches as large as its arrivals during one batch (at most BATCH_MAX). Every request is
answered only after its own statement was committed (an answered upload is never lost), with its
own answer: accepted, duplicate (this org's retry: the statement wrote nothing), 409 (another
org's id), or the error of its own statement. When any statement of a batch fails, the whole
transaction is undone and each of its uploads is stored again alone (crud.ingest.store_snapshot,
which also creates a missing day partition), so only the bad one fails.

The statements of a batch run in the order of their server (org, address), so two processes'
batches lock server rows in the same order and never deadlock.
"""

import asyncio
import logging
import threading
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from hitcurve.core.db import get_engine
from hitcurve.core.principal import Principal
from hitcurve.core.tasks import DRAIN_SNAPSHOTS, broker_backing_off, record_enqueued, request_drain
from hitcurve.crud import ingest
from hitcurve.ingest.snapshot_rows import SnapshotRows
from hitcurve.models import Snapshot

log = logging.getLogger("hitcurve.ingest")

# Most uploads in one transaction: bounds a batch's time (and the answers it holds back) when a
# burst arrives; ~2-3 ms of PostgreSQL per statement, so ~0.2 s at most.
BATCH_MAX = 64


@dataclass
class Pending:
    """One upload waiting for its batch: what to store, and where to answer."""

    agent: Principal
    rows: SnapshotRows
    doc: bytes
    gzipped: bytes | None
    loop: asyncio.AbstractEventLoop | None = None
    future: "asyncio.Future[ingest.Stored] | None" = None


_lock = threading.Lock()
_queue: list[Pending] = []
_flushing = False


async def store(agent: Principal, rows: SnapshotRows, doc: bytes, gzipped: bytes | None) -> ingest.Stored:
    """Store a decoded snapshot with whatever else this process is storing now, and hand it to
    the worker; returns (or raises) this upload's own answer once its batch has committed."""
    global _flushing
    loop = asyncio.get_running_loop()
    item = Pending(agent, rows, doc, gzipped, loop, loop.create_future())
    with _lock:
        _queue.append(item)
        start = not _flushing
        _flushing = True
    if start:
        loop.run_in_executor(None, _flush)
    assert item.future is not None
    return await item.future


def _flush() -> None:
    """Store batches until none is waiting (one flushing thread per process at a time)."""
    global _flushing
    while True:
        with _lock:
            batch = _queue[:BATCH_MAX]
            del _queue[:BATCH_MAX]
            if not batch:
                _flushing = False
                return
        try:
            answers: list[Any] = store_batch(batch)
        except Exception as exc:  # a bug, not a statement's error: every request learns of it
            log.exception("storing a batch of %d uploads failed", len(batch))
            answers = [exc] * len(batch)
        for item, answer in zip(batch, answers, strict=True):
            if item.loop is not None and item.future is not None:
                try:
                    item.loop.call_soon_threadsafe(_answer, item.future, answer)
                except RuntimeError:  # its event loop is closed: nobody waits (stored anyway)
                    log.debug("an upload's event loop closed before its answer")


def _answer(future: "asyncio.Future[ingest.Stored]", answer: Any) -> None:
    if future.done():  # the request was cancelled (client gone); its upload is stored anyway
        return
    if isinstance(answer, BaseException):
        future.set_exception(answer)
    else:
        future.set_result(answer)


def store_batch(batch: list[Pending]) -> list[ingest.Stored | Exception]:
    """Store the uploads of one batch in one transaction and request one drain; each upload's
    answer (a Stored or the exception to raise for it), in the batch's order. Blocking."""
    now = datetime.now(UTC)
    marked = now if not broker_backing_off() else None
    params = [ingest.store_params(p.agent, p.rows, p.doc, p.gzipped, now, marked) for p in batch]
    order = sorted(range(len(batch)), key=lambda i: (str(params[i]["org_id"]), params[i]["address"]))
    stored: dict[int, Any] = {}
    try:
        conn = _connection()
        with conn.cursor() as cur:
            for i in order:
                cur.execute(ingest.STORE_SNAPSHOT, params[i])
                stored[i] = cur.fetchone()[0]
        conn.commit()
    except Exception:
        _drop_connection()
        if len(batch) == 1:
            return [_alone(batch[0])]
        # One statement failed (a missing day partition, a deadlock, bad data): nothing of the
        # batch was committed; each upload alone gets its own answer.
        log.info("a batch of %d uploads failed; storing them one by one", len(batch), exc_info=True)
        return [_alone(p) for p in batch]
    accepted = [i for i in range(len(batch)) if stored[i] is not None]
    if accepted:
        ok = request_drain()
        if ok != (marked is not None):  # enqueued_at as the broker answered (record_enqueued)
            with get_engine().connect() as conn:
                for i in accepted:
                    record_enqueued(conn, DRAIN_SNAPSHOTS, Snapshot, batch[i].rows.snapshot_id, marked, ok)
    answers: list[ingest.Stored | Exception] = []
    for i, p in enumerate(batch):
        if stored[i] is not None:
            answers.append(ingest.Stored(p.rows.snapshot_id, "accepted"))
        else:
            try:
                answers.append(ingest.duplicate_snapshot(p.agent, p.rows.snapshot_id))
            except Exception as exc:  # the 409 of another org's id
                answers.append(exc)
    return answers


# The flushing thread's own connection (one flush at a time per process), kept between batches:
# no pool checkout, ping and return per batch, and no SQLAlchemy layer around the one statement
# (py-spy under bench/fleet: ~7 % of an API process). Any failure discards it; the batch's uploads
# are then stored alone through the pool (pre-pinged), so a dropped connection costs one slow
# batch, never an upload.
_conn: Any = None


def _connection() -> Any:
    """The psycopg connection of the writer, opened from the engine's pool on first use."""
    global _conn
    if _conn is None:
        _conn = get_engine().raw_connection()
    return _conn.driver_connection


def _drop_connection() -> None:
    global _conn
    if _conn is not None:
        try:
            _conn.invalidate()  # closed, and not returned to the pool
        except Exception:  # already broken: nothing to close
            log.debug("closing the writer's connection failed", exc_info=True)
        _conn = None


def _alone(p: Pending) -> ingest.Stored | Exception:
    try:
        return ingest.store_snapshot(p.agent, p.rows, p.doc, enqueue=True, gzipped=p.gzipped)
    except Exception as exc:
        return exc
