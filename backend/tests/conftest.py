"""Backend test helpers: an app on the migrated session database, accounts with their own cookie
jars, agent keys / API tokens created through the API itself, and an SMTP server (aiosmtpd on
loopback) whose inbox a test reads."""

import json
import os
import re
import socket
import sys
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from email import message_from_bytes, policy
from email.message import EmailMessage
from pathlib import Path
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from fastapi.testclient import TestClient

# Test modules import helpers from here (`from conftest import …`) under --import-mode=importlib.
sys.path.insert(0, str(Path(__file__).resolve().parent))

# Failed log-ins from the test client's one address would otherwise throttle unrelated tests;
# the throttling test lowers this limit itself.
os.environ.setdefault("HITCURVE_LOGIN_MAX_FAILURES_PER_IP", "1000000")
# Likewise the sign-ups per address (counted in Redis, which outlives a test session) and the
# request rates of one token or key; the tests of those limits lower them themselves.
os.environ.setdefault("HITCURVE_SIGNUP_MAX_PER_IP_PER_HOUR", "1000000")
os.environ.setdefault("HITCURVE_API_TOKEN_RATE_PER_S", "1000000")
os.environ.setdefault("HITCURVE_API_TOKEN_BURST", "1000000")
os.environ.setdefault("HITCURVE_AGENT_KEY_RATE_PER_S", "1000000")
os.environ.setdefault("HITCURVE_AGENT_KEY_BURST", "1000000")
os.environ.setdefault("HITCURVE_AGENT_KEY_DECODED_BYTES_PER_MINUTE", str(1 << 40))
# Tests change rows and read them back at once; the hot-path caches are tested on their own
# (test_caches.py) with a time to live.
os.environ.setdefault("HITCURVE_HOT_CACHE_TTL_S", "0")
# A cheaper argon2id keeps the many sign-ups fast; test_auth checks the production parameters.
os.environ.setdefault("HITCURVE_ARGON2_MEMORY_KIB", "8192")
os.environ.setdefault("HITCURVE_ARGON2_TIME_COST", "1")

PASSWORD = "correct horse battery staple"


def dashboard_cases(name: str) -> list[dict[str, Any]]:
    """The cases of one of the dashboard's shared tables (frontend/src/lib/<name>.cases.json),
    which its vitest suite checks too: the backend writes those texts exactly as it does."""
    path = Path(__file__).resolve().parents[2] / "frontend" / "src" / "lib" / f"{name}.cases.json"
    cases: list[dict[str, Any]] = json.loads(path.read_text())["cases"]
    assert len(cases) > 5
    return cases


def _fresh_app() -> Any:
    from hitcurve.core.config import get_settings
    from hitcurve.core.db import get_engine, get_sessionmaker
    from hitcurve.core.tasks import get_celery
    from hitcurve.main import create_app

    for cached in (get_settings, get_engine, get_sessionmaker, get_celery):
        cached.cache_clear()
    return create_app()


@pytest.fixture(scope="session")
def app(migrated_db: str) -> Any:
    return _fresh_app()


@dataclass
class Account:
    """One logged-in browser: its own TestClient (cookie jar) sending the CSRF header."""

    client: TestClient
    email: str
    me: dict[str, Any]
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def org_id(self) -> str:
        return str(self.me["org_id"])

    def h(self) -> dict[str, str]:
        return {"X-CSRF-Token": self.client.cookies.get("hitcurve_csrf") or ""}

    def get(self, url: str, **kw: Any) -> Any:
        return self.client.get(url, **kw)

    def post(self, url: str, **kw: Any) -> Any:
        return self.client.post(url, headers={**self.h(), **kw.pop("headers", {})}, **kw)

    def patch(self, url: str, **kw: Any) -> Any:
        return self.client.patch(url, headers={**self.h(), **kw.pop("headers", {})}, **kw)

    def delete(self, url: str, **kw: Any) -> Any:
        return self.client.delete(url, headers={**self.h(), **kw.pop("headers", {})}, **kw)

    def agent_key(self, name: str = "agent") -> str:
        r = self.post("/api/v1/agent-keys", json={"name": name})
        assert r.status_code == 201, r.text
        return str(r.json()["key"])

    def api_token(self, scope: str = "read") -> str:
        r = self.post("/api/v1/api-tokens", json={"name": "autoscaler", "scope": scope})
        assert r.status_code == 201, r.text
        return str(r.json()["token"])


def new_account(app: Any, org_name: str = "Acme", email: str | None = None) -> Account:
    """A confirmed account made as the operator makes one (crud.accounts.create_account: sign-up
    through the mailed link is test_auth's), logged in through the API."""
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.crud.accounts import create_account

    client = TestClient(app)
    email = email or f"u{uuid.uuid4().hex[:12]}@example.com"
    with get_sessionmaker()() as db:
        create_account(db, email, PASSWORD, "", org_name)
        db.commit()
    r = client.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
    assert r.status_code == 200, r.text
    return Account(client=client, email=email, me=r.json())


