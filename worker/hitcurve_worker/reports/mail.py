"""Build and send one report e-mail over SMTP (settings.py: HITCURVE_SMTP_*)."""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import formatdate

from hitcurve.core.mail import send

__all__ = ["build_message", "send"]


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
