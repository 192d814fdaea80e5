"""Ratios written in percent for people, exactly as the dashboard writes them
(frontend/src/lib/format.ts formatPercent; both test suites check one case table,
frontend/src/lib/percent.cases.json): "90 %", "89.8 %", a no-break space before the sign. The
API's messages, the weekly e-mail and the alert texts wrote "90.0%" beside the dashboard's "90 %"."""

from decimal import ROUND_HALF_UP, Decimal

NBSP = "\u00a0"
MINUS = "\u2212"


def percent(ratio: float | None, digits: int = 1) -> str:
    """0.9 -> "90 %", 0.898 -> "89.8 %" (digits decimals, a trailing .0 dropped); None -> "n/a".
    Rounds half away from zero on the exact value, as JavaScript's toFixed does."""
    if ratio is None:
        return "n/a"
    v = float(ratio) * 100
    if v != v or v in (float("inf"), float("-inf")):
        return "—"
    s = str(Decimal(v).quantize(Decimal(1).scaleb(-digits), rounding=ROUND_HALF_UP))
    if digits > 0 and s.split(".")[-1].strip("0") == "":
        s = s.split(".")[0]
    return f"{s.replace('-', MINUS)}{NBSP}%"


def hit_rate(ratio: float | None) -> str:
    """A hit rate, the one way every text writes it (one decimal)."""
    return percent(ratio, 1)
