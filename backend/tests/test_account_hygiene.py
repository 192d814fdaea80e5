"""Account hygiene against the real database and a real SMTP server (aiosmtpd on loopback):
weak passwords refused, Secure cookies over HTTPS, invitations the invited user accepts (and that
answer the same for unknown e-mails), password reset by e-mail (single use, expiring, no user
enumeration), and the global log-in limit."""

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from fastapi.testclient import TestClient
from sqlalchemy import select, update

from conftest import PASSWORD, Account, Inbox, new_account
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.crud import accounts
from hitcurve.models import Invitation, PasswordReset, SignupRequest, User

NEW_PASSWORD = "plum orbit tadpole seventy"


@pytest.mark.parametrize(
    "weak",
    ["password123", " " * 10, "qwertyuiop12", "aaaaaaaaaaaa", "iloveyou2024", "1234567890"],
)
def test_weak_passwords_are_refused_at_signup(anon: TestClient, weak: str) -> None:
    r = anon.post(
        "/api/v1/auth/signup",
        json={"email": f"w{uuid.uuid4().hex[:8]}@example.com", "password": weak, "org_name": "W"},
    )
    assert r.status_code == 422, r.text
    (err,) = [e for e in r.json()["detail"] if e["loc"][-1] == "password"]
    assert "guess" in err["msg"] or "blank" in err["msg"]


def test_password_containing_own_email_is_refused(anon: TestClient) -> None:
    r = anon.post(
        "/api/v1/auth/signup",
        json={"email": "margarethamilton@example.com", "password": "margarethamilton1", "org_name": "M"},
    )
    assert r.status_code == 422, r.text
    assert r.json()["detail"][0]["loc"] == ["body", "password"]


def test_weak_new_password_is_refused_on_change(account: Account) -> None:
    r = account.post(
        "/api/v1/auth/password", json={"current_password": PASSWORD, "new_password": "password1234"}
    )
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"][-1] == "new_password"


def test_cookies_are_secure_over_https_only(app: Any) -> None:
    email = new_account(app, org_name="S").email
    with TestClient(app, base_url="https://hitcurve.example") as https:
        r = https.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
        assert r.status_code == 200
        cookies = r.headers.get_list("set-cookie")
        assert len(cookies) == 2 and all("; secure" in c.lower() for c in cookies), cookies
    with TestClient(app) as http:
        r = http.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
        assert r.status_code == 200
        assert not any("secure" in c.lower() for c in r.headers.get_list("set-cookie"))


def test_forwarded_proto_counts_only_from_a_trusted_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    from conftest import _fresh_app

    email = new_account(_fresh_app(), org_name="P").email
    body = {"email": email, "password": PASSWORD}
    spoof = {"X-Forwarded-Proto": "https", "X-Forwarded-For": "203.0.113.9"}
    with TestClient(_fresh_app()) as c:  # default: no proxy trusted
        r = c.post("/api/v1/auth/login", json=body, headers=spoof)
        assert r.status_code == 200
        assert not any("secure" in x.lower() for x in r.headers.get_list("set-cookie"))
    # TestClient's peer address is "testclient": trusting it stands for a real proxy in front.
    monkeypatch.setenv("HITCURVE_TRUSTED_PROXIES", "testclient")
    with TestClient(_fresh_app()) as c:
        r = c.post("/api/v1/auth/login", json=body, headers=spoof)
        assert r.status_code == 200
        assert all("; secure" in x.lower() for x in r.headers.get_list("set-cookie"))
    monkeypatch.delenv("HITCURVE_TRUSTED_PROXIES")
    _fresh_app()


