"""The backend writes percent as the dashboard does: one case table for both (the dashboard's
lib/format.test.ts reads the same file), so the API's messages, the e-mail and the alerts never
write "90.0%" beside the dashboard's "90 %"."""

from conftest import dashboard_cases
from hitcurve.rules.percent import hit_rate, percent


def test_every_case_of_the_dashboards_table() -> None:
    for c in dashboard_cases("percent"):
        assert percent(c["ratio"], c["digits"]) == c["text"], c


def test_a_hit_rate_has_one_decimal_and_drops_a_trailing_zero() -> None:
    assert hit_rate(0.9) == "90\u00a0%" and hit_rate(0.898) == "89.8\u00a0%"
    assert hit_rate(None) == "n/a" and percent(float("nan")) == "—"
    # Python's own rounding would differ on an exact tie: f"{12.5:.0f}" is "12", toFixed says "13"
    assert percent(0.125, 0) == "13\u00a0%"
