"""Outgoing e-mail over SMTP (environment HITCURVE_SMTP_*): the backend's account mails (sign-up
confirmation, invitations, password reset) and the worker's weekly reports use these settings and
`send`."""

from __future__ import annotations

import logging
import smtplib
import unicodedata
from email.message import EmailMessage
from email.utils import formatdate, make_msgid

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

log = logging.getLogger("hitcurve.mail")


class SmtpSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HITCURVE_SMTP_", extra="ignore", populate_by_name=True)

    host: str = "127.0.0.1"
    port: int = Field(default=25, ge=1, le=65535)
    user: str | None = None
    password: str | None = None
    # HITCURVE_SMTP_FROM (from is a Python keyword, hence the alias)
    sender: str = Field(default="Hitcurve <reports@hitcurve.invalid>", alias="HITCURVE_SMTP_FROM")
    starttls: bool = False
    timeout_s: float = 20.0


def smtp_settings() -> SmtpSettings:
    """Read fresh each time: a process picks up changed settings on its next delivery."""
    return SmtpSettings()


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


# How long the check before an account mail waits for the mail server's greeting: a sign-up
# never hangs on a mail server that is down, and one that answers takes a few milliseconds.
PROBE_TIMEOUT_S = 3.0


def unavailable() -> str | None:
    """Why no mail can be sent now, or None: one connection to the SMTP server and its greeting.
    Asked before an account mail is promised (sign-up, password reset, invitation, test report),
    so an answer never says "we sent a message" when the mail server is down. It depends on the
    installation only, never on the address, so it tells nothing about accounts."""
    settings = smtp_settings()
    where = f"{settings.host}:{settings.port}"
    try:
        with smtplib.SMTP(
            settings.host, settings.port, timeout=min(settings.timeout_s, PROBE_TIMEOUT_S)
        ) as smtp:
            smtp.noop()
    except (smtplib.SMTPException, OSError) as exc:
        log.error("mail server %s unavailable: %s: %s", where, type(exc).__name__, exc)
        return f"the mail server {where} does not answer ({type(exc).__name__}: {exc})"
    return None


def header_text(value: str, limit: int = 200) -> str:
    """Text as it may stand in a mail header (Subject): control characters, CR/LF and the Unicode
    line and paragraph separators (U+2028, U+2029, U+0085) become spaces, runs of spaces one, at
    most limit characters. A name stored before its field refused them cannot break a header or
    add one."""
    cleaned = "".join(" " if unicodedata.category(ch) in ("Cc", "Zl", "Zp") else ch for ch in value)
    return " ".join(cleaned.split())[:limit]


def send_text(recipient: str, subject: str, text: str) -> None:
    """A plain-text account mail, sent after the response (a BackgroundTask): the answer's timing
    does not depend on whether a mail went out. A failure is logged, never raised."""
    settings = smtp_settings()
    msg = EmailMessage()
    msg["From"] = settings.sender
    msg["To"] = recipient
    msg["Subject"] = header_text(subject)
    msg["Date"] = formatdate(usegmt=True)
    msg["Message-ID"] = make_msgid(domain="hitcurve.account")
    msg.set_content(text)
    try:
        send(settings, msg)
    except (smtplib.SMTPException, OSError) as exc:
        log.error("could not send %r to %s: %s: %s", subject, recipient, type(exc).__name__, exc)


def send_message(msg: EmailMessage) -> None:
    """A prepared message, sent after the response (a BackgroundTask); failures logged."""
    try:
        send(smtp_settings(), msg)
    except (smtplib.SMTPException, OSError) as exc:
        log.error("could not send %r to %s: %s: %s", msg["Subject"], msg["To"], type(exc).__name__, exc)
