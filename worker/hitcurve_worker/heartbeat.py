"""Worker liveness through the broker: every worker process (the Celery master, whose event loop
also fetches the tasks) refreshes a Redis key `hitcurve:worker:<hostname>` every
`Settings.worker_heartbeat_s` with an expiry of `worker_stale_s`. The backend's /health reads
these keys (`hitcurve.core.workers`): no fresh key naming a queue means nothing consumes it. A worker that
stops cleanly deletes its key; a killed one's key expires."""

from __future__ import annotations

import contextlib
import json
import logging
import os
import time
from typing import Any

import redis
from celery import bootsteps

from hitcurve.core.config import get_settings
from hitcurve.core.workers import HEARTBEAT_PREFIX

log = logging.getLogger("hitcurve.heartbeat")


class Heartbeat(bootsteps.StartStopStep):
    """A worker bootstep: a repeating timer on the worker's own event loop."""

    requires = {"celery.worker.components:Timer"}

    def __init__(self, worker: Any, **kwargs: Any) -> None:
        super().__init__(worker, **kwargs)
        self.tref: Any = None
        self.client: redis.Redis | None = None
        self.key = ""

    def start(self, worker: Any) -> None:
        s = get_settings()
        self.client = redis.Redis.from_url(s.redis_url, socket_timeout=2, socket_connect_timeout=2)
        self.key = HEARTBEAT_PREFIX + worker.hostname
        # The queues this worker consumes (-Q), else every declared one: /health tells which
        # queue has no consumer.
        queues = worker.app.amqp.queues
        self.queues = sorted(queues.consume_from or queues) or [s.celery_ingest_queue]
        self.beat()
        self.tref = worker.timer.call_repeatedly(s.worker_heartbeat_s, self.beat, priority=10)

    def beat(self) -> None:
        s = get_settings()
        body = {"at": time.time(), "pid": os.getpid(), "queues": self.queues}
        try:
            assert self.client is not None
            self.client.set(self.key, json.dumps(body), px=int(s.worker_stale_s * 1000))
        except redis.RedisError as exc:  # the broker is down: /health says so on its own
            log.warning("heartbeat not written: %s", exc)

    def stop(self, worker: Any) -> None:
        if self.tref is not None:
            self.tref.cancel()
        if self.client is not None:
            with contextlib.suppress(redis.RedisError):
                self.client.delete(self.key)
            self.client.close()
