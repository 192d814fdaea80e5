"""The account mails (sign-up, invitation, password reset) as (subject, text), and the fixed
answers of the endpoints that must not tell whether an e-mail has an account. Pure: the routes
hand the text to core.mail.send_text after the response."""

from datetime import datetime

from hitcurve.core.config import get_settings

# The one answer to every accepted sign-up: it names nothing that depends on the address (not
# even the address), so a registered and a new e-mail get byte-identical answers.
SIGNUP_ANSWER = (
    "check your inbox: we sent a message to this address; follow its link to confirm the address "
    "and finish creating your account"
)
RESET_ANSWER = "if an account uses this e-mail, a link to choose a new password is on its way"
INVALID_INVITATION = "this invitation link is invalid, was used, withdrawn or expired"

Mail = tuple[str, str]


def public_link(path: str) -> str:
    """A link in an e-mail: the dashboard's address as users reach it (Settings.public_url)."""
    return get_settings().public_url.rstrip("/") + path


def signup_taken(email: str) -> Mail:
    """To the owner of an address someone tried to sign up with again."""
    return (
        "Your Hitcurve account",
        f"Someone (hopefully you) asked to create a Hitcurve account with {email}, which already "
        f"has one. Nothing was changed.\n\n"
        f"Log in: {public_link('/login')}\n"
        f"Forgot your password? {public_link('/forgot-password')}\n\n"
        f"If it was not you, you can ignore this mail.\n",
    )


def signup_confirm(email: str, org_name: str, secret: str) -> Mail:
    hours = get_settings().signup_ttl_s // 3600
    return (
        "Confirm your e-mail for Hitcurve",
        f"Welcome to Hitcurve. Confirm {email} to finish creating your account and the "
        f"organization {org_name}:\n\n"
        f"{public_link('/signup/confirm/' + secret)}\n\n"
        f"The link works once, for {hours} hours. If you did not sign up, ignore this mail: "
        f"no account is made without it.\n",
    )


def invitation(email: str, who: str, org_name: str, role: str, secret: str, expires_at: datetime) -> Mail:
    return (
        f"Join {org_name} on Hitcurve",
        f"{who} invites you to join {org_name} on Hitcurve as {role}.\n\n"
        f"Accept: {public_link('/invite/' + secret)}\n\n"
        f"Log in (or create an account) with this e-mail address, {email}, to accept. "
        f"The link works until {expires_at:%Y-%m-%d %H:%M} UTC. If you did not expect it, ignore it.\n",
    )


def password_reset(email: str, secret: str) -> Mail:
    minutes = get_settings().password_reset_ttl_s // 60
    return (
        "Choose a new Hitcurve password",
        f"Someone (hopefully you) asked to reset the Hitcurve password of {email}.\n\n"
        f"Choose a new password: {public_link('/reset-password/' + secret)}\n\n"
        f"The link works once, for {minutes} minutes. If you did not ask, ignore this mail: "
        f"your password stays as it is.\n",
    )


def report_confirm(email: str, who: str, org_name: str, about: str, token: str) -> Mail:
    """To an address someone subscribed to the weekly report: nothing is sent to it without this
    link being followed."""
    return (
        "Confirm the weekly Hitcurve report",
        f"{who} subscribed {email} to the weekly Hitcurve report about {about} of {org_name}.\n\n"
        f"To receive it, confirm: {public_link('/reports/confirm/' + token)}\n\n"
        f"Until the link is followed no report is sent to this address. If you did not expect "
        f"this, ignore the mail.\n",
    )
