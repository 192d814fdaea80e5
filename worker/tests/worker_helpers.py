"""Helpers for the worker tests (imported by conftest.py and the test modules)."""

from __future__ import annotations

import contextlib
import gzip
import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from hitcurve_testing.waiting import DEADLINE_S, wait_until

ROOT = Path(__file__).resolve().parents[2]


def private_redis_url(index: int) -> str:
    base = os.environ["HITCURVE_REDIS_URL"].rsplit("/", 1)[0]
    return f"{base}/{index}"


def clear_caches() -> None:
    from hitcurve.core.config import get_settings
    from hitcurve.core.db import get_engine, get_sessionmaker
    from hitcurve.core.tasks import get_celery

    get_engine().dispose()
    for cached in (get_settings, get_engine, get_sessionmaker, get_celery):
        cached.cache_clear()


@dataclass
class WorkerProc:
    proc: subprocess.Popen[bytes]
    env: dict[str, str]
    log: Path

    def kill(self) -> None:
        """SIGKILL the worker and its pool processes (its own process group)."""
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)

    def stop(self) -> None:
        if self.proc.poll() is None:
            try:
                os.killpg(self.proc.pid, signal.SIGTERM)
                self.proc.wait(timeout=20)
            except (ProcessLookupError, subprocess.TimeoutExpired):
                self.kill()


def start_worker(
    env_extra: dict[str, str], name: str, concurrency: int = 2, queues: str | None = None
) -> WorkerProc:
    """A real `celery worker` in its own process group; queues: its -Q (else both queues)."""
    env = {**os.environ, **env_extra}
    log = ROOT / ".run" / "test" / f"worker-{name}.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    out = open(log, "ab")  # noqa: SIM115 - kept open for the child's lifetime
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "celery",
            "-A",
            "hitcurve_worker.celery_app",
            "worker",
            "--loglevel=INFO",
            f"--concurrency={concurrency}",
            *(["-Q", queues] if queues else []),
            "--without-gossip",
            "--without-mingle",
            "--without-heartbeat",
            "-n",
            f"{name}-{uuid.uuid4().hex[:6]}@%h",
        ],
        stdout=out,
        stderr=subprocess.STDOUT,
        env=env,
        cwd=ROOT,
        start_new_session=True,
    )
    out.close()
    from celery import Celery

    probe = Celery("probe", broker=env["HITCURVE_REDIS_URL"], backend=env["HITCURVE_REDIS_URL"])
    deadline = time.monotonic() + DEADLINE_S  # a loaded machine starts a worker slowly
    try:
        while time.monotonic() < deadline:
            if proc.poll() is not None:
                raise RuntimeError(f"worker exited with {proc.returncode}; see {log}")
            if probe.control.ping(timeout=1.0):
                break
        else:
            raise RuntimeError(f"worker did not answer a ping within {DEADLINE_S:.0f} s; see {log}")
    except Exception:
        os.killpg(proc.pid, signal.SIGKILL)
        raise
    finally:
        probe.close()
    return WorkerProc(proc, env, log)


@dataclass
class Org:
    id: uuid.UUID
    agent_key: str


def make_org(name: str = "Worker Test Org") -> Org:
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.core.security import sha256_hex
    from hitcurve.models import AgentKey, Organization

    secret = "hca_" + uuid.uuid4().hex + uuid.uuid4().hex
    with get_sessionmaker()() as db:
        org = Organization(name=name)
        db.add(org)
        db.flush()
        db.add(AgentKey(org_id=org.id, name="test agent", prefix=secret[:8], key_hash=sha256_hex(secret)))
        db.commit()
        return Org(org.id, secret)


def upload(client: Any, org: Org, snapshot: dict[str, Any], kind: str = "snapshots") -> Any:
    body = gzip.compress(json.dumps(snapshot).encode())
    headers = {
        "Authorization": f"Bearer {org.agent_key}",
        "Content-Type": "application/json",
        "Content-Encoding": "gzip",
    }
    return client.post(f"/api/v1/agent/{kind}", content=body, headers=headers)


def wait_for(pred: Callable[[], Any], timeout: float = DEADLINE_S, what: str = "condition") -> Any:
    return wait_until(pred, what, timeout)
