"""Data access for accounts: log-in throttling counts, sign-ups confirmed by e-mail,
invitations, password resets, browser sessions, memberships and organizations.

Secrets (invitation and reset links) are 256-bit random strings; only their SHA-256 is stored.
"""

import secrets
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import delete, func, select, update
from sqlalchemy.orm import Session

from hitcurve.core.config import get_settings
from hitcurve.core.domain import NotFound
from hitcurve.core.security import hash_password, new_secret, sha256_hex
from hitcurve.models import (
    Invitation,
    LoginAttempt,
    Membership,
    Organization,
    PasswordReset,
    SignupRequest,
    User,
    UserSession,
)
from hitcurve.schemas.api import MemberOut, MembershipOut, MeOut, UserOut

# Reset mails one account gets per hour at most; further requests answer the same and send none.
MAX_RESETS_PER_HOUR = 3
# Sign-up mails (a confirmation link, or the notice to an existing account) one address gets per
# hour at most: sign-up cannot be used to flood someone's inbox.
MAX_SIGNUP_MAILS_PER_HOUR = 3


# Spent or expired account links (sign-ups, password resets, unaccepted invitations) are kept
# this long past their expiry, then deleted by the worker's hourly storage job: an unconfirmed
# sign-up holds an e-mail address and a password hash, which nobody may keep for ever.
ACCOUNT_LINKS_KEPT_AFTER_EXPIRY = timedelta(days=7)


def _now() -> datetime:
    return datetime.now(UTC)


# Advisory-lock namespaces (the first key of pg_advisory_xact_lock(int, int)) of the log-in limits.
_LOCK_LOGIN_EMAIL = 0x4C47_4E45  # "LGNE"
_LOCK_LOGIN_IP = 0x4C47_4E49  # "LGNI"


def reserve_login_attempt(db: Session, email: str, ip: str) -> LoginAttempt | None:
    """The log-in limits, taken atomically before any password work: under a transaction lock on
    the e-mail and one on the address (always in that order), count the recent failures and, when
    every limit allows one more, record this attempt as failed until it succeeds
    (login_succeeded). None when a limit is reached. The caller commits at once, which releases
    the locks: 16 concurrent guesses at one e-mail get at most its limit's password checks, the
    rest a 429, whatever their timing."""
    s = get_settings()
    db.execute(select(func.pg_advisory_xact_lock(_LOCK_LOGIN_EMAIL, func.hashtext(email))))
    db.execute(select(func.pg_advisory_xact_lock(_LOCK_LOGIN_IP, func.hashtext(ip))))
    fails, ip_fails, all_fails = login_failures(db, email, ip)
    if (
        fails >= s.login_max_failures_per_email
        or ip_fails >= s.login_max_failures_per_ip
        or all_fails >= s.login_max_failures_global
    ):
        return None
    attempt = LoginAttempt(email=email, ip=ip, succeeded=False)
    db.add(attempt)
    db.flush()
    return attempt


def forget_login_attempt(db: Session, attempt_id: int) -> None:
    """An attempt reserved but never checked (the password work was refused as busy)."""
    db.execute(delete(LoginAttempt).where(LoginAttempt.id == attempt_id))


def login_succeeded(db: Session, attempt_id: int) -> None:
    db.execute(update(LoginAttempt).where(LoginAttempt.id == attempt_id).values(succeeded=True))


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


def _spend(
    db: Session, model: type[PasswordReset] | type[SignupRequest], secret: str, now: datetime, returning: Any
) -> Any:
    """Spend a single-use, expiring link (password reset, sign-up) in one statement: what
    `returning` names, or None when the link is unknown, used or expired (two concurrent uses of
    one link: only one gets a row)."""
    return db.execute(
        update(model)
        .where(model.token_hash == sha256_hex(secret), model.used_at.is_(None), model.expires_at > now)
        .values(used_at=now)
        .returning(returning)
    ).scalar_one_or_none()


