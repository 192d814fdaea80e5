"""A task travels through the real Redis broker to a real worker process and back."""

import subprocess

from hitcurve_testing.waiting import DEADLINE_S
from hitcurve_worker.tasks import ping


def test_ping_round_trips_through_redis(celery_worker_process: subprocess.Popen[bytes]) -> None:
    result = ping.delay("hello from the test").get(timeout=DEADLINE_S)
    assert result["echo"] == "hello from the test"
    assert result["pid"] != 0
    assert celery_worker_process.poll() is None
