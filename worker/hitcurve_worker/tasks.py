"""Celery tasks. Each task module registers here so autodiscovery finds it."""

import os
import socket

from hitcurve_worker.celery_app import app


@app.task(name="hitcurve.ping")
def ping(payload: str) -> dict[str, str | int]:
    """Round-trip check used by the health tests: echoes the payload and says who ran it."""
    return {"echo": payload, "worker": socket.gethostname(), "pid": os.getpid()}