# --- password reset ---------------------------------------------------------------------------
def create_password_reset(db: Session, email: str, ip: str) -> tuple[User, str] | None:
    """A reset link for the account with this e-mail; None when there is no such account or it
    had MAX_RESETS_PER_HOUR links in the last hour (the caller answers the same either way)."""
    user = db.execute(select(User).where(User.email == email)).scalar_one_or_none()
    now = _now()
    # the count runs for an unknown e-mail too (on a nil id): the answer takes as long either way
    recent = db.execute(
        select(func.count())
        .select_from(PasswordReset)
        .where(
            PasswordReset.user_id == (user.id if user else uuid.UUID(int=0)),
            PasswordReset.created_at > now - timedelta(hours=1),
        )
    ).scalar_one()
    if user is None or recent >= MAX_RESETS_PER_HOUR:
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
    user_id = _spend(db, PasswordReset, secret, now, PasswordReset.user_id)
    if user_id is None:
        return None
    db.execute(
        update(PasswordReset)
        .where(PasswordReset.user_id == user_id, PasswordReset.used_at.is_(None))
        .values(used_at=now)
    )
    return db.get(User, user_id)


# --- sign-up -----------------------------------------------------------------------------------
def email_taken(db: Session, email: str) -> bool:
    return db.execute(select(User.id).where(User.email == email)).first() is not None


def create_signup(
    db: Session, email: str, password: str, display_name: str, org_name: str, ip: str
) -> tuple[bool, str | None]:
    """Record a sign-up for `email`: (taken, secret). The password is hashed whether or not the
    address has an account, and the same rows are read and written, so the answer takes as long
    either way. A taken address gets a notice instead of a link (its row is spent at once and
    holds no password); secret is None when the address had MAX_SIGNUP_MAILS_PER_HOUR sign-up
    mails in the last hour (send nothing)."""
    password_hash = hash_password(password)
    taken = email_taken(db, email)
    now = _now()
    recent = db.execute(
        select(func.count())
        .select_from(SignupRequest)
        .where(SignupRequest.email == email, SignupRequest.created_at > now - timedelta(hours=1))
    ).scalar_one()
    if recent >= MAX_SIGNUP_MAILS_PER_HOUR:
        return taken, None
    secret = new_secret()
    # A taken address gets a row too (spent at once, so it never confirms anything): it counts
    # toward the hourly limit of notices like a confirmation does, and costs the same insert.
    db.add(
        SignupRequest(
            email=email,
            token_hash=sha256_hex(secret),
            password_hash="" if taken else password_hash,
            display_name=display_name,
            org_name=org_name,
            expires_at=now + timedelta(seconds=get_settings().signup_ttl_s),
            used_at=now if taken else None,
            ip=ip,
        )
    )
    return taken, secret


def confirm_signup(db: Session, secret: str) -> tuple[User, Organization] | None:
    """Spend a sign-up link and make its account: the user, an organization and the owner
    membership. None when the link is unknown, used or expired, or the address got an account
    meanwhile (through another link)."""
    now = _now()
    req = _spend(db, SignupRequest, secret, now, SignupRequest)
    if req is None or email_taken(db, req.email):
        return None
    user = User(email=req.email, display_name=req.display_name, password_hash=req.password_hash)
    org = _owner_account(db, user, req.org_name)
    # the address's other open links are spent with it
    db.execute(
        update(SignupRequest)
        .where(SignupRequest.email == req.email, SignupRequest.used_at.is_(None))
        .values(used_at=now)
    )
    return user, org


def _owner_account(db: Session, user: User, org_name: str) -> Organization:
    org = Organization(name=org_name)
    db.add_all([user, org])
    db.flush()
    db.add(Membership(org_id=org.id, user_id=user.id, role="owner"))
    return org


def create_account(
    db: Session, email: str, password: str, display_name: str, org_name: str
) -> tuple[User, Organization]:
    """An account made by the operator, confirmed without a mail (the demo set-up, the e2e seed,
    test fixtures): the user, an organization and the owner membership."""
    user = User(email=email, display_name=display_name, password_hash=hash_password(password))
    return user, _owner_account(db, user, org_name)


# --- sessions, memberships and organizations ---------------------------------------------------
def new_session(
    db: Session, user_id: uuid.UUID, org_id: uuid.UUID, ip: str, user_agent: str
) -> tuple[UserSession, str]:
    """A browser session row (SHA-256 of its secret, a CSRF token) and the secret for its cookie."""
    secret = new_secret()
    sess = UserSession(
        org_id=org_id,
        user_id=user_id,
        token_hash=sha256_hex(secret),
        csrf_token=secrets.token_urlsafe(32),
        expires_at=_now() + timedelta(seconds=get_settings().session_ttl_s),
        ip=ip,
        user_agent=user_agent[:300],
    )
    db.add(sess)
    return sess, secret


