"""Render an OrgReport with Jinja2 into a plain-text and an HTML body (templates/).

One vocabulary, the API's: "hit rate" (hits / gets); memory limits are memcached's -m, named as the
sizing API names them (memory_limit_bytes: the -m to set for the target,
recommended_memory_limit_bytes: the -m autoscalers follow, current_memory_limit_bytes: today's);
money carries the install's currency (Settings.currency). Links point into the dashboard at
Settings.public_url.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from hitcurve.core.config import get_settings
from hitcurve.reports.content import ClusterReport, OrgReport
from hitcurve.rules.memlimit import human_bytes
from hitcurve.rules.percent import hit_rate, percent

MIB = 1 << 20
# Symbols for the common currencies; any other ISO 4217 code is written after the amount.
SYMBOLS = {"USD": "$", "EUR": "€", "GBP": "£", "JPY": "¥"}


def mem(v: float | None) -> str:
    """Memory in the unit that fits, as the sizing API's messages and the dashboard write it
    ("68 MiB", "11.4 GiB"): in GiB with two decimals a 64 MiB cache read "0.06 GiB" in use and
    "0.07 GiB" for the target beside the dashboard's 64 MiB and 68 MiB."""
    return "n/a" if v is None else human_bytes(v)


def mem_or_beyond(v: float | None) -> str:
    """A band end: None means the target is not reached on that edge within the curve."""
    return "beyond the curve's range" if v is None else mem(v)


def m_limit(v: float | None) -> str:
    """A memory limit as memcached takes it: -m in MiB, with its size."""
    return "n/a" if v is None else f"-m {int(v) // MIB} ({mem(v)})"


def pct(v: float | None) -> str:
    """A hit rate as the dashboard and the API write it ("90 %", "89.8 %"; hitcurve.rules.percent)."""
    return hit_rate(v)


def whole_pct(v: float | None) -> str:
    """A confidence level in whole percent ("90 %")."""
    return percent(v, 0)


def money(v: float | None, currency: str | None = None) -> str:
    if v is None:
        return "n/a"
    code = currency or get_settings().currency
    sym = SYMBOLS.get(code)
    return f"{sym}{v:,.2f}" if sym else f"{v:,.2f} {code}"


def pp(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f} pp"


def day(v: datetime) -> str:
    return v.strftime("%Y-%m-%d %H:%M")


@dataclass
class Links:
    """Where the e-mail's links go: the dashboard (Settings.public_url) and the unsubscribe page
    (None for a test or preview to an address without a subscription)."""

    base: str
    unsubscribe: str | None

    @classmethod
    def make(cls, unsubscribe_token: str | None) -> Links:
        base = get_settings().public_url.rstrip("/")
        return cls(base, f"{base}/unsubscribe/{unsubscribe_token}" if unsubscribe_token else None)

    def cluster(self, c: ClusterReport) -> str:
        return f"{self.base}/clusters/{c.id}"

    @property
    def reports(self) -> str:
        return f"{self.base}/reports"

    @property
    def alerts(self) -> str:
        return f"{self.base}/alerts"

    @property
    def servers(self) -> str:
        return f"{self.base}/servers"


def _env(html: bool) -> Environment:
    env = Environment(
        loader=FileSystemLoader(Path(__file__).resolve().parent / "templates"),
        autoescape=html,  # noqa: S701 - the text version is plain text, not markup
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(
        mem=mem, band=mem_or_beyond, mlimit=m_limit, pct=pct, whole_pct=whole_pct, money=money, pp=pp, day=day
    )
    return env


_TEXT = _env(html=False)
_HTML = _env(html=True)


def render(
    report: OrgReport,
    recipient: str,
    links: Links | None = None,
    image_src: Callable[[ClusterReport], str | None] | None = None,
    test: bool = False,
) -> tuple[str, str, str]:
    """(subject, text, html). image_src gives the <img src> of a cluster's chart (a cid: URL in the
    e-mail, a data: URL in the dashboard's preview) or None for no chart."""
    links = links or Links.make(None)
    src = image_src or (lambda c: None)
    subject = f"Hitcurve weekly report: {report.org_name}, week to {report.period_end:%Y-%m-%d}"
    if test:
        subject = "[test] " + subject
    ctx = dict(
        r=report, recipient=recipient, links=links, src=src, test=test, currency=get_settings().currency
    )
    text = _TEXT.get_template("report.txt.j2").render(**ctx)
    html = _HTML.get_template("report.html.j2").render(**ctx)
    return subject, text, html
