"""Sign-up confirmed by e-mail (no answer tells whether an address is registered), log-in
(argon2id, throttling), sessions with CSRF, password change, org switching, roles."""

import re
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from fastapi.testclient import TestClient
from sqlalchemy import func, select, update

from conftest import PASSWORD, Inbox, new_account
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.security import sha256_hex
from hitcurve.crud.accounts import MAX_SIGNUP_MAILS_PER_HOUR
from hitcurve.models import AuditLog, SignupRequest, User, UserSession
from hitcurve.notify.account_mail import SIGNUP_ANSWER


def _actions(org_id: str) -> list[str]:
    with get_sessionmaker()() as db:
        return list(
            db.execute(
                select(AuditLog.action).where(AuditLog.org_id == uuid.UUID(org_id)).order_by(AuditLog.id)
            ).scalars()
        )


def _signup(c: TestClient, email: str, password: str = PASSWORD, org: str = "Acme") -> Any:
    return c.post("/api/v1/auth/signup", json={"email": email, "password": password, "org_name": org})


def _body(msg: Any) -> str:
    return str(msg.get_body(preferencelist=("plain",)).get_content())


def test_signup_confirmed_by_mail_creates_owner_session_and_argon2id_hash(app, inbox: Inbox) -> None:
    c = TestClient(app)
    email = f"n{uuid.uuid4().hex[:10]}@example.com"
    r = _signup(c, email.upper())
    assert r.status_code == 202 and r.json() == {"detail": SIGNUP_ANSWER}, r.text
    assert "set-cookie" not in r.headers and c.get("/api/v1/auth/me").status_code == 401
    (mail,) = inbox.to(email)
    assert mail["Subject"] == "Confirm your e-mail for Hitcurve"
    token = inbox.link(email, "/signup/confirm/")
    ok = c.post("/api/v1/auth/signup/confirm", json={"token": token})
    assert ok.status_code == 201, ok.text
    me = c.get("/api/v1/auth/me").json()
    assert me["role"] == "owner" and me["user"]["email"] == email and me["org_name"] == "Acme"
    assert me["csrf_token"] == c.cookies.get("hitcurve_csrf")
    cookies = ok.headers.get_list("set-cookie")
    session = next(h for h in cookies if h.startswith("hitcurve_session="))
    csrf = next(h for h in cookies if h.startswith("hitcurve_csrf="))
    assert "HttpOnly" in session and "SameSite=lax" in session
    assert "HttpOnly" not in csrf
    with get_sessionmaker()() as db:
        user = db.execute(select(User).where(User.email == email)).scalar_one()
        assert user.password_hash.startswith("$argon2id$") and PASSWORD not in user.password_hash
        secret = c.cookies.get("hitcurve_session")
        sess = db.execute(select(UserSession).where(UserSession.user_id == user.id)).scalar_one()
        assert sess.token_hash == sha256_hex(secret) and secret not in sess.token_hash
        # the link's secret is stored only as its SHA-256
        assert db.execute(
            select(SignupRequest.token_hash).where(SignupRequest.email == email)
        ).scalar_one() == (sha256_hex(token))
    assert "user.signup" in _actions(me["org_id"])


