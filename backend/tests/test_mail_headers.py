"""Organization names in mail headers: a name with a line break (CR/LF, U+2028, U+2029, U+0085)
is refused where it is entered, and one stored before that rule (or by the operator) cannot break
or add a header: the test report and an invitation are sent, their Subject carrying it on one line
(the test report was a 500, the invitation a 201 whose mail never left)."""

import uuid
from email.message import EmailMessage

import pytest
from sqlalchemy import update

from conftest import Account, Inbox
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.mail import header_text
from hitcurve.models import Organization


@pytest.mark.parametrize("name", ["Evil\u2028Corp", "Evil\u2029Corp", "Evil\rBcc: x", "Evil\u0085Corp"])
def test_a_name_with_a_line_break_is_refused(account: Account, name: str) -> None:
    r = account.post("/api/v1/orgs", json={"name": name})
    assert r.status_code == 422, r.text
    assert "line breaks" in r.text


STORED_NAME = "Evil\u2028Corp\r\nBcc: victim@example.com"


def _store_name(account: Account, name: str) -> None:
    """The name as an older release (or the operator, in SQL) may have stored it."""
    with get_sessionmaker()() as db:
        db.execute(update(Organization).where(Organization.id == uuid.UUID(account.org_id)).values(name=name))
        db.commit()


def _one_line_subject(m: EmailMessage) -> str:
    assert m["Bcc"] is None
    subject = str(m["Subject"])
    assert "Evil Corp Bcc: victim@example.com" in subject, subject
    assert not any(ch in subject for ch in "\r\n\u2028\u2029")
    return subject


def test_a_stored_name_with_line_breaks_stays_on_the_subject_line(
    app, account: Account, inbox: Inbox
) -> None:  # type: ignore[no-untyped-def]
    _store_name(account, STORED_NAME)
    r = account.post("/api/v1/reports/test", json={})
    assert r.status_code == 202, r.text
    [m] = inbox.to(account.email)
    _one_line_subject(m)


def test_an_invitation_from_an_organization_with_such_a_name_is_sent(
    app, account: Account, inbox: Inbox
) -> None:  # type: ignore[no-untyped-def]
    _store_name(account, STORED_NAME)
    guest = f"guest-{uuid.uuid4().hex[:8]}@example.com"
    r = account.post("/api/v1/org/invitations", json={"email": guest, "role": "viewer"})
    assert r.status_code == 201, r.text
    [m] = inbox.to(guest)
    assert _one_line_subject(m).startswith("Join Evil Corp")
    assert m["To"] == guest and m["Cc"] is None
    # the link in it works
    view = account.get(f"/api/v1/invitations/{inbox.link(guest, '/invite/')}")
    assert view.status_code == 200 and view.json()["email"] == guest, view.text


def test_header_text_keeps_one_line() -> None:
    assert header_text("a\u2028b\u2029c\r\nd\te\x00f\u0085g") == "a b c d e f g"
    assert header_text("x" * 500) == "x" * 200
    assert header_text("  Acme   Corp ") == "Acme Corp"
