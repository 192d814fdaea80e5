"""hitcurve.ping: the round-trip task of the health tests. (Task modules register themselves
with the app when celery_app imports them; names are in hitcurve.core.task_names.)"""

import os
import socket

from hitcurve.core import task_names as names
from hitcurve_worker.celery_app import app


@app.task(name=names.PING)
def ping(payload: str) -> dict[str, str | int]:
    """Round-trip check used by the health tests: echoes the payload and says who ran it."""
    return {"echo": payload, "worker": socket.gethostname(), "pid": os.getpid()}
