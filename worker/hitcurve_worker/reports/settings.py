"""SMTP settings of the weekly report e-mails (environment HITCURVE_SMTP_*)."""

from __future__ import annotations

from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict


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
    """Read fresh each time: a worker picks up changed settings on its next delivery."""
    return SmtpSettings()