def test_signup_does_not_tell_whether_an_email_is_registered(app, account, inbox: Inbox) -> None:
    """A registered and a new address get the same answer (status, headers that matter, body);
    the mail says which: a confirmation link, or a notice to log in or reset the password."""
    c = TestClient(app)
    new = f"fresh-{uuid.uuid4().hex[:8]}@example.com"
    attacker_password = "an attacker's chosen passphrase"
    answers = []
    for email in (account.email.upper(), new):
        r = _signup(c, email, attacker_password, "Mine now")
        answers.append(
            (r.status_code, r.content, r.headers.get("content-type"), r.headers.get_list("set-cookie"))
        )
    assert answers[0] == answers[1] == (202, answers[0][1], "application/json", [])
    assert answers[0][1] == ('{"detail":"' + SIGNUP_ANSWER + '"}').encode()
    (notice,) = inbox.to(account.email)
    (confirm,) = inbox.to(new)
    assert (
        notice["Subject"] == "Your Hitcurve account"
        and confirm["Subject"] == "Confirm your e-mail for Hitcurve"
    )
    text = _body(notice)
    assert "already has one" in text and "/login" in text and "/forgot-password" in text
    assert "/signup/confirm/" not in text
    assert "/signup/confirm/" in _body(confirm)
    # the registered account is untouched: its password still works, the sign-up's does not
    fresh = TestClient(app)
    assert (
        fresh.post(
            "/api/v1/auth/login", json={"email": account.email, "password": attacker_password}
        ).status_code
        == 401
    )
    assert (
        fresh.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD}).status_code
        == 200
    )
    assert {o["org_name"] for o in fresh.get("/api/v1/orgs").json()} == {"Acme"}
    # both paths hash the password once and verify none: same work whichever the address is
    assert (
        _kdf_calls(lambda: _signup(c, account.email, attacker_password))
        == _kdf_calls(lambda: _signup(c, f"other-{uuid.uuid4().hex[:8]}@example.com", attacker_password))
        == {"hash": 1, "verify": 0}
    )


def test_unconfirmed_signup_cannot_log_in_and_the_link_confirms_once(app, inbox: Inbox) -> None:
    c = TestClient(app)
    email = f"u{uuid.uuid4().hex[:10]}@example.com"
    assert _signup(c, email).status_code == 202
    before = c.post("/api/v1/auth/login", json={"email": email, "password": PASSWORD})
    unknown = c.post("/api/v1/auth/login", json={"email": f"x{email}", "password": PASSWORD})
    assert before.status_code == unknown.status_code == 401 and before.json() == unknown.json()
    assert before.json()["code"] == "bad_credentials"
    token = inbox.link(email, "/signup/confirm/")
    assert c.post("/api/v1/auth/signup/confirm", json={"token": token}).status_code == 201
    assert (
        TestClient(app).post("/api/v1/auth/login", json={"email": email, "password": PASSWORD}).status_code
        == 200
    )
    again = TestClient(app).post("/api/v1/auth/signup/confirm", json={"token": token})
    assert again.status_code == 400 and again.json()["code"] == "signup_invalid"
    # an altered link does not confirm anything
    r = TestClient(app).post(
        "/api/v1/auth/signup/confirm", json={"token": token[:-1] + ("A" if token[-1] != "A" else "B")}
    )
    assert r.status_code == 400
    # a second sign-up of the now registered address gets the notice, and its earlier links stay dead
    assert _signup(c, email).status_code == 202
    assert inbox.to(email)[-1]["Subject"] == "Your Hitcurve account"
    with get_sessionmaker()() as db:
        assert db.execute(select(func.count()).select_from(User).where(User.email == email)).scalar_one() == 1


def test_signup_links_expire_and_one_address_gets_few_mails(app, inbox: Inbox) -> None:
    c = TestClient(app)
    email = f"e{uuid.uuid4().hex[:10]}@example.com"
    assert _signup(c, email).status_code == 202
    token = inbox.link(email, "/signup/confirm/")
    with get_sessionmaker()() as db:
        db.execute(
            update(SignupRequest)
            .where(SignupRequest.email == email)
            .values(expires_at=datetime.now(UTC) - timedelta(seconds=1))
        )
        db.commit()
    assert c.post("/api/v1/auth/signup/confirm", json={"token": token}).status_code == 400
    for _ in range(MAX_SIGNUP_MAILS_PER_HOUR + 2):
        assert _signup(c, email).json() == {"detail": SIGNUP_ANSWER}
    assert len(inbox.to(email)) == MAX_SIGNUP_MAILS_PER_HOUR
    # two open links of one address: the first followed makes the account, the other is spent
    first, second = [m for m in inbox.to(email)][-2:]
    t1 = re.findall(r"/signup/confirm/([A-Za-z0-9_-]+)", _body(first))[0]
    t2 = re.findall(r"/signup/confirm/([A-Za-z0-9_-]+)", _body(second))[0]
    assert c.post("/api/v1/auth/signup/confirm", json={"token": t2}).status_code == 201
    assert TestClient(app).post("/api/v1/auth/signup/confirm", json={"token": t1}).status_code == 400


