"""GET /api/v1/health checks PostgreSQL and Redis for real and names a dead one."""

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine, get_sessionmaker
from hitcurve.main import create_app
from hitcurve_testing.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _fresh_client() -> TestClient:
    for cached in (get_settings, get_engine, get_sessionmaker):
        cached.cache_clear()
    return TestClient(create_app())


@pytest.fixture
def restore_settings() -> Iterator[None]:
    saved = dict(os.environ)
    yield
    os.environ.clear()
    os.environ.update(saved)
    for cached in (get_settings, get_engine, get_sessionmaker):
        cached.cache_clear()


def test_health_reports_both_dependencies_reachable() -> None:
    response = _fresh_client().get("/api/v1/health")
    assert response.status_code == 200, response.text
    body = response.json()
    # "degraded" only for want of a worker (none may run in this test session) or queue lag
    assert body["status"] == (
        "ok" if body["checks"]["workers"]["ok"] and body["checks"]["queue"]["ok"] else "degraded"
    )
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["redis"]["ok"] is True
    assert body["checks"]["database"]["latency_ms"] >= 0


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.mark.live
def test_killed_redis_is_named_quickly(restore_settings: None, tmp_path: Path) -> None:
    port = _free_port()
    proc = subprocess.Popen(
        ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", str(tmp_path), "--save", ""],
        stdout=subprocess.DEVNULL,
    )
    try:
        os.environ["HITCURVE_REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
        client = _fresh_client()
        wait_until(lambda: client.get("/api/v1/health").status_code == 200, "the new Redis answering")
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
        started = time.monotonic()
        response = client.get("/api/v1/health")
        elapsed = time.monotonic() - started
    finally:
        if proc.poll() is None:
            proc.kill()
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["database"]["ok"] is True
    assert body["checks"]["redis"]["ok"] is False
    assert "Redis unreachable" in body["checks"]["redis"]["error"]
    assert elapsed < 10, "a dead Redis must be reported, not waited on"


@pytest.mark.live
def test_killed_postgresql_is_named_quickly(restore_settings: None) -> None:
    """A second private PostgreSQL instance is started, used, killed with SIGKILL mid-test."""
    inst = f"killtest-{os.getpid()}"
    script = str(ROOT / "scripts/services.sh")
    subprocess.run(["bash", script, "start", inst], check=True)
    run_dir = ROOT / ".run" / inst
    try:
        env = dict(line.split("=", 1) for line in (run_dir / "env").read_text().splitlines())
        os.environ["HITCURVE_DATABASE_URL"] = env["HITCURVE_DATABASE_URL"]
        client = _fresh_client()
        assert client.get("/api/v1/health").status_code == 200
        pid = int((run_dir / "pg" / "postmaster.pid").read_text().splitlines()[0])
        os.kill(pid, signal.SIGKILL)
        wait_until(lambda: not _alive(pid), "the killed postmaster gone", interval=0.05)
        started = time.monotonic()
        response = client.get("/api/v1/health")
        elapsed = time.monotonic() - started
    finally:
        get_engine().dispose()
        subprocess.run(["bash", script, "stop", inst], check=False)
        subprocess.run(
            ["rm", "-rf", str(run_dir), str(Path(os.path.realpath(run_dir / "pg")).parent)], check=False
        )
    assert response.status_code == 503
    body = response.json()
    assert body["checks"]["database"]["ok"] is False
    assert "PostgreSQL unreachable" in body["checks"]["database"]["error"]
    assert body["checks"]["redis"]["ok"] is True
    assert elapsed < 10
