"""Test fixtures shared by every Python test: real private PostgreSQL and Redis, and a fresh
database per test session.

`make test` starts the private "test" instance and exports its URLs. Running pytest directly
works too: the instance is started here when the environment does not name one.

Under pytest-xdist (`pytest -n N`, as scripts/test.sh runs it) every worker process is a session
of its own: its own database (below) and its own Redis server, so no worker sees another's keys,
queues or Celery workers.
"""

from __future__ import annotations

import os
import subprocess
import time
import uuid
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


def _start_worker_redis(name: str) -> subprocess.Popen[bytes]:
    """A Redis server for one xdist worker on a free loopback port; it dies with this process
    (PR_SET_PDEATHSIG), so a killed worker leaves none behind."""
    import ctypes
    import signal
    import socket

    def die_with_parent() -> None:
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # 1: PR_SET_PDEATHSIG

    instance = os.environ.get("HITCURVE_RUN_INSTANCE", "test")
    data = ROOT / ".run" / instance / f"redis-{name}"
    data.mkdir(parents=True, exist_ok=True)
    for _ in range(5):  # the port is free when chosen; another process may take it first
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        proc = subprocess.Popen(
            ["redis-server", "--bind", "127.0.0.1", "--port", str(port), "--dir", str(data),
             "--save", "", "--appendonly", "no", "--logfile", str(data / "redis.log")],
            stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT, preexec_fn=die_with_parent,
        )
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
            except OSError:
                time.sleep(0.05)
                continue
            os.environ["HITCURVE_REDIS_URL"] = f"redis://127.0.0.1:{port}/0"
            return proc
        proc.kill()
        proc.wait()
    raise RuntimeError(f"no Redis server for xdist worker {name}; see {data / 'redis.log'}")


XDIST_WORKER = os.environ.get("PYTEST_XDIST_WORKER")  # "gw0", "gw1", … under pytest -n N
WORKER_REDIS = _start_worker_redis(XDIST_WORKER) if XDIST_WORKER else None

# Each session works in a database of its own, created here and dropped at the end, so two runs
# (or a crashed earlier run, or two xdist workers) never see each other's rows.
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
    if WORKER_REDIS is not None:
        WORKER_REDIS.terminate()
        WORKER_REDIS.wait(timeout=30)
    if XDIST_WORKER is None and _module_seconds:
        _write_module_seconds()


# Every test of the agent's live folder runs the real agent against real memcached processes
# (`live`: make check leaves them out), but the runner of its C units.
AGENT_LIVE = ROOT / "profiler-agent" / "tests" / "agent"


def pytest_itemcollected(item: pytest.Item) -> None:
    if item.path.parent == AGENT_LIVE and item.path.name != "test_agent_units.py":
        item.add_marker(pytest.mark.live)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under `-n N --dist worksteal` the long modules start first, spread over the workers
    (hitcurve_testing.schedule; their lengths from testing/module-seconds.json). Every worker
    orders its identical collection the same way, as xdist requires."""
    workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0"))
    # xdist sets a worker's own --dist to "no": the controller's comes in its workerinput
    if workers < 2 or getattr(config, "workerinput", {}).get("hitcurve_dist") != "worksteal":
        return
    import json

    from hitcurve_testing.schedule import worksteal_order

    seconds = json.loads((ROOT / "testing" / "module-seconds.json").read_text())["seconds"]
    items[:] = worksteal_order(items, lambda item: item.nodeid.split("::")[0], seconds, workers)


def pytest_configure_node(node) -> None:  # type: ignore[no-untyped-def]  # xdist's hook, in the controller
    node.workerinput["hitcurve_dist"] = node.config.getoption("dist")


_module_seconds: dict[str, float] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if XDIST_WORKER is None:  # the controller (or a run without xdist) sees every report
        module = report.nodeid.split("::")[0]
        _module_seconds[module] = _module_seconds.get(module, 0.0) + report.duration


def _write_module_seconds() -> None:
    """This run's seconds per module beside the instance's data, in the form of
    testing/module-seconds.json (copy its "seconds" there to refresh the order)."""
    import json

    path = ROOT / ".run" / os.environ.get("HITCURVE_RUN_INSTANCE", "test") / "module-seconds.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = sorted(_module_seconds.items(), key=lambda kv: -kv[1])
    path.write_text(json.dumps({"seconds": {m: round(s) for m, s in rows if s >= 5}}, indent=1) + "\n")


@pytest.fixture(scope="session")
def migrated_db() -> str:
    """The session database upgraded to the newest migration; returns its URL."""
    from alembic import command
    from alembic.config import Config

    command.upgrade(Config(str(ROOT / "alembic.ini")), "head")
    return os.environ["HITCURVE_DATABASE_URL"]
