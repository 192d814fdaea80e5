"""Property-based fuzzing of the live API: a real uvicorn server, its own OpenAPI schema, Schemathesis
generating valid and invalid requests for every operation. The only property checked is the
acceptance criterion: no answer is a 5xx (and the server stays up). Bounded by max_examples so it
runs in about a minute on a 2-core machine."""

import os
import socket
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import schemathesis
from aiosmtpd.controller import Controller
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error

from conftest import Inbox
from hitcurve_testing.snapshots import make_snapshot
from hitcurve_testing.waiting import REQUEST_TIMEOUT_S, wait_http

ROOT = Path(__file__).resolve().parents[2]
PASSWORD = "fuzzing passphrase 1"
MAX_EXAMPLES = int(os.environ.get("HITCURVE_FUZZ_EXAMPLES", "15"))

pytestmark = [pytest.mark.live, pytest.mark.slow]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def live_server(migrated_db: str) -> Iterator[str]:
    port = _free_port()
    # The routes that promise a mail answer 503 when no mail server listens: the fuzzed server
    # gets a real one (aiosmtpd on loopback), as every installation has.
    smtp_port = _free_port()
    sink = Controller(Inbox(), hostname="127.0.0.1", port=smtp_port)
    sink.start()
    # A cheaper argon2id: the fuzz run looks for 5xx, not at the KDF, and signs up many accounts.
    env = {
        **os.environ,
        "HITCURVE_SMTP_HOST": "127.0.0.1",
        "HITCURVE_SMTP_PORT": str(smtp_port),
        "HITCURVE_LOGIN_MAX_FAILURES_PER_IP": "1000000",
        "HITCURVE_ARGON2_MEMORY_KIB": "8192",
        "HITCURVE_ARGON2_TIME_COST": "1",
    }
    log = open(ROOT / ".run" / "fuzz-uvicorn.log", "wb")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "uvicorn",
            "hitcurve.main:app",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--log-level",
            "warning",
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        cwd=ROOT,
    )
    base = f"http://127.0.0.1:{port}"
    try:
        wait_http(base + "/api/v1/health", proc)  # a loaded machine imports the app slowly
        yield base
        assert proc.poll() is None, "the server died during the fuzz run"
    finally:
        proc.terminate()
        proc.wait(timeout=20)
        log.close()
        sink.stop()


@pytest.fixture(scope="module")
def credentials(live_server: str) -> dict[str, Any]:
    # generous: the first upload starts the server's decoder process (hitcurve.ingest.uploads)
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.crud.accounts import create_account

    email = f"fuzz-{uuid.uuid4().hex[:8]}@example.com"
    with get_sessionmaker()() as db:  # a confirmed account (sign-up confirms through a mailed link)
        create_account(db, email, PASSWORD, "", "Fuzz")
        db.commit()
    c = httpx.Client(base_url=live_server, timeout=120)
    r = c.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text
    csrf = c.cookies["hitcurve_csrf"]
    session = c.cookies["hitcurve_session"]
    h = {"X-CSRF-Token": csrf}
    key = c.post("/api/v1/agent-keys", json={"name": "fuzz"}, headers=h).json()["key"]
    token = c.post("/api/v1/api-tokens", json={"name": "fuzz", "scope": "read_write"}, headers=h).json()[
        "token"
    ]
    # some real data, so that not every id lookup is a miss
    c.post("/api/v1/agent/snapshots", json=make_snapshot(), headers={"Authorization": f"Bearer {key}"})
    c.post("/api/v1/clusters", json={"name": "fuzz"}, headers=h)
    return {
        "cookie": f"hitcurve_session={session}; hitcurve_csrf={csrf}",
        "csrf": csrf,
        "key": key,
        "token": token,
    }


def _schema() -> Any:
    """The app's own OpenAPI document (the same one the live server serves at /api/v1/openapi.json)."""
    from hitcurve.main import create_app

    loaded = schemathesis.openapi.from_dict(create_app().openapi())
    # Ending the fuzzer's own session would only turn the rest of the run into 401s.
    return loaded.exclude(path="/api/v1/auth/logout")


schema = _schema()


def test_served_schema_is_the_fuzzed_one(live_server: str) -> None:
    from hitcurve.main import create_app

    # the first request builds the 200 kB document: seconds on a loaded machine (httpx's default
    # 5 s read timeout failed there), so it gets the read timeout of any answer a test needs
    served = httpx.get(live_server + "/api/v1/openapi.json", timeout=REQUEST_TIMEOUT_S)
    assert served.json() == create_app().openapi()


@schema.parametrize()
@settings(max_examples=MAX_EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
def test_no_server_errors(case: Any, live_server: str, credentials: dict[str, Any]) -> None:
    path = case.path
    if path.startswith("/api/v1/agent/"):
        headers = {"Authorization": f"Bearer {credentials['key']}"}
    elif path.startswith("/api/v1/sizing/") or path.startswith("/api/v1/simulations"):
        headers = {"Authorization": f"Bearer {credentials['token']}"}
    else:
        headers = {"Cookie": credentials["cookie"], "X-CSRF-Token": credentials["csrf"]}
    started = time.monotonic()
    try:
        case.call_and_validate(base_url=live_server, headers=headers, checks=[not_a_server_error], timeout=30)
    finally:
        key = f"{case.method} {path}"
        n, t = _TIMES.get(key, (0, 0.0))
        _TIMES[key] = (n + 1, t + time.monotonic() - started)


_TIMES: dict[str, tuple[int, float]] = {}


def teardown_module() -> None:
    """Requests and seconds per operation, for tuning the example budget (.run/fuzz-times.txt)."""
    lines = [
        f"{t:7.2f} s {n:5d} requests  {op}" for op, (n, t) in sorted(_TIMES.items(), key=lambda kv: -kv[1][1])
    ]
    (ROOT / ".run" / "fuzz-times.txt").write_text("\n".join(lines) + "\n")
