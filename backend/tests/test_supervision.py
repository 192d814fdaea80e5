"""The service's processes as the scripts run them (scripts/supervise.sh: supervisord with the
API, the ingest and batch Celery workers and beat) on a database and a Redis index of their
own: /health reports the workers' heartbeats per queue, a SIGKILLed worker and API are
restarted (its log appended, the kill recorded), /health says degraded and names the queue
while no worker consumes it, and `status` lists every process."""

import json
import os
import signal
import socket
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import create_engine, text

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
SUPERVISE = ROOT / "scripts" / "supervise.sh"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Stack:
    def __init__(self, run_dir: Path, inst: str, api: str, env: dict[str, str]) -> None:
        self.run_dir, self.inst, self.api, self.env = run_dir, inst, api, env

    def sh(self, *args: str) -> str:
        out = subprocess.run(
            ["bash", str(SUPERVISE), *args], env=self.env, capture_output=True, text=True, timeout=120
        )
        assert out.returncode == 0 or args[0] == "ctl", out.stdout + out.stderr
        return out.stdout

    def pid(self, program: str) -> int:
        return int(self.sh("ctl", self.inst, "pid", program).strip() or 0)

    def health(self) -> dict[str, Any]:
        r = httpx.get(self.api + "/api/v1/health", timeout=10)
        assert r.status_code == 200, r.text
        return dict(r.json())

    def wait(self, what: str, cond: Any, timeout: float = 90) -> Any:
        deadline = time.monotonic() + timeout
        last: Any = None
        while time.monotonic() < deadline:
            try:
                last = cond()
                if last:
                    return last
            except (httpx.TransportError, ValueError, AssertionError) as exc:
                last = exc
            time.sleep(0.5)
        logs = self.run_dir / self.inst / "logs"
        tails = {p.name: p.read_text()[-2000:] for p in logs.glob("*.log")}
        raise AssertionError(f"timed out waiting for {what}: {last!r}\n{json.dumps(tails, indent=1)}")


@pytest.fixture(scope="module")
def stack(migrated_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    base = os.environ["HITCURVE_DATABASE_URL"].rsplit("/", 1)[0]
    db = f"hitcurve_sup_{uuid.uuid4().hex[:8]}"
    admin = create_engine(base + "/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{db}"'))
    redis_base = os.environ["HITCURVE_REDIS_URL"].rsplit("/", 1)[0]
    run_dir = tmp_path_factory.mktemp("run")
    inst = "sup"
    (run_dir / inst).mkdir()
    env_vars = {
        "HITCURVE_DATABASE_URL": f"{base}/{db}",
        "HITCURVE_REDIS_URL": f"{redis_base}/{2 + uuid.uuid4().int % 13}",
        "HITCURVE_WORKER_HEARTBEAT_S": "1",
        "HITCURVE_WORKER_STALE_S": "4",
        "HITCURVE_API_WORKERS": "1",
        "HITCURVE_WORKER_CONCURRENCY": "1",
    }
    (run_dir / inst / "env").write_text("".join(f"{k}={v}\n" for k, v in env_vars.items()))
    port = _free_port()
    env = {**os.environ, **env_vars, "HITCURVE_RUN_DIR": str(run_dir), "HITCURVE_API_PORT": str(port)}
    subprocess.run(
        [str(ROOT / ".venv/bin/alembic"), "upgrade", "head"],
        env=env,
        cwd=ROOT,
        check=True,
        capture_output=True,
        timeout=120,
    )
    s = Stack(run_dir, inst, f"http://127.0.0.1:{port}", env)
    s.sh("start", inst)
    try:
        yield s
    finally:
        s.sh("stop", inst)
        with admin.connect() as conn:
            conn.execute(text(f'DROP DATABASE IF EXISTS "{db}" WITH (FORCE)'))
        admin.dispose()


def test_killed_worker_is_restarted_and_health_follows(stack: Stack) -> None:
    # API, worker and beat run; the worker's heartbeat reaches /health through the broker
    body = stack.wait(
        "a heartbeat on each queue", lambda: (h := stack.health())["checks"]["workers"]["ok"] and h
    )
    assert body["status"] == "ok", body
    assert body["checks"]["workers"]["consumers"] == {"ingest": 1, "batch": 1}
    queue = body["checks"]["queue"]
    assert (queue["ok"], queue["depth"], queue["oldest_pending_s"]) == (True, 0, 0.0)
    assert {k: (v["depth"], v["oldest_pending_s"]) for k, v in queue["queues"].items()} == {
        "ingest": (0, 0.0),
        "batch": (0, 0.0),
    }
    assert queue["upload_to_curve_s"]["snapshots"] == 0 and queue["upload_to_curve_s"]["p95"] is None
    # supervisord calls a program RUNNING once it has stayed up for startsecs (3 s); on a fast
    # start /health answers ok before that, so the status is waited for, not read once
    def all_running() -> bool:
        lines = stack.sh("status", stack.inst).splitlines()
        return all(
            any(line.startswith(p) and "RUNNING" in line for line in lines)
            for p in ("api", "worker", "worker-batch", "beat")
        )

    stack.wait("api, worker, worker-batch and beat RUNNING under supervisord", all_running)

    # The heartbeat bootstep starts before the consumer finishes connecting: wait for the first
    # worker's "ready" so its start-up is in the log before it is killed.
    logs = stack.run_dir / stack.inst / "logs"
    stack.wait("the first worker ready", lambda: (logs / "worker.log").read_text().count(" ready.") >= 1)

    # SIGKILL the Celery master and the API: supervisord starts new ones
    first, api = stack.pid("worker"), stack.pid("api")
    os.kill(first, signal.SIGKILL)
    os.kill(api, signal.SIGKILL)
    second = stack.wait("a new worker", lambda: (p := stack.pid("worker")) not in (0, first) and p)
    stack.wait("a new API process", lambda: stack.pid("api") not in (0, api))
    stack.wait("the new worker's heartbeat", lambda: stack.health()["checks"]["workers"]["ok"])
    assert "terminated by SIGKILL" in (logs / "supervisord.log").read_text()
    # the log was appended to, not overwritten: both workers' "ready" lines are in it
    stack.wait("two start-ups in worker.log", lambda: (logs / "worker.log").read_text().count(" ready.") >= 2)
    assert second != first

    # no ingest worker: /health still answers (the API serves) but says degraded, and which queue
    stack.sh("ctl", stack.inst, "stop", "worker")
    body = stack.wait("degraded", lambda: (h := stack.health())["status"] == "degraded" and h)
    assert body["checks"]["workers"]["ok"] is False and body["checks"]["workers"]["consumers"]["ingest"] == 0
    assert "ingest queue" in body["checks"]["workers"]["error"]
    # no worker at all
    stack.sh("ctl", stack.inst, "stop", "worker-batch")
    body = stack.wait("no worker", lambda: (h := stack.health())["checks"]["workers"]["alive"] == 0 and h)
    assert "no worker heartbeat" in body["checks"]["workers"]["error"]
    assert body["checks"]["database"]["ok"] and body["checks"]["redis"]["ok"]
    stack.sh("ctl", stack.inst, "start", "worker")
    stack.sh("ctl", stack.inst, "start", "worker-batch")
    stack.wait("ok again", lambda: stack.health()["status"] == "ok")
