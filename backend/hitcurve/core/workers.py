"""Is any worker consuming, and how far behind is it? Read by /health.

- Workers: each refreshes a Redis key HEARTBEAT_PREFIX + hostname on the broker
  (hitcurve_worker/heartbeat.py) that expires after Settings.worker_stale_s.
- Queue lag: the age of the oldest upload (snapshot or trace chunk) still pending, from the
  partial indexes on (status, received_at); and the broker queue's depth.
"""

import json
import time
from typing import Any

import redis
from sqlalchemy import text

from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine

HEARTBEAT_PREFIX = "hitcurve:worker:"

_OLDEST_PENDING = text(
    "SELECT extract(epoch FROM now() - least("
    " (SELECT min(received_at) FROM snapshots WHERE status = 'pending'),"
    " (SELECT min(received_at) FROM trace_chunks WHERE status = 'pending')))"
)


def worker_status(client: redis.Redis) -> dict[str, Any]:
    s = get_settings()
    now = time.time()
    alive: list[dict[str, Any]] = []
    for key in client.scan_iter(match=HEARTBEAT_PREFIX + "*", count=100):
        raw = client.get(key)
        if raw is None:
            continue
        try:
            beat = json.loads(raw)
            age = now - float(beat["at"])
        except (ValueError, KeyError, TypeError):
            continue
        if age <= s.worker_stale_s:
            name = key.decode() if isinstance(key, bytes) else str(key)
            alive.append({"name": name.removeprefix(HEARTBEAT_PREFIX), "heartbeat_age_s": round(age, 1)})
    alive.sort(key=lambda w: str(w["name"]))
    out: dict[str, Any] = {"ok": bool(alive), "alive": len(alive), "workers": alive}
    if not alive:
        out["error"] = f"no worker heartbeat in the last {s.worker_stale_s:g} s: uploads are not processed"
    return out


def queue_status(client: redis.Redis) -> dict[str, Any]:
    s = get_settings()
    depth = int(client.llen(s.celery_queue))
    with get_engine().connect() as conn:
        lag = conn.execute(_OLDEST_PENDING).scalar()
    lag_s = round(float(lag), 1) if lag is not None else 0.0
    out: dict[str, Any] = {"ok": lag_s <= s.max_queue_lag_s, "depth": depth, "oldest_pending_s": lag_s}
    if not out["ok"]:
        out["error"] = f"the oldest pending upload waits {lag_s:g} s (limit {s.max_queue_lag_s:g} s)"
    return out
