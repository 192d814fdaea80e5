"""A report recipient confirms by mail before any report is sent to it: a subscription to another
address than the subscriber's own is pending, a confirmation mail with a signed link goes to the
address, and following the link (no log-in) confirms it. A changed address starts over, an old
or altered link confirms nothing, resending waits a while and an organization's confirmation
mails per day are capped. The worker's side (nothing dispatched to a pending recipient) is
worker/tests/test_reports.py's."""

import re
import socket
from email.message import EmailMessage

import pytest
from fastapi.testclient import TestClient

from conftest import Account, Inbox
from hitcurve.crud import operations
from hitcurve.reports.message import unsubscribe_token

LINK = re.compile(r"https?://\S+/reports/confirm/([A-Za-z0-9_.-]+)")


def _token(m: EmailMessage) -> str:
    body = str(m.get_body(preferencelist=("plain",)).get_content())  # type: ignore[union-attr]
    found = LINK.findall(body)
    assert len(found) == 1, body
    return str(found[0])


def test_a_recipient_confirms_by_mail_before_anything_is_sent(
    account: Account, anon: TestClient, inbox: Inbox
) -> None:
    # the subscriber's own address was proved at sign-up: confirmed at once, no mail
    own = account.post("/api/v1/report-subscriptions", json={"email": account.email}).json()
    assert own["confirmed_at"] is not None and own["confirmation_sent_at"] is None
    assert inbox.to(account.email) == []

    r = account.post("/api/v1/report-subscriptions", json={"email": "ops@example.com"})
    assert r.status_code == 201, r.text
    sub = r.json()
    assert sub["confirmed_at"] is None and sub["confirmation_sent_at"] is not None
    [m] = inbox.to("ops@example.com")
    assert m["Subject"] == "Confirm the weekly Hitcurve report"
    text = str(m.get_body(preferencelist=("plain",)).get_content())  # type: ignore[union-attr]
    assert account.email in text and "all clusters" in text and "Acme" in text
    token = _token(m)

    # resending at once waits
    again = account.post(f"/api/v1/report-subscriptions/{sub['id']}/confirmation")
    assert again.status_code == 429 and again.json()["code"] == "confirmation_recently_sent"
    assert 0 < int(again.headers["Retry-After"]) <= operations.CONFIRMATION_RESEND_S
    assert len(inbox.to("ops@example.com")) == 1

    # altered, or made for another purpose (the unsubscribe link): nothing confirmed
    client = anon  # no session: the recipient need not have an account
    assert client.post(f"/api/v1/reports/confirm/{token[:-2]}xx").status_code == 404
    wrong = client.post(f"/api/v1/reports/confirm/{unsubscribe_token(sub['id'])}")
    assert wrong.status_code == 404 and wrong.json()["code"] == "confirmation_invalid"
    assert account.get(f"/api/v1/report-subscriptions/{sub['id']}").json()["confirmed_at"] is None

    ok = client.post(f"/api/v1/reports/confirm/{token}")
    assert ok.status_code == 200, ok.text
    assert ok.json() == {
        "subscription_id": sub["id"],
        "email": "ops@example.com",
        "org_name": "Acme",
        "about": "all clusters",
        "already": False,
    }
    assert client.post(f"/api/v1/reports/confirm/{token}").json()["already"] is True
    confirmed = account.get(f"/api/v1/report-subscriptions/{sub['id']}").json()
    assert confirmed["confirmed_at"] is not None
    done = account.post(f"/api/v1/report-subscriptions/{sub['id']}/confirmation")
    assert done.status_code == 409 and done.json()["code"] == "already_confirmed"

    # a new address is a new recipient: pending again, its own mail; the old link is spent
    p = account.patch(f"/api/v1/report-subscriptions/{sub['id']}", json={"email": "new@example.com"})
    assert p.status_code == 200 and p.json()["confirmed_at"] is None
    [m2] = inbox.to("new@example.com")
    assert client.post(f"/api/v1/reports/confirm/{token}").status_code == 404
    # changing anything else keeps the confirmation state and sends nothing
    assert account.patch(f"/api/v1/report-subscriptions/{sub['id']}", json={"hour_utc": 9}).status_code == 200
    assert len(inbox.to("new@example.com")) == 1
    assert client.post(f"/api/v1/reports/confirm/{_token(m2)}").json()["email"] == "new@example.com"


def test_confirmation_mails_per_organization_are_capped(
    account: Account, other: Account, inbox: Inbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(operations, "MAX_CONFIRMATION_MAILS_PER_DAY", 3)
    codes = [
        account.post("/api/v1/report-subscriptions", json={"email": f"c{i}@example.com"}).status_code
        for i in range(3)
    ]
    assert codes == [201, 201, 201]
    r = account.post("/api/v1/report-subscriptions", json={"email": "c3@example.com"})
    assert r.status_code == 429 and r.json()["code"] == "too_many_confirmations"
    assert len(account.get("/api/v1/report-subscriptions").json()) == 3  # nothing stored for it
    assert inbox.to("c3@example.com") == []
    # the subscriber's own address needs no mail; another organization has its own count
    assert account.post("/api/v1/report-subscriptions", json={"email": account.email}).status_code == 201
    assert other.post("/api/v1/report-subscriptions", json={"email": "o@example.com"}).status_code == 201


def test_no_mail_server_no_pending_recipient(account: Account, monkeypatch: pytest.MonkeyPatch) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # nothing listens here
    monkeypatch.setenv("HITCURVE_SMTP_HOST", "127.0.0.1")
    monkeypatch.setenv("HITCURVE_SMTP_PORT", str(port))
    r = account.post("/api/v1/report-subscriptions", json={"email": "ops@example.com"})
    assert r.status_code == 503 and r.json()["code"] == "mail_unavailable"
    assert account.get("/api/v1/report-subscriptions").json() == []
