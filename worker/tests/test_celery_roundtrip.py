"""A task travels through the real Redis broker to a real worker process and back."""

from typing import Any

import pytest
from worker_helpers import start_worker

from hitcurve.core import task_names as names
from hitcurve_testing.waiting import DEADLINE_S

pytestmark = pytest.mark.live


def test_ping_round_trips_through_redis(private_env: dict[str, str], celery_client: Any) -> None:
    worker = start_worker(private_env, "roundtrip")
    try:
        result = celery_client.send_task(names.PING, args=["hello from the test"]).get(timeout=DEADLINE_S)
        assert result["echo"] == "hello from the test"
        assert result["pid"] != 0
        assert worker.proc.poll() is None
    finally:
        worker.stop()
