"""Data access for account hygiene: log-in throttling counts, invitations and password resets.

Secrets (invitation and reset links) are 256-bit random strings; only their SHA-256 is stored.
"""

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from hitcurve.core.config import get_settings
from hitcurve.core.security import new_secret, sha256_hex
from hitcurve.models import Invitation, LoginAttempt, Membership, PasswordReset, User, UserSession

# Reset mails one account gets per hour at most; further requests answer the same and send none.
MAX_RESETS_PER_HOUR = 3


def _now() -> datetime:
    return datetime.now(UTC)


def login_failures(db: Session, email: str, ip: str) -> tuple[int, int, int]:
    """Failed log-ins within the window: (for this e-mail, from this address, in all)."""
    since = _now() - timedelta(seconds=get_settings().login_window_s)
    failed = (LoginAttempt.at > since) & LoginAttempt.succeeded.is_(False)
    row = db.execute(
        select(
            func.count().filter(LoginAttempt.email == email),
            func.count().filter(LoginAttempt.ip == ip),
            func.count(),
        ).where(failed)
    ).one()
    return int(row[0]), int(row[1]), int(row[2])


def revoke_sessions(db: Session, user_id: uuid.UUID, keep: uuid.UUID | None = None) -> None:
    q = update(UserSession).where(UserSession.user_id == user_id, UserSession.revoked_at.is_(None))
    if keep is not None:
        q = q.where(UserSession.id != keep)
    db.execute(q.values(revoked_at=_now()))


# --- invitations ------------------------------------------------------------------------------
def create_invitation(
    db: Session, org_id: uuid.UUID, email: str, role: str, invited_by: uuid.UUID | None
) -> tuple[Invitation, str]:
    """A new invitation (earlier pending ones for the same e-mail and org are revoked)."""
    now = _now()
    db.execute(
        update(Invitation)
        .where(
            Invitation.org_id == org_id,
            Invitation.email == email,
            Invitation.accepted_at.is_(None),
            Invitation.revoked_at.is_(None),
        )
        .values(revoked_at=now)
    )
    secret = new_secret()
    inv = Invitation(
        org_id=org_id,
        email=email,
        role=role,
        token_hash=sha256_hex(secret),
        invited_by=invited_by,
        expires_at=now + timedelta(seconds=get_settings().invitation_ttl_s),
    )
    db.add(inv)
    db.flush()
    return inv, secret


def is_member(db: Session, org_id: uuid.UUID, email: str) -> bool:
    return (
        db.execute(
            select(Membership.id)
            .join(User, User.id == Membership.user_id)
            .where(Membership.org_id == org_id, User.email == email)
        ).first()
        is not None
    )


def pending_invitations(db: Session, org_id: uuid.UUID) -> list[Invitation]:
    return list(
        db.execute(
            select(Invitation)
            .where(
                Invitation.org_id == org_id,
                Invitation.accepted_at.is_(None),
                Invitation.revoked_at.is_(None),
                Invitation.expires_at > _now(),
            )
            .order_by(Invitation.created_at)
        ).scalars()
    )


def open_invitation(db: Session, secret: str) -> Invitation | None:
    """The invitation a link names, if it can still be accepted."""
    q = select(Invitation).where(Invitation.token_hash == sha256_hex(secret))
    inv = db.execute(q).scalar_one_or_none()
    if inv is None or inv.accepted_at or inv.revoked_at or inv.expires_at <= _now():
        return None
    return inv


def accept_invitation(db: Session, inv: Invitation, user_id: uuid.UUID) -> bool:
    """Join the organization; False when the invitation was used meanwhile (single use)."""
    won = db.execute(
        update(Invitation)
        .where(Invitation.id == inv.id, Invitation.accepted_at.is_(None), Invitation.revoked_at.is_(None))
        .values(accepted_at=_now(), accepted_by=user_id)
        .returning(Invitation.id)
    ).first()
    if won is None:
        return False
    existing = db.execute(
        select(Membership).where(Membership.org_id == inv.org_id, Membership.user_id == user_id)
    ).scalar_one_or_none()
    if existing is None:
        db.add(Membership(org_id=inv.org_id, user_id=user_id, role=inv.role))
    return True


# --- password reset ---------------------------------------------------------------------------
def create_password_reset(db: Session, email: str, ip: str) -> tuple[User, str] | None:
    """A reset link for the account with this e-mail; None when there is no such account or it
    had MAX_RESETS_PER_HOUR links in the last hour (the caller answers the same either way)."""
    user = db.execute(select(User).where(User.email == email)).scalar_one_or_none()
    if user is None:
        return None
    now = _now()
    recent = db.execute(
        select(func.count())
        .select_from(PasswordReset)
        .where(PasswordReset.user_id == user.id, PasswordReset.created_at > now - timedelta(hours=1))
    ).scalar_one()
    if recent >= MAX_RESETS_PER_HOUR:
        return None
    secret = new_secret()
    db.add(
        PasswordReset(
            user_id=user.id,
            token_hash=sha256_hex(secret),
            expires_at=now + timedelta(seconds=get_settings().password_reset_ttl_s),
            ip=ip,
        )
    )
    return user, secret


def use_password_reset(db: Session, secret: str) -> User | None:
    """Spend a reset link: the user it belongs to, or None when it is unknown, used or expired.
    Every other open link of that user is spent with it."""
    now = _now()
    user_id = db.execute(
        update(PasswordReset)
        .where(
            PasswordReset.token_hash == sha256_hex(secret),
            PasswordReset.used_at.is_(None),
            PasswordReset.expires_at > now,
        )
        .values(used_at=now)
        .returning(PasswordReset.user_id)
    ).scalar_one_or_none()
    if user_id is None:
        return None
    db.execute(
        update(PasswordReset)
        .where(PasswordReset.user_id == user_id, PasswordReset.used_at.is_(None))
        .values(used_at=now)
    )
    return db.get(User, user_id)
