"""Test fixtures shared by every Python test: real private PostgreSQL and Redis, a fresh database
per test session, and a real Celery worker process.

`make test` starts the private "test" instance and exports its URLs. Running pytest directly
works too: the instance is started here when the environment does not name one.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent


def _load_env_file(path: Path) -> None:
    for line in path.read_text().splitlines():
        key, _, value = line.partition("=")
        if key:
            os.environ[key] = value


if "HITCURVE_DATABASE_URL" not in os.environ:
    subprocess.run(["bash", str(ROOT / "scripts/services.sh"), "start", "test"], check=True)
    _load_env_file(ROOT / ".run/test/env")

# Each session works in a database of its own, created here and dropped at the end, so two runs
# (or a crashed earlier run) never see each other's rows.
SERVER_URL = os.environ["HITCURVE_DATABASE_URL"]
TEST_DB = f"hitcurve_t_{uuid.uuid4().hex[:10]}"
os.environ["HITCURVE_DATABASE_URL"] = SERVER_URL.rsplit("/", 1)[0] + "/" + TEST_DB


def _admin_execute(sql: str) -> None:
    from sqlalchemy import create_engine, text

    engine = create_engine(SERVER_URL, isolation_level="AUTOCOMMIT")
    try:
        with engine.connect() as conn:
            conn.execute(text(sql))
    finally:
        engine.dispose()


def pytest_sessionstart(session: pytest.Session) -> None:
    _admin_execute(f'CREATE DATABASE "{TEST_DB}"')


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    from hitcurve.core.db import get_engine

    get_engine().dispose()
    _admin_execute(f'DROP DATABASE IF EXISTS "{TEST_DB}" WITH (FORCE)')


@pytest.fixture(scope="session")
def migrated_db() -> str:
    """The session database upgraded to the newest migration; returns its URL."""
    from alembic import command
    from alembic.config import Config

    command.upgrade(Config(str(ROOT / "alembic.ini")), "head")
    return os.environ["HITCURVE_DATABASE_URL"]


def _redis_client():  # type: ignore[no-untyped-def]
    import redis

    return redis.Redis.from_url(os.environ["HITCURVE_REDIS_URL"], socket_timeout=5)


@pytest.fixture(scope="session")
def celery_worker_process() -> Iterator[subprocess.Popen[bytes]]:
    """A real `celery worker` process on the test Redis, stopped at the end of the session."""
    _redis_client().flushdb()
    log = open(ROOT / ".run/test/celery-worker.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [sys.executable, "-m", "celery", "-A", "hitcurve_worker.celery_app", "worker",
         "--loglevel=INFO", "--concurrency=2", "--without-gossip", "--without-mingle",
         "-n", f"test-{uuid.uuid4().hex[:6]}@%h"],
        stdout=log, stderr=subprocess.STDOUT, env=os.environ.copy(), cwd=ROOT,
    )
    from hitcurve_worker.celery_app import app

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(
                f"celery worker exited with {proc.returncode}; see .run/test/celery-worker.log"
            )
        if app.control.ping(timeout=1.0):
            break
    else:
        proc.kill()
        raise RuntimeError("celery worker did not answer a ping within 60 s; see .run/test/celery-worker.log")
    yield proc
    proc.terminate()
    try:
        proc.wait(timeout=30)
    except subprocess.TimeoutExpired:
        proc.kill()
    log.close()
