"""The backend writes memory sizes as the dashboard does: one case table for both (the dashboard's
lib/format.test.ts reads the same file), so the API's messages, the e-mail and the alerts never
write "1 GiB" beside the dashboard's "1.0 GiB"."""

from conftest import dashboard_cases
from hitcurve.rules.memlimit import human_bytes


def test_every_case_of_the_dashboards_table() -> None:
    for c in dashboard_cases("bytes"):
        assert human_bytes(c["bytes"]) == c["text"], c


def test_no_size_and_no_number() -> None:
    assert human_bytes(None) == "?" and human_bytes(float("nan")) == "—"
