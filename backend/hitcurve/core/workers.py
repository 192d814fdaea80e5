"""Is any worker consuming each queue, and how far behind is it? Read by /health.

- Workers: each refreshes a Redis key HEARTBEAT_PREFIX + hostname on the broker
  (the worker's heartbeat) that expires after Settings.worker_stale_s and names the
  queues it consumes; a queue without a live consumer makes the check fail.
- Queue lag, per queue: the broker list's depth, the rows waiting for that queue's workers
  (ingest: pending or failed snapshots and trace chunks, counted up to PENDING_CAP) and the age
  of the oldest (simulation runs for batch), from the partial indexes on (status,
  received_at/created_at). The ingest depth is not the backlog: one drain message stands for
  every pending snapshot (hitcurve.drain_snapshots); `pending` is.
- Drains: the queue check also fails while the oldest pending upload waits longer than
  Settings.drain_stall_s and no snapshot was processed within that time (the drains stopped).
- Upload-to-curve lag: percentiles of processed_at - received_at over the latest snapshots
  processed within Settings.lag_window_s (at most LAG_SAMPLE of them, newest first on
  ix_snapshots_processed_at), so the check costs the same at any table size.
"""

import json
import time
from typing import Any

import redis
from sqlalchemy import text

from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine

HEARTBEAT_PREFIX = "hitcurve:worker:"

LAG_SAMPLE = 2000

_OLDEST_PENDING = text(
    "SELECT extract(epoch FROM now() - least("
    " (SELECT min(received_at) FROM snapshots WHERE status IN ('pending','failed')),"
    " (SELECT min(received_at) FROM trace_chunks WHERE status IN ('pending','failed')))),"
    " extract(epoch FROM now() - (SELECT min(created_at) FROM simulation_runs WHERE status = 'pending'))"
)

# Counting stops here: a larger backlog reads as this many (the count walks the partial index).
PENDING_CAP = 100_000
_PENDING = text(
    "SELECT (SELECT count(*) FROM (SELECT 1 FROM snapshots WHERE status IN ('pending','failed')"
    " LIMIT :cap) s) + (SELECT count(*) FROM (SELECT 1 FROM trace_chunks"
    " WHERE status IN ('pending','failed') LIMIT :cap) t)"
)

# Seconds since the newest snapshot a worker processed, among those of the last :window seconds
# (NULL: none that recent), on ix_snapshots_processed_at.
_LAST_DRAINED = text(
    "SELECT extract(epoch FROM now() - max(processed_at)) FROM snapshots"
    " WHERE processed_at > now() - make_interval(secs => :window)"
)

_UPLOAD_TO_CURVE = text(
    "SELECT count(*), percentile_cont(0.5) WITHIN GROUP (ORDER BY lag),"
    " percentile_cont(0.95) WITHIN GROUP (ORDER BY lag), max(lag) FROM ("
    " SELECT extract(epoch FROM processed_at - received_at) AS lag FROM snapshots"
    " WHERE processed_at > now() - make_interval(secs => :window) AND status = 'processed'"
    " ORDER BY processed_at DESC LIMIT :n) recent"
)


def _lanes() -> dict[str, str]:
    s = get_settings()
    return {"ingest": s.celery_ingest_queue, "batch": s.celery_batch_queue}


def worker_status(client: redis.Redis) -> dict[str, Any]:
    s = get_settings()
    now = time.time()
    alive: list[dict[str, Any]] = []
    lanes = _lanes()
    consumers = dict.fromkeys(lanes, 0)
    for key in client.scan_iter(match=HEARTBEAT_PREFIX + "*", count=100):
        raw = client.get(key)
        if raw is None:
            continue
        try:
            beat = json.loads(raw)
            age = now - float(beat["at"])
            queues = [str(q) for q in beat.get("queues") or [s.celery_ingest_queue]]
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if age <= s.worker_stale_s:
            name = key.decode() if isinstance(key, bytes) else str(key)
            alive.append(
                {
                    "name": name.removeprefix(HEARTBEAT_PREFIX),
                    "heartbeat_age_s": round(age, 1),
                    "queues": queues,
                }
            )
            for lane, queue in lanes.items():
                consumers[lane] += queue in queues
    alive.sort(key=lambda w: str(w["name"]))
    idle = [lane for lane, n in consumers.items() if n == 0]
    out: dict[str, Any] = {"ok": not idle, "alive": len(alive), "consumers": consumers, "workers": alive}
    if not alive:
        out["error"] = f"no worker heartbeat in the last {s.worker_stale_s:g} s: uploads are not processed"
    elif idle:
        out["error"] = (
            "no live worker consumes the "
            + " and ".join(f"{lane} queue ({lanes[lane]})" for lane in idle)
            + (": uploads are not processed" if "ingest" in idle else ": simulations and reports wait")
        )
    return out


def queue_status(client: redis.Redis) -> dict[str, Any]:
    """Per queue: broker depth, the rows waiting (ingest) and the oldest of them; plus the
    upload-to-curve lag."""
    s = get_settings()
    lanes = _lanes()
    depth = {lane: int(client.llen(q)) for lane, q in lanes.items()}
    with get_engine().connect() as conn:
        ingest_lag, batch_lag = conn.execute(_OLDEST_PENDING).one()
        pending = min(int(conn.execute(_PENDING, {"cap": PENDING_CAP}).scalar_one()), PENDING_CAP)
        n, p50, p95, worst = conn.execute(_UPLOAD_TO_CURVE, {"window": s.lag_window_s, "n": LAG_SAMPLE}).one()
        drained = conn.execute(_LAST_DRAINED, {"window": s.drain_stall_s}).scalar_one()

    def age(v: Any) -> float:
        return round(max(float(v), 0.0), 1) if v is not None else 0.0

    lag_s = age(ingest_lag)
    # uploads wait longer than a drain takes and no worker drained any in that time: the drains
    # stopped (a worker died holding one, none consumes), however short the backlog still is
    stalled = lag_s > s.drain_stall_s and drained is None
    out: dict[str, Any] = {
        "ok": lag_s <= s.max_queue_lag_s and not stalled,
        "depth": sum(depth.values()),
        "oldest_pending_s": lag_s,
        "queues": {
            "ingest": {
                "name": lanes["ingest"],
                "depth": depth["ingest"],
                "pending": pending,
                "oldest_pending_s": lag_s,
            },
            "batch": {"name": lanes["batch"], "depth": depth["batch"], "oldest_pending_s": age(batch_lag)},
        },
        "upload_to_curve_s": {
            "window_s": s.lag_window_s,
            "snapshots": int(n),
            "p50": age(p50) if n else None,
            "p95": age(p95) if n else None,
            "max": age(worst) if n else None,
        },
    }
    if stalled:
        out["error"] = (
            f"no worker has drained the pending uploads for more than {s.drain_stall_s:g} s "
            f"(the oldest waits {lag_s:g} s): no curve is being made"
        )
    elif not out["ok"]:
        out["error"] = f"the oldest pending upload waits {lag_s:g} s (limit {s.max_queue_lag_s:g} s)"
    return out
