"""Sign-up, log-in (argon2id, throttling), sessions with CSRF, password change, org switching, roles."""

import uuid

from fastapi.testclient import TestClient
from sqlalchemy import select

from conftest import PASSWORD, new_account
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.security import sha256_hex
from hitcurve.models import AuditLog, User, UserSession


def _actions(org_id: str) -> list[str]:
    with get_sessionmaker()() as db:
        return list(
            db.execute(
                select(AuditLog.action).where(AuditLog.org_id == uuid.UUID(org_id)).order_by(AuditLog.id)
            ).scalars()
        )


def test_signup_creates_owner_session_and_argon2id_hash(account) -> None:
    me = account.get("/api/v1/auth/me").json()
    assert me["role"] == "owner" and me["user"]["email"] == account.email
    assert me["csrf_token"] == account.client.cookies.get("hitcurve_csrf")
    with get_sessionmaker()() as db:
        user = db.execute(select(User).where(User.email == account.email)).scalar_one()
        assert user.password_hash.startswith("$argon2id$") and PASSWORD not in user.password_hash
        secret = account.client.cookies.get("hitcurve_session")
        sess = db.execute(select(UserSession).where(UserSession.user_id == user.id)).scalar_one()
        assert sess.token_hash == sha256_hex(secret) and secret not in sess.token_hash
    assert "user.signup" in _actions(account.org_id)


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


def test_session_cookie_is_httponly_and_csrf_cookie_readable(app) -> None:
    c = TestClient(app)
    r = c.post(
        "/api/v1/auth/signup",
        json={"email": f"c{uuid.uuid4().hex[:8]}@example.com", "password": PASSWORD, "org_name": "Cookies"},
    )
    cookies = r.headers.get_list("set-cookie")
    session = next(h for h in cookies if h.startswith("hitcurve_session="))
    csrf = next(h for h in cookies if h.startswith("hitcurve_csrf="))
    assert "HttpOnly" in session and "SameSite=lax" in session
    assert "HttpOnly" not in csrf


def test_signup_errors(app, account) -> None:
    c = TestClient(app)
    dup = c.post(
        "/api/v1/auth/signup", json={"email": account.email.upper(), "password": PASSWORD, "org_name": "X"}
    )
    assert dup.status_code == 409 and dup.json()["code"] == "email_taken"
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
