"""Build and send one report e-mail over SMTP (settings.py: HITCURVE_SMTP_*)."""

from __future__ import annotations

import smtplib
from email.message import EmailMessage
from email.utils import formatdate

from hitcurve_worker.reports.settings import SmtpSettings


def build_message(
    sender: str, recipient: str, subject: str, text: str, html: str, delivery_key: str
) -> EmailMessage:
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = recipient
    msg["Subject"] = subject
    msg["Date"] = formatdate(usegmt=True)
    # The same Message-ID for every attempt at one (subscription, period): a mail system can drop
    # the duplicate that a crash between the SMTP accept and the commit would cause.
    msg["Message-ID"] = f"<{delivery_key.replace(':', '.')}@hitcurve.report>"
    msg["X-Hitcurve-Delivery"] = delivery_key
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
    return msg


def send(settings: SmtpSettings, msg: EmailMessage) -> None:
    """One SMTP session; raises smtplib.SMTPException or OSError when the server is unavailable."""
    with smtplib.SMTP(settings.host, settings.port, timeout=settings.timeout_s) as smtp:
        smtp.ehlo()
        if settings.starttls:
            smtp.starttls()
            smtp.ehlo()
        if settings.user:
            smtp.login(settings.user, settings.password or "")
        smtp.send_message(msg)
