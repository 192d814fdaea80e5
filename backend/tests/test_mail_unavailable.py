"""With the mail server down, nothing that promises a mail says it was sent: sign-up, password
reset, invitation and the test report answer 503 mail_unavailable naming the server and the
failure, change nothing, and give the same answer whatever the address (a taken and a new e-mail
alike); with a real SMTP server (aiosmtpd on loopback) the same requests go through."""

import socket
import uuid
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import func, select

from conftest import Account, Inbox
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import Invitation, User


@pytest.fixture
def mail_down(monkeypatch: pytest.MonkeyPatch) -> Iterator[int]:
    """The SMTP settings name a loopback port nothing listens on."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("HITCURVE_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("HITCURVE_SMTP_PORT", str(port))
    yield port


def _down(r, port: int) -> None:
    assert r.status_code == 503, r.text
    body = r.json()
    assert body["code"] == "mail_unavailable"
    assert f"the mail server 127.0.0.1:{port} does not answer (ConnectionRefusedError" in body["detail"]
    assert "Nothing was changed" in body["detail"] and "HITCURVE_SMTP_HOST" in body["detail"]


def _signup(c: TestClient, email: str) -> object:
    return c.post(
        "/api/v1/auth/signup",
        json={"email": email, "password": "a long and unusual passphrase", "org_name": "Mailless"},
    )


def test_nothing_says_sent_while_the_mail_server_is_down(app, account: Account, mail_down: int) -> None:
    c = TestClient(app)
    new = f"n{uuid.uuid4().hex[:10]}@example.com"
    answers = []
    for email in (account.email, new):
        r = _signup(c, email)
        _down(r, mail_down)
        answers.append((r.status_code, r.content))
    assert answers[0] == answers[1]  # a taken and a new address: one answer
    r = c.post("/api/v1/auth/password-reset", json={"email": account.email})
    _down(r, mail_down)
    _down(account.post("/api/v1/org/invitations", json={"email": new, "role": "member"}), mail_down)
    _down(account.post("/api/v1/reports/test", json={}), mail_down)
    assert account.get("/api/v1/org/invitations").json() == []
    with get_sessionmaker()() as db:
        assert db.execute(select(func.count()).select_from(User).where(User.email == new)).scalar() == 0
        # this invitation only: the database is shared with the worker's other tests, which invite
        n = select(func.count()).select_from(Invitation).where(Invitation.email == new.lower())
        assert db.execute(n).scalar() == 0


def test_the_same_requests_go_through_with_a_mail_server(app, account: Account, inbox: Inbox) -> None:
    new = f"n{uuid.uuid4().hex[:10]}@example.com"
    assert _signup(TestClient(app), new).status_code == 202
    assert (
        account.post("/api/v1/org/invitations", json={"email": f"i-{new}", "role": "member"}).status_code
        == 201
    )
    assert [m["Subject"] for m in inbox.to(new)] == ["Confirm your e-mail for Hitcurve"]
    assert len(inbox.to(f"i-{new}")) == 1
