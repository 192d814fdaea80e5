"""Report recipients are capped per organization (crud.operations.MAX_REPORT_RECIPIENTS), also
when many subscribe at once: the weekly mail cannot mail any number of addresses."""

from concurrent.futures import ThreadPoolExecutor

from conftest import Account, Inbox
from hitcurve.crud.operations import MAX_REPORT_RECIPIENTS


def test_report_recipients_are_capped_even_when_added_at_once(
    account: Account, other: Account, inbox: Inbox
) -> None:
    def subscribe(i: int) -> int:
        return account.post("/api/v1/report-subscriptions", json={"email": f"r{i}@example.com"}).status_code

    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(subscribe, range(MAX_REPORT_RECIPIENTS + 10)))
    assert codes.count(201) == MAX_REPORT_RECIPIENTS and codes.count(409) == 10, codes
    assert len(account.get("/api/v1/report-subscriptions").json()) == MAX_REPORT_RECIPIENTS
    # each accepted recipient got its confirmation mail, the refused ones none
    assert len(inbox.messages) == MAX_REPORT_RECIPIENTS
    r = account.post("/api/v1/report-subscriptions", json={"email": "one-more@example.com"})
    assert r.status_code == 409 and r.json()["code"] == "too_many_recipients"
    # another organization has its own cap
    assert other.post("/api/v1/report-subscriptions", json={"email": "o@example.com"}).status_code == 201
