"""The weekly e-mail from the dashboard, against the real database and a real SMTP server: the
preview is the logged-in user's own organization (no org id to type), "send me a test" mails the
user, and the mailed unsubscribe link works with no session, once and idempotently. The e-mail's
chart and numbers with real curves are checked in worker/tests/test_reports.py."""

import re
import uuid
from typing import Any

import pytest
from fastapi.testclient import TestClient

from conftest import Account, Inbox
from hitcurve.core.config import get_settings
from hitcurve.core.signing import UNSUBSCRIBE_REPORT, sign

DASH = "https://dash.example.test"


@pytest.fixture(autouse=True)
def public_url(app: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(get_settings(), "public_url", DASH)


def test_preview_is_the_users_own_organization(account: Account, other: Account) -> None:
    account.post(
        "/api/v1/clusters", json={"name": "mine-cache", "price_per_gb_month": 2, "target_hit_ratio": 0.9}
    )
    other.post(
        "/api/v1/clusters", json={"name": "their-cache", "price_per_gb_month": 2, "target_hit_ratio": 0.9}
    )
    r = account.get("/api/v1/reports/preview")
    assert r.status_code == 200, r.text
    p = r.json()
    assert p["to"] == account.email and p["subscribed"] is False
    assert p["subject"].startswith("Hitcurve weekly report: Acme")
    assert "No agent has reported yet" in p["html"] and "No agent has reported yet" in p["text"]
    assert "their-cache" not in p["html"] and "Other Corp" not in p["html"]
    assert f'href="{DASH}/agents"' in p["html"] and f'href="{DASH}/reports"' in p["html"]
    assert "Unsubscribe" not in p["html"]  # nothing to unsubscribe from
    # another organization's cluster is not found; a bad id is a located 422
    their = other.get("/api/v1/clusters").json()[0]["id"]
    assert account.get("/api/v1/reports/preview", params={"cluster_id": their}).status_code == 404
    bad = account.get("/api/v1/reports/preview", params={"cluster_id": "nope"})
    assert bad.status_code == 422 and "cluster_id" in bad.text


def test_preview_needs_a_user_not_a_token(account: Account, anon: TestClient) -> None:
    token = account.api_token("read")
    r = anon.get("/api/v1/reports/preview", headers={"Authorization": f"Bearer {token}"})
    assert r.status_code == 403
    assert anon.get("/api/v1/reports/preview").status_code == 401
    assert anon.post("/api/v1/reports/test", json={}).status_code == 401


def test_send_me_a_test_then_unsubscribe_from_the_mail_without_a_session(
    app: Any, account: Account, inbox: Inbox
) -> None:
    # without a subscription: a test mail, marked as one, with no unsubscribe link or header
    r = account.post("/api/v1/reports/test", json={})
    assert r.status_code == 202 and account.email in r.json()["detail"]
    [m] = inbox.to(account.email)
    assert m["Subject"].startswith("[test] Hitcurve weekly report")
    assert m["List-Unsubscribe"] is None
    # without the CSRF header a browser session cannot send one
    assert account.client.post("/api/v1/reports/test", json={}).status_code == 403

    sub = account.post("/api/v1/report-subscriptions", json={"email": account.email}).json()
    assert account.get("/api/v1/reports/preview").json()["subscribed"] is True
    assert account.post("/api/v1/reports/test", json={}).status_code == 202
    m = inbox.to(account.email)[-1]
    text = str(m.get_body(preferencelist=("plain",)).get_content())  # type: ignore[union-attr]
    (token,) = re.findall(rf"{re.escape(DASH)}/unsubscribe/([A-Za-z0-9_.-]+)", text)
    assert m["List-Unsubscribe"] == f"<{DASH}/api/v1/reports/unsubscribe/{token}>"
    assert m["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"

    with TestClient(app) as nobody:  # no cookies, no token: the link alone
        first = nobody.post(f"/api/v1/reports/unsubscribe/{token}")
        assert first.status_code == 200, first.text
        assert first.json() == {
            "subscription_id": sub["id"],
            "email": account.email,
            "org_name": "Acme",
            "about": "all clusters",
            "already": False,
        }
        again = nobody.post(f"/api/v1/reports/unsubscribe/{token}")
        assert again.status_code == 200 and again.json()["already"] is True
        # a token signed for another purpose, or an altered one, changes nothing
        other_purpose = sign("password-reset", sub["id"])
        assert nobody.post(f"/api/v1/reports/unsubscribe/{other_purpose}").status_code == 404
        made_up = sign(UNSUBSCRIBE_REPORT, str(uuid.uuid4()))[:-3] + "xyz"
        assert nobody.post(f"/api/v1/reports/unsubscribe/{made_up}").status_code == 404
    assert account.get(f"/api/v1/report-subscriptions/{sub['id']}").json()["enabled"] is False
    actions = [a["action"] for a in account.get("/api/v1/audit-log").json()]
    assert actions.count("report_subscription.unsubscribed") == 1 and "report.test_sent" in actions