def _kdf_calls(fn: Any) -> dict[str, int]:
    """How often fn made the service hash and verify a password (argon2id)."""
    from hitcurve.core import security

    real = security._hasher()
    calls = {"hash": 0, "verify": 0}

    class Counting:
        def hash(self, pw: str) -> str:
            calls["hash"] += 1
            return real.hash(pw)

        def verify(self, h: str, pw: str) -> bool:
            calls["verify"] += 1
            return real.verify(h, pw)

    orig = security._hasher
    security._hasher = lambda: Counting()  # type: ignore[assignment]
    try:
        fn()
    finally:
        security._hasher = orig  # type: ignore[assignment]
    return calls


def test_login_does_the_same_work_for_unknown_and_registered_emails(app, account) -> None:
    """An unknown e-mail's log-in verifies a dummy hash: the answer takes as long as a wrong
    password's (counted, not timed: the KDF is what costs)."""
    c = TestClient(app)
    unknown = _kdf_calls(
        lambda: c.post("/api/v1/auth/login", json={"email": "nobody@example.com", "password": "x y z w"})
    )
    wrong = _kdf_calls(
        lambda: c.post("/api/v1/auth/login", json={"email": account.email, "password": "x y z w"})
    )
    assert unknown == wrong == {"hash": 0, "verify": 1}


def test_production_argon2id_parameters(monkeypatch) -> None:
    """The defaults are RFC 9106's second option, and the service hashes with what Settings says."""
    from hitcurve.core import security
    from hitcurve.core.config import Settings

    names = ("argon2_memory_kib", "argon2_time_cost", "argon2_parallelism")
    defaults = {k: Settings.model_fields[k].default for k in names}
    assert defaults == {"argon2_memory_kib": 65536, "argon2_time_cost": 3, "argon2_parallelism": 4}
    for k, v in defaults.items():
        monkeypatch.setattr(get_settings(), k, v)
    security._hasher.cache_clear()
    try:
        h = security.hash_password("a passphrase")
        assert h.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
        assert security.verify_password(h, "a passphrase") and not security.verify_password(h, "other")
    finally:
        monkeypatch.undo()
        security._hasher.cache_clear()


def test_signup_errors(app) -> None:
    c = TestClient(app)
    short = c.post(
        "/api/v1/auth/signup", json={"email": "a@example.com", "password": "short", "org_name": "X"}
    )
    assert short.status_code == 422 and "password" in short.text
    bad_mail = c.post(
        "/api/v1/auth/signup", json={"email": "not-an-email", "password": PASSWORD, "org_name": "X"}
    )
    assert bad_mail.status_code == 422 and "email" in bad_mail.text
    nul = c.post(
        "/api/v1/auth/signup", json={"email": "b@example.com", "password": PASSWORD, "org_name": "A\u0000B"}
    )
    assert nul.status_code == 422 and "control characters" in nul.text


def test_login_logout_and_wrong_password(app, account) -> None:
    c = TestClient(app)
    bad = c.post("/api/v1/auth/login", json={"email": account.email, "password": "wrong password!"})
    assert bad.status_code == 401 and bad.json()["code"] == "bad_credentials"
    unknown = c.post("/api/v1/auth/login", json={"email": "nobody@example.com", "password": "whatever"})
    assert unknown.status_code == 401 and unknown.json()["detail"] == bad.json()["detail"]
    ok = c.post("/api/v1/auth/login", json={"email": account.email.upper(), "password": PASSWORD})
    assert ok.status_code == 200 and ok.json()["org_id"] == account.org_id
    assert c.get("/api/v1/auth/me").status_code == 200
    # log-out needs the CSRF header too
    assert c.post("/api/v1/auth/logout").status_code == 403
    csrf = c.cookies.get("hitcurve_csrf")
    secret = c.cookies.get("hitcurve_session")
    assert c.post("/api/v1/auth/logout", headers={"X-CSRF-Token": csrf}).status_code == 204
    c.cookies.set("hitcurve_session", secret)  # replaying the old cookie does not work
    assert c.get("/api/v1/auth/me").status_code == 401
    actions = _actions(account.org_id)
    assert "login.succeeded" in actions and "logout" in actions