def test_invitation_must_be_accepted_by_the_invited_user(app: Any, account: Account, inbox: Inbox) -> None:
    invitee = new_account(app, org_name="Invitee Inc")
    stranger = new_account(app, org_name="Stranger Co")
    r = account.post("/api/v1/org/invitations", json={"email": invitee.email, "role": "viewer"})
    assert r.status_code == 201, r.text
    # nothing changed yet: the invitee is not a member until they accept
    assert invitee.email not in {m["email"] for m in account.get("/api/v1/org/members").json()}
    assert account.org_id not in {o["org_id"] for o in invitee.get("/api/v1/orgs").json()}
    token = inbox.link(invitee.email, "/invite/")
    view = stranger.get(f"/api/v1/invitations/{token}").json()
    assert view["org_name"] == "Acme" and view["role"] == "viewer" and view["email"] == invitee.email
    # someone else holding the link cannot use it
    r = stranger.post("/api/v1/invitations/accept", json={"token": token})
    assert r.status_code == 403 and r.json()["code"] == "invitation_other_email"
    r = invitee.post("/api/v1/invitations/accept", json={"token": token})
    assert r.status_code == 200, r.text
    assert r.json() == {"org_id": account.org_id, "org_name": "Acme", "role": "viewer"}
    assert invitee.email in {m["email"] for m in account.get("/api/v1/org/members").json()}
    # single use
    assert invitee.post("/api/v1/invitations/accept", json={"token": token}).status_code == 404
    # a second invitation of a member: 409 (the owner sees the member list anyway)
    r = account.post("/api/v1/org/invitations", json={"email": invitee.email})
    assert r.status_code == 409
    # the direct add is gone
    assert account.post("/api/v1/org/members", json={"email": stranger.email}).status_code == 405
    invitee.client.close()
    stranger.client.close()


def test_inviting_does_not_tell_whether_an_email_is_registered(
    app: Any, account: Account, inbox: Inbox
) -> None:
    registered = new_account(app, org_name="Reg")
    answers = []
    for email in (registered.email, f"nobody-{uuid.uuid4().hex[:6]}@example.com"):
        r = account.post("/api/v1/org/invitations", json={"email": email, "role": "member"})
        answers.append((r.status_code, sorted(r.json())))
        assert len(inbox.to(email)) == 1
    assert answers[0] == answers[1] == (201, ["created_at", "email", "expires_at", "id", "role"])
    pending = account.get("/api/v1/org/invitations").json()
    assert len(pending) == 2
    # withdrawn: the link stops working
    token = inbox.link(registered.email, "/invite/")
    assert account.delete(f"/api/v1/org/invitations/{pending[0]['id']}").status_code == 204
    assert registered.post("/api/v1/invitations/accept", json={"token": token}).status_code == 404
    # only owners invite
    assert registered.post("/api/v1/org/invitations", json={"email": account.email}).status_code in (201, 409)
    registered.client.close()


def test_password_reset_by_email_single_use_and_expiring(app: Any, account: Account, inbox: Inbox) -> None:
    anon = TestClient(app)
    unknown = f"ghost-{uuid.uuid4().hex[:6]}@example.com"
    a = anon.post("/api/v1/auth/password-reset", json={"email": account.email.upper()})
    b = anon.post("/api/v1/auth/password-reset", json={"email": unknown})
    assert (
        (a.status_code, a.json())
        == (b.status_code, b.json())
        == (
            202,
            {"detail": "if an account uses this e-mail, a link to choose a new password is on its way"},
        )
    )
    assert inbox.to(unknown) == []
    token = inbox.link(account.email, "/reset-password/")
    # a weak new password is refused and does not spend the link
    r = anon.post(
        "/api/v1/auth/password-reset/confirm", json={"token": token, "new_password": "password1234"}
    )
    assert r.status_code == 422
    r = anon.post("/api/v1/auth/password-reset/confirm", json={"token": token, "new_password": NEW_PASSWORD})
    assert r.status_code == 204, r.text
    # every session of the account ended; the old password no longer works, the new one does
    assert account.get("/api/v1/auth/me").status_code == 401
    assert (
        anon.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD}).status_code
        == 401
    )
    assert (
        anon.post("/api/v1/auth/login", json={"email": account.email, "password": NEW_PASSWORD}).status_code
        == 200
    )
    # single use
    r = anon.post(
        "/api/v1/auth/password-reset/confirm", json={"token": token, "new_password": NEW_PASSWORD + "x"}
    )
    assert r.status_code == 400 and r.json()["code"] == "reset_invalid"
    # expired
    anon.post("/api/v1/auth/password-reset", json={"email": account.email})
    token2 = inbox.link(account.email, "/reset-password/")
    assert token2 != token
    with get_sessionmaker()() as db:
        db.execute(update(PasswordReset).values(expires_at=datetime.now(UTC) - timedelta(seconds=1)))
        db.commit()
    r = anon.post(
        "/api/v1/auth/password-reset/confirm", json={"token": token2, "new_password": NEW_PASSWORD + "y"}
    )
    assert r.status_code == 400
    anon.close()


