"""Build and send one report e-mail over SMTP (settings.py: HITCURVE_SMTP_*).

Structure: multipart/alternative of the plain text and a multipart/related holding the HTML and
its charts (image/png parts the HTML names by Content-ID, so no mail client fetches anything).
With an unsubscribe URL the message carries List-Unsubscribe and List-Unsubscribe-Post (RFC 8058
one-click: the mail client POSTs to the URL, no log-in)."""

from __future__ import annotations

from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from hitcurve.core.mail import header_text, send

__all__ = ["build_message", "send"]


def build_message(
    sender: str,
    recipient: str,
    subject: str,
    text: str,
    html: str,
    delivery_key: str | None,
    images: dict[str, bytes] | None = None,
    unsubscribe_url: str | None = None,
) -> EmailMessage:
    """images: Content-ID (without <>) -> PNG bytes, referenced in the HTML as cid:<id>.
    delivery_key None (a test mail): a fresh Message-ID."""
    msg = EmailMessage()
    msg["From"] = sender
    msg["To"] = recipient
    msg["Subject"] = header_text(subject)
    msg["Date"] = formatdate(usegmt=True)
    if delivery_key is not None:
        # The same Message-ID for every attempt at one (subscription, period): a mail system can
        # drop the duplicate that a crash between the SMTP accept and the commit would cause.
        msg["Message-ID"] = f"<{delivery_key.replace(':', '.')}@hitcurve.report>"
        msg["X-Hitcurve-Delivery"] = delivery_key
    else:
        msg["Message-ID"] = make_msgid(domain="hitcurve.report")
    if unsubscribe_url is not None:
        msg["List-Unsubscribe"] = f"<{unsubscribe_url}>"
        msg["List-Unsubscribe-Post"] = "List-Unsubscribe=One-Click"
    msg.set_content(text)
    msg.add_alternative(html, subtype="html")
    if images:
        html_part = msg.get_body(preferencelist=("html",))
        assert isinstance(html_part, EmailMessage)
        for cid, png in images.items():
            html_part.add_related(png, "image", "png", cid=f"<{cid}>", filename=f"{cid.split('@')[0]}.png")
    return msg