def test_login_is_throttled_per_email(app, account) -> None:
    c = TestClient(app)
    limit = get_settings().login_max_failures_per_email
    for _ in range(limit):
        assert (
            c.post("/api/v1/auth/login", json={"email": account.email, "password": "nope nope"}).status_code
            == 401
        )
    r = c.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD})
    assert (
        r.status_code == 429 and r.json()["code"] == "too_many_attempts" and int(r.headers["Retry-After"]) > 0
    )


def test_login_is_throttled_per_address(app, account, monkeypatch) -> None:
    monkeypatch.setattr(get_settings(), "login_max_failures_per_ip", 3)
    c = TestClient(app, client=("203.0.113.9", 5555))
    for i in range(3):
        c.post(
            "/api/v1/auth/login", json={"email": f"x{i}{uuid.uuid4().hex[:6]}@example.com", "password": "p"}
        )
    r = c.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD})
    assert r.status_code == 429
    # another address is not affected
    other = TestClient(app, client=("203.0.113.10", 5555))
    assert (
        other.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD}).status_code
        == 200
    )


def test_csrf_is_required_for_cookie_writes(account) -> None:
    body = {"name": "c1"}
    assert account.client.post("/api/v1/clusters", json=body).status_code == 403
    r = account.client.post("/api/v1/clusters", json=body, headers={"X-CSRF-Token": "forged"})
    assert r.status_code == 403 and r.json()["code"] == "csrf_failed"
    # header equal to a forged cookie but not to the session's token
    account.client.cookies.delete("hitcurve_csrf")
    account.client.cookies.set("hitcurve_csrf", "forged")
    r = account.client.post("/api/v1/clusters", json=body, headers={"X-CSRF-Token": "forged"})
    assert r.status_code == 403
    account.client.cookies.delete("hitcurve_csrf")
    account.client.cookies.set("hitcurve_csrf", account.me["csrf_token"])
    assert account.post("/api/v1/clusters", json=body).status_code == 201
    assert account.get("/api/v1/clusters").status_code == 200  # reads need no token


def test_password_change_ends_other_sessions(app, account) -> None:
    second = TestClient(app)
    assert (
        second.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD}).status_code
        == 200
    )
    wrong = account.post(
        "/api/v1/auth/password",
        json={"current_password": "wrong one!", "new_password": "quartz lantern meadow"},
    )
    assert wrong.status_code == 401
    weak = account.post("/api/v1/auth/password", json={"current_password": PASSWORD, "new_password": "short"})
    assert weak.status_code == 422
    new = "a brand new passphrase"
    assert (
        account.post(
            "/api/v1/auth/password", json={"current_password": PASSWORD, "new_password": new}
        ).status_code
        == 204
    )
    assert account.get("/api/v1/auth/me").status_code == 200
    assert second.get("/api/v1/auth/me").status_code == 401
    fresh = TestClient(app)
    assert (
        fresh.post("/api/v1/auth/login", json={"email": account.email, "password": PASSWORD}).status_code
        == 401
    )
    assert fresh.post("/api/v1/auth/login", json={"email": account.email, "password": new}).status_code == 200
    assert "password.changed" in _actions(account.org_id)


