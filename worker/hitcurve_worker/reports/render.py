"""Render an OrgReport with Jinja2 into a plain-text and an HTML body (templates/)."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined

from hitcurve_worker.reports.content import GIB, OrgReport


def gib(v: float | None) -> str:
    return "n/a" if v is None else f"{v / GIB:.2f} GiB"


def gib_or_beyond(v: float | None) -> str:
    """A band end: None means the target is not reached on that edge within the curve."""
    return "beyond the curve's range" if v is None else gib(v)


def pct(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1%}"


def money(v: float | None) -> str:
    return "n/a" if v is None else f"{v:,.2f}"


def pp(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.2f} pp"


def day(v: datetime) -> str:
    return v.strftime("%Y-%m-%d %H:%M")


def _env(html: bool) -> Environment:
    env = Environment(
        loader=FileSystemLoader(Path(__file__).resolve().parent / "templates"),
        autoescape=html,  # noqa: S701 - the text version is plain text, not markup
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    env.filters.update(gib=gib, band=gib_or_beyond, pct=pct, money=money, pp=pp, day=day)
    return env


_TEXT = _env(html=False)
_HTML = _env(html=True)


def render(report: OrgReport, recipient: str) -> tuple[str, str, str]:
    """(subject, text, html)."""
    subject = f"Hitcurve weekly report: {report.org_name}, week to {report.period_end:%Y-%m-%d}"
    text = _TEXT.get_template("report.txt.j2").render(r=report, recipient=recipient)
    html = _HTML.get_template("report.html.j2").render(r=report, recipient=recipient)
    return subject, text, html
