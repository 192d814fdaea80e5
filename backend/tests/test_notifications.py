"""Notification channels through the API: blocked targets refused with a clear 422, the webhook
secret shown once, "send test" delivered to a real local receiver (signed) or logged as failed,
the delivery log, roles and other organizations."""

import json
from collections.abc import Iterator
from typing import Any

import pytest
from receiver import Receiver

from conftest import Account, bearer
from hitcurve.core.config import get_settings
from hitcurve.notify import payloads as notify

CH = "/api/v1/notification-channels"


@pytest.fixture
def private_ok(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """The self-hosted operator's allowance: receivers on loopback may be called."""
    monkeypatch.setattr(get_settings(), "allow_private_webhooks", True)
    yield


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    with Receiver({"/down": [500]}) as r:
        yield r


@pytest.mark.parametrize(
    ("url", "says"),
    [
        ("http://127.0.0.1:9/hook", "127.0.0.1, a loopback address"),
        ("http://localhost/hook", "a loopback address"),
        ("http://10.1.2.3/hook", "10.1.2.3, a private address"),
        ("http://192.168.0.10/hook", "a private address"),
        ("http://169.254.169.254/latest/meta-data", "169.254.169.254, a link-local address"),
        ("http://[::1]/hook", "a loopback address"),
        ("http://[::ffff:10.0.0.1]/hook", "a private address"),
        ("http://224.0.0.1/hook", "a multicast address"),
        ("http://0.0.0.0/hook", "an unspecified address"),
        ("http://100.64.0.1/hook", "a non-public address"),
        ("ftp://example.com/hook", "must start with https:// or http://"),
        ("https://user:pw@example.com/hook", "credentials in the URL"),
    ],
)
def test_blocked_targets_are_refused_with_a_clear_error(account: Account, url: str, says: str) -> None:
    r = account.post(CH, json={"name": "hook", "kind": "webhook", "url": url})
    assert r.status_code == 422, r.text
    assert r.json()["code"] == "blocked_target"
    assert says in r.json()["detail"]
    assert "HITCURVE_ALLOW_PRIVATE_WEBHOOKS" in r.json()["detail"] or "http" in says or "credentials" in says
    assert account.get(CH).json() == []  # nothing stored


def test_kind_rules_are_located_422s(account: Account) -> None:
    r = account.post(CH, json={"name": "pd", "kind": "pagerduty"})
    assert r.status_code == 422 and "routing_key" in json.dumps(r.json()["detail"])
    r = account.post(CH, json={"name": "s", "kind": "slack"})
    assert r.status_code == 422 and "needs url" in json.dumps(r.json()["detail"])
    r = account.post(
        CH, json={"name": "w", "kind": "webhook", "url": "http://x.example", "routing_key": "abc"}
    )
    assert r.status_code == 422 and "pagerduty channels only" in json.dumps(r.json()["detail"])
    r = account.post(CH, json={"name": "w", "kind": "sms", "url": "http://x.example"})
    assert r.status_code == 422
    # a public address is accepted without the allowance
    r = account.post(CH, json={"name": "pub", "kind": "alertmanager", "url": "https://8.8.8.8/hook"})
    assert r.status_code == 201, r.text
    assert r.json()["secret"] is None and r.json()["signed"] is False


def test_send_test_reaches_a_real_receiver_signed_and_the_log_shows_it(
    account: Account, other: Account, private_ok: None, receiver: Receiver
) -> None:
    r = account.post(CH, json={"name": "ops hook", "kind": "webhook", "url": f"{receiver.base}/hook"})
    assert r.status_code == 201, r.text
    created = r.json()
    secret = created["secret"]
    assert secret.startswith("whsec_") and created["signed"] is True
    listed = account.get(CH).json()
    assert [c["name"] for c in listed] == ["ops hook"]
    assert "secret" not in listed[0]  # shown once
    assert (
        account.post(
            CH, json={"name": "ops hook", "kind": "webhook", "url": f"{receiver.base}/x"}
        ).status_code
        == 409
    )

    r = account.post(f"{CH}/{created['id']}/test")
    assert r.status_code == 200, r.text
    d = r.json()
    assert (d["status"], d["attempts"], d["response_code"], d["event"]) == ("delivered", 1, 200, "test")
    [got] = receiver.at("/hook")
    assert notify.verify(secret, got.body, got.headers["x-hitcurve-signature"])
    assert not notify.verify("whsec_wrong", got.body, got.headers["x-hitcurve-signature"])
    assert got.headers["x-hitcurve-delivery"] == d["key"]
    body = json.loads(got.body)
    assert body["event"] == "alert.test" and body["organization"] == "Acme"

    # A receiver answering 500: a test is one attempt, logged with the code and the answer.
    down = account.post(CH, json={"name": "down", "kind": "slack", "url": f"{receiver.base}/down"}).json()
    assert down["url"].endswith("/****")  # a Slack URL is a credential
    d = account.post(f"{CH}/{down['id']}/test").json()
    assert (d["status"], d["attempts"], d["response_code"]) == ("failed", 1, 500)
    assert "HTTP 500" in d["last_error"] and "receiver says no" in d["last_error"]
    assert len(receiver.at("/down")) == 1
    assert "text" in json.loads(receiver.at("/down")[0].body)

    log = account.get("/api/v1/alert-deliveries").json()
    assert [(x["channel_name"], x["status"]) for x in log] == [("down", "failed"), ("ops hook", "delivered")]
    assert [c["last_delivery_status"] for c in account.get(CH).json()] == ["delivered", "failed"]
    # read tokens see the log; other organizations see nothing and cannot touch the channel
    tok = account.api_token("read")
    assert len(account.client.get("/api/v1/alert-deliveries", headers=bearer(tok)).json()) == 2
    assert other.get("/api/v1/alert-deliveries").json() == []
    assert other.post(f"{CH}/{created['id']}/test").status_code == 404
    assert other.delete(f"{CH}/{created['id']}").status_code == 404
    # the URL is checked again when it changes, and at send time
    r = account.patch(f"{CH}/{created['id']}", json={"min_severity": "critical", "enabled": False})
    assert r.status_code == 200 and r.json()["min_severity"] == "critical"
    assert account.delete(f"{CH}/{created['id']}").status_code == 204
    assert [c["name"] for c in account.get(CH).json()] == ["down"]


def test_refused_again_at_send_time_without_the_allowance(
    account: Account, monkeypatch: pytest.MonkeyPatch, receiver: Receiver
) -> None:
    monkeypatch.setattr(get_settings(), "allow_private_webhooks", True)
    ch = account.post(CH, json={"name": "am", "kind": "alertmanager", "url": f"{receiver.base}/am"}).json()
    monkeypatch.setattr(get_settings(), "allow_private_webhooks", False)
    d: dict[str, Any] = account.post(f"{CH}/{ch['id']}/test").json()
    assert d["status"] == "failed" and d["response_code"] is None
    assert "refused" in d["last_error"] and "loopback" in d["last_error"]
    assert receiver.at("/am") == []
    r = account.patch(f"{CH}/{ch['id']}", json={"url": "http://127.0.0.1/other"})
    assert r.status_code == 422 and r.json()["code"] == "blocked_target"


def _open_alert(org_id: str, severity: str, kind: str = "memory_short") -> str:
    """An open alert of the organization, as the worker's rules leave one."""
    import uuid

    from hitcurve.core.db import get_sessionmaker
    from hitcurve.models import Alert

    with get_sessionmaker()() as db:
        a = Alert(
            org_id=uuid.UUID(org_id), kind=kind, severity=severity, state="open", message=f"{kind} test"
        )
        db.add(a)
        db.commit()
        return str(a.id)


def test_a_channel_added_while_alerts_are_open_is_offered_them_and_gets_each_once(
    account: Account, other: Account, private_ok: None, receiver: Receiver
) -> None:
    _open_alert(account.org_id, "warning")
    _open_alert(account.org_id, "info", kind="savings")
    _open_alert(other.org_id, "critical")  # another organization's: never offered here
    r = account.post(
        CH,
        json={"name": "late", "kind": "webhook", "url": f"{receiver.base}/late", "min_severity": "warning"},
    )
    assert r.status_code == 201, r.text
    ch = r.json()
    assert ch["open_alerts"] == 1  # the warning; the info alert is below the channel's minimum
    r = account.post(f"{CH}/{ch['id']}/send-open-alerts")
    assert r.status_code == 200, r.text
    assert r.json() == {"queued": 1}
    assert account.post(f"{CH}/{ch['id']}/send-open-alerts").json() == {"queued": 0}  # each once
    log = account.get("/api/v1/alert-deliveries", params={"channel_id": ch["id"]}).json()
    assert [(x["event"], x["alert_kind"]) for x in log] == [("opened", "memory_short")]
    assert other.post(f"{CH}/{ch['id']}/send-open-alerts").status_code == 404
    account.patch(f"{CH}/{ch['id']}", json={"enabled": False})
    r = account.post(f"{CH}/{ch['id']}/send-open-alerts")
    assert r.status_code == 409 and r.json()["code"] == "channel_disabled"