def test_org_switch_and_membership_roles(app, account, other) -> None:
    r = account.post("/api/v1/orgs", json={"name": "Second org"})
    assert r.status_code == 201
    second = r.json()["org_id"]
    orgs = {o["org_name"] for o in account.get("/api/v1/orgs").json()}
    assert orgs == {"Acme", "Second org"}
    assert account.post("/api/v1/clusters", json={"name": "in-acme"}).status_code == 201
    sw = account.post("/api/v1/auth/switch-org", json={"org_id": second})
    assert sw.status_code == 200 and sw.json()["org_id"] == second
    assert account.get("/api/v1/clusters").json() == []
    # an organization the user does not belong to: 404
    assert account.post("/api/v1/auth/switch-org", json={"org_id": other.org_id}).status_code == 404

    # owner invites the other user as a viewer, who accepts; the viewer can read but not write
    # (the invitation flow itself: test_account_hygiene.py)
    from hitcurve.crud.accounts import create_invitation

    with get_sessionmaker()() as db:
        _, token = create_invitation(db, uuid.UUID(second), other.email, "viewer", None)
        db.commit()
    assert other.post("/api/v1/invitations/accept", json={"token": token}).status_code == 200
    assert account.post("/api/v1/org/invitations", json={"email": other.email}).status_code == 409
    assert other.post("/api/v1/auth/switch-org", json={"org_id": second}).json()["role"] == "viewer"
    assert other.get("/api/v1/clusters").status_code == 200
    r = other.post("/api/v1/clusters", json={"name": "nope"})
    assert r.status_code == 403 and r.json()["code"] == "forbidden"
    assert other.post("/api/v1/agent-keys", json={"name": "k"}).status_code == 403
    # promote to member: may write clusters, still no keys
    uid = other.me["user"]["id"]
    assert account.patch(f"/api/v1/org/members/{uid}", json={"role": "member"}).status_code == 200
    assert other.post("/api/v1/clusters", json={"name": "yes"}).status_code == 201
    assert other.post("/api/v1/agent-keys", json={"name": "k"}).status_code == 403
    # the last owner cannot leave or be demoted
    me_id = account.me["user"]["id"]
    assert account.patch(f"/api/v1/org/members/{me_id}", json={"role": "member"}).status_code == 409
    assert account.delete(f"/api/v1/org/members/{me_id}").status_code == 409
    # removal ends the member's sessions in that org
    assert account.delete(f"/api/v1/org/members/{uid}").status_code == 204
    assert other.get("/api/v1/clusters").status_code == 401
    assert len(account.get("/api/v1/org/members").json()) == 1


def test_unauthenticated_is_401(anon) -> None:
    for url in ("/api/v1/auth/me", "/api/v1/clusters", "/api/v1/servers", "/api/v1/alerts"):
        r = anon.get(url)
        assert r.status_code == 401 and r.json()["code"] == "unauthenticated"
    assert anon.get("/api/v1/clusters", headers={"Authorization": "Basic abc"}).status_code == 401
    assert anon.get("/api/v1/clusters", headers={"Authorization": "Bearer hct_nope"}).status_code == 401


def test_second_account_helper(app) -> None:
    acc = new_account(app, org_name="Ünïcødé Org ☃")
    assert acc.me["org_name"] == "Ünïcødé Org ☃"


def test_a_link_cut_short_gets_the_invalid_link_answer(app, account) -> None:
    """A mail program that wraps a link leaves a short token: each link's own answer, not a
    schema error ("token: String should have at least 16 characters" on the confirm page)."""
    anon = TestClient(app)
    cut = "Xy3_abc"  # the first characters of a link's token
    r = anon.post("/api/v1/auth/signup/confirm", json={"token": cut})
    assert r.status_code == 400 and r.json()["code"] == "signup_invalid", r.text
    assert "sign-up link is invalid" in r.json()["detail"]
    r = anon.post("/api/v1/auth/password-reset/confirm", json={"token": cut, "new_password": PASSWORD})
    assert r.status_code == 400 and r.json()["code"] == "reset_invalid", r.text
    r = account.post("/api/v1/invitations/accept", json={"token": cut})
    assert r.status_code == 404 and r.json()["code"] == "invitation_invalid", r.text
    # the limit stays: an over-long token is refused before any lookup
    r = anon.post("/api/v1/auth/signup/confirm", json={"token": "x" * 129})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["body", "token"]