def memberships(db: Session, user_id: uuid.UUID) -> list[MembershipOut]:
    """The user's organizations by name, with the user's role in each."""
    rows = db.execute(
        select(Membership.org_id, Organization.name, Membership.role)
        .join(Organization, Organization.id == Membership.org_id)
        .where(Membership.user_id == user_id)
        .order_by(Organization.name)
    ).all()
    return [MembershipOut(org_id=r[0], org_name=r[1], role=r[2]) for r in rows]


def me(db: Session, user_id: uuid.UUID, org_id: uuid.UUID, csrf: str) -> MeOut:
    """The logged-in user, the session's organization and role, all memberships."""
    user = db.get(User, user_id)
    assert user is not None
    ms = memberships(db, user_id)
    current = next(m for m in ms if m.org_id == org_id)
    return MeOut(
        user=UserOut.model_validate(user),
        org_id=org_id,
        org_name=current.org_name,
        role=current.role,
        memberships=ms,
        csrf_token=csrf,
    )


def first_org(db: Session, user_id: uuid.UUID) -> uuid.UUID | None:
    """The organization a log-in starts in: the user's oldest membership."""
    return db.execute(
        select(Membership.org_id)
        .where(Membership.user_id == user_id)
        .order_by(Membership.created_at)
        .limit(1)
    ).scalar_one_or_none()


def membership(db: Session, org_id: uuid.UUID, user_id: uuid.UUID) -> Membership:
    """The user's membership of the organization, else 404 (as for another organization's user)."""
    m = db.execute(
        select(Membership).where(Membership.org_id == org_id, Membership.user_id == user_id)
    ).scalar_one_or_none()
    if m is None:
        raise NotFound("member")
    return m


def belongs(db: Session, user_id: uuid.UUID, org_id: uuid.UUID) -> bool:
    return (
        db.execute(
            select(Membership.id).where(Membership.user_id == user_id, Membership.org_id == org_id)
        ).first()
        is not None
    )


def members(db: Session, org_id: uuid.UUID) -> list[MemberOut]:
    rows = db.execute(
        select(User.id, User.email, User.display_name, Membership.role, Membership.created_at)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.org_id == org_id)
        .order_by(User.email)
    ).all()
    return [MemberOut(user_id=r[0], email=r[1], display_name=r[2], role=r[3], created_at=r[4]) for r in rows]


def last_owner(db: Session, m: Membership) -> bool:
    """Whether m is the organization's only owner (who may be neither demoted nor removed)."""
    owners = db.execute(
        select(func.count())
        .select_from(Membership)
        .where(Membership.org_id == m.org_id, Membership.role == "owner")
    ).scalar_one()
    return m.role == "owner" and owners <= 1


def remove_member(db: Session, m: Membership) -> None:
    """Delete the membership and end the member's sessions in that organization."""
    user_id, org_id = m.user_id, m.org_id
    db.delete(m)
    db.execute(
        update(UserSession)
        .where(
            UserSession.user_id == user_id,
            UserSession.org_id == org_id,
            UserSession.revoked_at.is_(None),
        )
        .values(revoked_at=_now())
    )


def create_org(db: Session, name: str, owner_id: uuid.UUID) -> Organization:
    org = Organization(name=name)
    db.add(org)
    db.flush()
    db.add(Membership(org_id=org.id, user_id=owner_id, role="owner"))
    return org


# --- retention ----------------------------------------------------------------------------------
def purge_expired_links(db: Session, at: datetime) -> int:
    """Delete sign-up requests, password resets and unaccepted invitations that expired more than
    ACCOUNT_LINKS_KEPT_AFTER_EXPIRY before `at`. Accepted invitations stay (who let whom in); the
    hourly mail limits count only the last hour, so nothing they read is deleted."""
    before = at - ACCOUNT_LINKS_KEPT_AFTER_EXPIRY
    n = 0
    for stmt in (
        delete(SignupRequest).where(SignupRequest.expires_at < before),
        delete(PasswordReset).where(PasswordReset.expires_at < before),
        delete(Invitation).where(Invitation.expires_at < before, Invitation.accepted_at.is_(None)),
    ):
        n += db.execute(stmt).rowcount or 0  # type: ignore[attr-defined]
    return n