def test_global_login_limit(app: Any, account: Account, monkeypatch: pytest.MonkeyPatch) -> None:
    from sqlalchemy import func, select

    from hitcurve.models import LoginAttempt

    with get_sessionmaker()() as db:
        since = datetime.now(UTC) - timedelta(seconds=get_settings().login_window_s)
        failed = db.execute(
            select(func.count())
            .select_from(LoginAttempt)
            .where(LoginAttempt.at > since, ~LoginAttempt.succeeded)
        ).scalar_one()
    monkeypatch.setattr(get_settings(), "login_max_failures_global", failed + 2)
    anon = TestClient(app)
    for i in range(2):
        email = f"g{i}-{uuid.uuid4().hex[:6]}@example.com"
        assert anon.post("/api/v1/auth/login", json={"email": email, "password": "x"}).status_code == 401
    r = anon.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD})
    assert r.status_code == 429
    anon.close()


def test_expired_account_links_are_purged(account: Account) -> None:
    """An unconfirmed sign-up holds an e-mail address and a password hash: the worker's hourly
    storage job (test_storage_partitions checks it calls this) deletes sign-ups, resets and
    unaccepted invitations a week after they expired, and keeps fresh ones and accepted
    invitations."""
    now = datetime.now(UTC)
    old = now - accounts.ACCOUNT_LINKS_KEPT_AFTER_EXPIRY - timedelta(hours=1)
    recent = now - accounts.ACCOUNT_LINKS_KEPT_AFTER_EXPIRY + timedelta(hours=1)
    tag = uuid.uuid4().hex[:8]

    def secret(*parts: object) -> str:
        return "".join(map(str, parts)).ljust(64, "0")

    with get_sessionmaker()() as db:
        user = db.execute(select(User).where(User.email == account.email)).scalar_one()
        for when, name in ((old, "old"), (recent, "recent")):
            email = f"{name}-{tag}@example.com"
            db.add(SignupRequest(email=email, token_hash=secret("s", name, tag), password_hash="x",
                                 org_name="o", expires_at=when))
            db.add(PasswordReset(user_id=user.id, token_hash=secret("r", name, tag), expires_at=when))
            for accepted in (None, when):
                db.add(Invitation(org_id=uuid.UUID(account.org_id), email=email, role="viewer",
                                  token_hash=secret("i", name, accepted is None, tag),
                                  expires_at=when, accepted_at=accepted))
        db.commit()
        assert accounts.purge_expired_links(db, now) >= 3
        db.commit()
        mine = f"%-{tag}@%"
        signups = set(db.execute(select(SignupRequest.email).where(SignupRequest.email.like(mine))).scalars())
        assert signups == {f"recent-{tag}@example.com"}
        mine_resets = select(PasswordReset.token_hash).where(PasswordReset.user_id == user.id)
        resets = set(db.execute(mine_resets).scalars())
        assert secret("r", "old", tag) not in resets and secret("r", "recent", tag) in resets
        invites = set(db.execute(select(Invitation.token_hash).where(Invitation.email.like(mine))).scalars())
        # the old unaccepted one is gone; the old accepted one and both recent ones stay
        kept = (("old", False), ("recent", True), ("recent", False))
        assert invites == {secret("i", n, a, tag) for n, a in kept}
