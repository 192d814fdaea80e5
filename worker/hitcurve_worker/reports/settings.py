"""SMTP settings of the weekly report e-mails (environment HITCURVE_SMTP_*): the one definition
lives in hitcurve.core.mail, shared with the backend's account mails."""

from hitcurve.core.mail import SmtpSettings, smtp_settings

__all__ = ["SmtpSettings", "smtp_settings"]
