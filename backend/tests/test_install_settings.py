"""Private notification targets for a self-hosted install, allowed and refused again while the
API runs (no restart): by one of the install's administrators in the dashboard's API, or by the
host's command. Refused by default and for everyone else; the address check at save and at send
time follows the stored setting at once. Against the real database and a real loopback receiver."""

import subprocess
import sys
from collections.abc import Iterator
from typing import Any

import pytest
from receiver import Receiver
from sqlalchemy import delete

from conftest import Account
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AuditLog, InstallSettings

CH = "/api/v1/notification-channels"
SETTINGS = "/api/v1/install-settings"


@pytest.fixture
def fresh_install() -> Iterator[None]:
    """No stored setting before and after: the install's default."""

    def clear() -> None:
        with get_sessionmaker()() as db:
            db.execute(delete(InstallSettings))
            db.commit()

    clear()
    yield
    clear()


@pytest.fixture
def rx() -> Iterator[Receiver]:
    with Receiver({}) as r:
        yield r


def _channel(account: Account, url: str) -> Any:
    return account.post(CH, json={"name": f"hook {url[-6:]}", "kind": "webhook", "url": url})


def test_an_administrator_allows_private_targets_at_once_and_refuses_them_again(
    account: Account, other: Account, fresh_install: None, rx: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "admin_emails", f"someone@else.test, {account.email.upper()}")
    # the default: refused, and the answer says who can change it
    r = _channel(account, f"{rx.base}/a")
    assert r.status_code == 422 and r.json()["code"] == "blocked_target"
    assert "administrator can allow private ones on the alerts page" in r.json()["detail"]
    assert account.get(SETTINGS).json() == {
        "allow_private_webhooks": False,
        "stored": False,
        "from_environment": False,
        "can_change": True,
        "changed_at": None,
        "changed_by": None,
    }
    # another organization's owner is no administrator of the install: 403, nothing changes
    assert other.get(SETTINGS).json()["can_change"] is False
    r = other.patch(SETTINGS, json={"allow_private_webhooks": True})
    assert r.status_code == 403 and r.json()["code"] == "not_install_admin"
    assert _channel(account, f"{rx.base}/a").status_code == 422

    # allowed: the same request is accepted by the same running API, and a test reaches loopback
    r = account.patch(SETTINGS, json={"allow_private_webhooks": True})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (body["allow_private_webhooks"], body["stored"], body["changed_by"]) == (True, True, account.email)
    ch = _channel(account, f"{rx.base}/a")
    assert ch.status_code == 201, ch.text
    d = account.post(f"{CH}/{ch.json()['id']}/test").json()
    assert d["status"] == "delivered", d
    assert len(rx.at("/a")) == 1
    # the other organization's channels follow the install's setting too; it is not told who set it
    assert _channel(other, f"{rx.base}/b").status_code == 201
    assert other.get(SETTINGS).json()["changed_by"] is None

    # refused again: the stored channel's next send is refused before it leaves
    assert (
        account.patch(SETTINGS, json={"allow_private_webhooks": False}).json()["allow_private_webhooks"]
        is False
    )
    d = account.post(f"{CH}/{ch.json()['id']}/test").json()
    assert d["status"] == "failed" and "refused" in d["last_error"], d
    assert len(rx.at("/a")) == 1
    with get_sessionmaker()() as db:
        actions = [a.action for a in db.query(AuditLog).filter(AuditLog.action == "install.private_webhooks")]
    assert len(actions) == 2


@pytest.mark.slow  # runs the install-settings command as its own process, twice
def test_the_hosts_command_changes_it_without_a_restart_and_the_environment_overrides(
    account: Account, fresh_install: None, rx: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert account.get(SETTINGS).json()["can_change"] is False  # no administrators configured

    def command(*args: str) -> str:
        out = subprocess.run(
            [sys.executable, "-m", "hitcurve.notify.install_admin", "private-webhooks", *args],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        return out.stdout.strip()

    assert command() == "private webhook targets: refused; install setting: refuse"
    assert command("allow") == "private webhook targets: allowed; install setting: allow"
    assert _channel(account, f"{rx.base}/c").status_code == 201  # this API process, not restarted
    with get_sessionmaker()() as db:
        row = db.get(InstallSettings, 1)
        assert row is not None and row.changed_by == "host"
    assert account.get(SETTINGS).json()["changed_by"] is None  # told to administrators only
    command("refuse")
    assert _channel(account, f"{rx.base}/d").status_code == 422
    # HITCURVE_ALLOW_PRIVATE_WEBHOOKS=true allows them whatever is stored
    monkeypatch.setattr(get_settings(), "allow_private_webhooks", True)
    s = account.get(SETTINGS).json()
    assert (s["allow_private_webhooks"], s["stored"], s["from_environment"]) == (True, False, True)
    assert _channel(account, f"{rx.base}/d").status_code == 201
