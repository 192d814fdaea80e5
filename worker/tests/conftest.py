"""Worker test helpers: a killable real Celery worker on a private Redis database index (so no
other test's worker takes its tasks), an organization with an agent key, and the real backend
app for uploads through the agent API."""

from __future__ import annotations

import os
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Test modules import worker_helpers (this folder); synthetic uploads come from hitcurve_testing.
# Appended, so no other folder's modules are shadowed.
if str(Path(__file__).resolve().parent) not in sys.path:
    sys.path.append(str(Path(__file__).resolve().parent))

from worker_helpers import Org, clear_caches, make_org, private_redis_url  # noqa: E402


@pytest.fixture(scope="module")
def redis_index() -> Iterator[int]:
    """A Redis database index of its own for this test module (flushed before and after)."""
    import redis

    idx = 3 + (abs(hash(uuid.uuid4().hex)) % 12)
    url = private_redis_url(idx)
    r = redis.Redis.from_url(url)
    r.flushdb()
    yield idx
    r.flushdb()
    r.close()


@pytest.fixture(scope="module")
def private_env(migrated_db: str, redis_index: int) -> Iterator[dict[str, str]]:
    """This process and its workers talk to the private Redis index; restored afterwards."""
    saved = os.environ.get("HITCURVE_REDIS_URL", "")
    os.environ["HITCURVE_REDIS_URL"] = private_redis_url(redis_index)
    clear_caches()
    yield {"HITCURVE_REDIS_URL": os.environ["HITCURVE_REDIS_URL"]}
    os.environ["HITCURVE_REDIS_URL"] = saved
    clear_caches()


@pytest.fixture(scope="module")
def celery_client(private_env: dict[str, str]) -> Iterator[Any]:
    """A Celery client on the private Redis index, to send tasks by name and read results."""
    from celery import Celery

    url = private_env["HITCURVE_REDIS_URL"]
    c = Celery("worker-tests", broker=url, backend=url)
    from hitcurve.core.tasks import route_task

    # routed like the backend and the worker (task_names.LANES), so tasks land on the queues the
    # test workers consume
    c.conf.update(
        task_serializer="json", result_serializer="json", accept_content=["json"], task_routes=(route_task,)
    )
    yield c
    c.close()


@pytest.fixture
def org(private_env: dict[str, str]) -> Org:
    return make_org()


@pytest.fixture(scope="module")
def client(private_env: dict[str, str]) -> Iterator[Any]:
    from fastapi.testclient import TestClient

    from hitcurve.main import create_app

    with TestClient(create_app()) as c:
        yield c