@pytest.fixture
def account(app: Any) -> Iterator[Account]:
    acc = new_account(app)
    yield acc
    acc.client.close()


@pytest.fixture
def other(app: Any) -> Iterator[Account]:
    """A second, unrelated organization."""
    acc = new_account(app, org_name="Other Corp")
    yield acc
    acc.client.close()


@pytest.fixture
def anon(app: Any) -> Iterator[TestClient]:
    with TestClient(app) as c:
        yield c


def bearer(secret: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {secret}"}


def upload_snapshot(
    account: Account, address: str = "10.0.0.7:11211", **kw: Any
) -> tuple[str, dict[str, Any]]:
    """Upload a synthetic snapshot with a fresh agent key; returns (server id, snapshot)."""
    from hitcurve_testing.snapshots import make_snapshot

    key = account.extra.get("agent_key") or account.agent_key()
    account.extra["agent_key"] = key
    snap = make_snapshot(address, **kw)
    r = account.client.post("/api/v1/agent/snapshots", json=snap, headers=bearer(key))
    assert r.status_code == 202, r.text
    server = next(s for s in account.get("/api/v1/servers").json() if s["address"] == address)
    return str(server["id"]), snap


def insert_server_curve(
    org_id: str, server_id: str, snapshot: dict[str, Any], xs: list[float], ys: list[float], **kw: Any
) -> None:
    """What the worker writes for a processed snapshot."""
    from datetime import datetime

    from hitcurve.core.db import get_sessionmaker
    from hitcurve.models import ServerCurve

    with get_sessionmaker()() as db:
        db.add(
            ServerCurve(
                org_id=uuid.UUID(org_id),
                server_id=uuid.UUID(server_id),
                snapshot_id=uuid.UUID(snapshot["snapshot_id"]),
                window_end=datetime.fromisoformat(snapshot["window"]["end"]),
                sizes_bytes=xs,
                hit_ratio_proportional=kw.pop("proportional", ys),
                current_bytes=kw.pop("current_bytes", int(xs[len(xs) // 2])),
                measured_hit_ratio=snapshot["measured"]["hit_ratio"],
                **kw,
            )
        )
        db.commit()


@pytest.fixture
def private_queue(monkeypatch: pytest.MonkeyPatch) -> Iterator[Any]:
    """Publish to a queue of this test's own, so no Celery worker of a concurrent run consumes
    the messages before the test reads them from Redis; yields a function listing them."""
    import json

    import redis

    from hitcurve.core.config import get_settings

    name = f"hitcurve-test-{uuid.uuid4().hex[:8]}"
    monkeypatch.setattr(get_settings(), "celery_ingest_queue", name)
    monkeypatch.setattr(get_settings(), "celery_batch_queue", name)
    client = redis.Redis.from_url(get_settings().redis_url)
    yield lambda: [json.loads(m) for m in client.lrange(name, 0, -1)]
    client.delete(name)


class Inbox:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd API
        msg = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        msg["X-Envelope-To"] = ",".join(envelope.rcpt_tos)
        self.messages.append(msg)
        return "250 OK"

    def to(self, addr: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["X-Envelope-To"] == addr]

    def link(self, addr: str, path: str) -> str:
        """The secret of the newest link to `path` mailed to addr."""
        body = str(self.to(addr)[-1].get_body(preferencelist=("plain",)).get_content())  # type: ignore[union-attr]
        m = re.findall(rf"https?://\S+{re.escape(path)}([A-Za-z0-9_-]+)", body)
        assert m, body
        return str(m[-1])


@pytest.fixture
def inbox(monkeypatch: pytest.MonkeyPatch) -> Iterator[Inbox]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    box = Inbox()
    ctl = Controller(box, hostname="127.0.0.1", port=port)
    ctl.start()
    monkeypatch.setenv("HITCURVE_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("HITCURVE_SMTP_PORT", str(port))
    yield box
    ctl.stop()


@pytest.fixture
def keep_payloads(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every upload keeps the agent's document (HITCURVE_STORE_PAYLOADS=all; the default keeps
    only flagged windows'), for tests that read it back. The store path reads the setting per
    upload, so clearing the settings' cache is enough."""
    from hitcurve.core.config import get_settings

    monkeypatch.setenv("HITCURVE_STORE_PAYLOADS", "all")
    get_settings.cache_clear()
    yield
    monkeypatch.delenv("HITCURVE_STORE_PAYLOADS")
    get_settings.cache_clear()
