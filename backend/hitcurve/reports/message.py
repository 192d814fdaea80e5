"""One report e-mail, composed the same way for the weekly delivery, the "send me a test" of the
dashboard and its preview: content (content.py), charts (chart.py), text and HTML (render.py),
the MIME message (mail.py) and the signed unsubscribe link of the subscription it goes to.

The API's preview and test mail and the worker's weekly send all compose here, so a preview shows
exactly what is sent."""

from __future__ import annotations

import base64
import uuid
from dataclasses import dataclass
from datetime import datetime
from email.message import EmailMessage

from sqlalchemy.orm import Session

from hitcurve.core.mail import smtp_settings
from hitcurve.core.signing import UNSUBSCRIBE_REPORT, sign
from hitcurve.reports.chart import curve_png
from hitcurve.reports.content import ClusterReport, OrgReport, build_report
from hitcurve.reports.mail import build_message
from hitcurve.reports.render import Links, render


def unsubscribe_token(subscription_id: uuid.UUID) -> str:
    return sign(UNSUBSCRIBE_REPORT, str(subscription_id))


def one_click_url(links: Links, token: str) -> str:
    """The RFC 8058 one-click target (List-Unsubscribe): the API's POST endpoint."""
    return f"{links.base}/api/v1/reports/unsubscribe/{token}"


def chart_cid(c: ClusterReport) -> str:
    return f"curve-{c.id}@hitcurve.report"


def charts(report: OrgReport) -> dict[uuid.UUID, bytes]:
    out: dict[uuid.UUID, bytes] = {}
    for c in report.clusters:
        png = curve_png(c)
        if png is not None:
            out[c.id] = png
    return out


@dataclass
class Composed:
    message: EmailMessage
    report: OrgReport


def compose(
    db: Session,
    org_id: uuid.UUID,
    cluster_id: uuid.UUID | None,
    recipient: str,
    at: datetime,
    subscription_id: uuid.UUID | None,
    delivery_key: str | None,
    test: bool = False,
) -> Composed:
    """The e-mail for `recipient` about one organization (or one of its clusters) as of `at`.
    subscription_id None (a test to an unsubscribed address): no unsubscribe link or header."""
    report = build_report(db, org_id, at, cluster_id)
    token = unsubscribe_token(subscription_id) if subscription_id is not None else None
    links = Links.make(token)
    pngs = charts(report)
    by_id = {c.id: c for c in report.clusters}
    subject, text, html = render(
        report, recipient, links, lambda c: f"cid:{chart_cid(c)}" if c.id in pngs else None, test=test
    )
    images = {chart_cid(by_id[cid]): png for cid, png in pngs.items()}
    msg = build_message(
        smtp_settings().sender,
        recipient,
        subject,
        text,
        html,
        delivery_key,
        images,
        one_click_url(links, token) if token else None,
    )
    return Composed(msg, report)


@dataclass
class Preview:
    subject: str
    text: str
    html: str  # charts inline as data: URLs, for a browser
    recipient: str
    subscribed: bool


def preview(
    db: Session,
    org_id: uuid.UUID,
    cluster_id: uuid.UUID | None,
    recipient: str,
    at: datetime,
    subscription_id: uuid.UUID | None,
) -> Preview:
    report = build_report(db, org_id, at, cluster_id)
    token = unsubscribe_token(subscription_id) if subscription_id is not None else None
    pngs = charts(report)

    def data_url(c: ClusterReport) -> str | None:
        png = pngs.get(c.id)
        return None if png is None else "data:image/png;base64," + base64.b64encode(png).decode()

    subject, text, html = render(report, recipient, Links.make(token), data_url)
    return Preview(subject, text, html, recipient, subscription_id is not None)
