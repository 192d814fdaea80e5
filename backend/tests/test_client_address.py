"""The client address behind the log-in limits, against the API as the scripts start it
(`python -m hitcurve.serve`, a real uvicorn on loopback): X-Forwarded-For from an untrusted peer
buys no fresh budget and cannot log in while the address is locked, and a locked address never
blocks the demo's own setup (scripts/demo_setup.py)."""

import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from live_api import live_api
from sqlalchemy import delete

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import LoginAttempt

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
LIMIT = 5


@pytest.fixture(scope="module")
def server(migrated_db: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with get_sessionmaker()() as db:  # earlier modules in this worker's database failed log-ins too
        db.execute(delete(LoginAttempt))  # (per address, and towards the global limit)
        db.commit()
    try:
        with live_api(tmp_path_factory.mktemp("serve"), HITCURVE_LOGIN_MAX_FAILURES_PER_IP=str(LIMIT)) as api:
            yield api.url
    finally:
        forget_loopback_failures()  # leave no lock on 127.0.0.1 for later tests


def forget_loopback_failures() -> None:
    with get_sessionmaker()() as db:
        db.execute(delete(LoginAttempt).where(LoginAttempt.ip == "127.0.0.1"))
        db.commit()


def test_spoofed_forwarded_for_gets_no_fresh_budget(server: str, account) -> None:  # type: ignore[no-untyped-def]
    with httpx.Client(base_url=server + "/api/v1", timeout=30) as c:
        codes = []
        for i in range(LIMIT * 3):
            r = c.post(
                "/auth/login",
                json={"email": f"x{i}-{uuid.uuid4().hex[:6]}@example.com", "password": "guess"},
                headers={"X-Forwarded-For": f"198.51.100.{i + 1}"},
            )
            codes.append(r.status_code)
        assert codes[:LIMIT] == [401] * LIMIT
        assert set(codes[LIMIT:]) == {429}, codes
        # the right password with yet another spoofed address: still locked
        r = c.post(
            "/auth/login",
            json={"email": account.email, "password": "correct horse battery staple"},
            headers={"X-Forwarded-For": "203.0.113.77", "X-Real-IP": "203.0.113.77"},
        )
        assert r.status_code == 429 and r.json()["code"] == "too_many_attempts"
        assert int(r.headers["Retry-After"]) > 0


def test_locked_address_does_not_block_demo_setup(server: str, tmp_path: Path) -> None:
    with httpx.Client(base_url=server + "/api/v1", timeout=30) as c:
        for i in range(LIMIT):
            c.post("/auth/login", json={"email": f"y{i}@example.com", "password": "guess"})
        assert c.post("/auth/login", json={"email": "y@example.com", "password": "g"}).status_code == 429
    for _ in range(2):  # first run creates the demo owner, the second logs in again
        done = subprocess.run(
            [sys.executable, str(ROOT / "scripts" / "demo_setup.py"), "account", server, str(tmp_path)],
            capture_output=True,
            text=True,
            timeout=120,
            cwd=ROOT,
        )
        assert done.returncode == 0, done.stdout + done.stderr
    assert (tmp_path / "agent.key").read_text().startswith("hca_")
