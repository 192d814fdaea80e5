"""Sign-up (confirmed by e-mail: no answer tells whether an address is taken), log-in (throttled),
log-out, password change, organization switch, memberships. Members join through invitations
they accept (account.py)."""

import secrets
import uuid
from datetime import UTC, datetime, timedelta

from fastapi import APIRouter, BackgroundTasks, Request, Response
from sqlalchemy import func, select, update
from sqlalchemy.exc import IntegrityError

from hitcurve.api.deps import (
    CSRF_COOKIE,
    SESSION_COOKIE,
    DbDep,
    OwnerDep,
    UserDep,
    client_ip,
)
from hitcurve.core.audit import audit
from hitcurve.core.config import get_settings
from hitcurve.core.errors import ApiError, not_found
from hitcurve.core.mail import send_text
from hitcurve.core.security import hash_password, new_secret, password_problem, sha256_hex, verify_password
from hitcurve.crud import accounts
from hitcurve.crud.accounts import login_failures, revoke_sessions
from hitcurve.models import LoginAttempt, Membership, Organization, User, UserSession
from hitcurve.schemas.api import (
    Accepted,
    LoginIn,
    MemberOut,
    MemberRoleIn,
    MembershipOut,
    MeOut,
    OrgIn,
    PasswordChangeIn,
    SignupConfirmIn,
    SignupIn,
    SwitchOrgIn,
    UserOut,
)

router = APIRouter(tags=["auth"])


def _now() -> datetime:
    return datetime.now(UTC)


def public_link(path: str) -> str:
    """A link in an e-mail: the dashboard's address as users reach it (Settings.public_url)."""
    return get_settings().public_url.rstrip("/") + path


def cookie_secure(request: Request) -> bool:
    """Settings.cookie_secure when set, else whether this request came over HTTPS."""
    forced = get_settings().cookie_secure
    return forced if forced is not None else request.url.scheme == "https"


def refuse_weak(password: str, field: str, *user_inputs: str) -> None:
    """422 located at the field when the password contains the user's own e-mail or name or is
    otherwise guessable (the schema already refused the generally weak ones)."""
    problem = password_problem(password, tuple(u for u in user_inputs if u))
    if problem:
        raise ApiError(
            422, "invalid_request", [{"loc": ["body", field], "msg": problem, "type": "weak_password"}]
        )


def _start_session(
    db: DbDep, request: Request, response: Response, user_id: uuid.UUID, org_id: uuid.UUID
) -> UserSession:
    s = get_settings()
    secret = new_secret()
    sess = UserSession(
        org_id=org_id,
        user_id=user_id,
        token_hash=sha256_hex(secret),
        csrf_token=secrets.token_urlsafe(32),
        expires_at=_now() + timedelta(seconds=s.session_ttl_s),
        ip=client_ip(request),
        user_agent=(request.headers.get("user-agent") or "")[:300],
    )
    db.add(sess)
    response.set_cookie(
        SESSION_COOKIE,
        secret,
        max_age=s.session_ttl_s,
        httponly=True,
        secure=cookie_secure(request),
        samesite="lax",
        path="/",
    )
    response.set_cookie(
        CSRF_COOKIE,
        sess.csrf_token,
        max_age=s.session_ttl_s,
        httponly=False,
        secure=cookie_secure(request),
        samesite="lax",
        path="/",
    )
    return sess


def _me(db: DbDep, user_id: uuid.UUID, org_id: uuid.UUID, csrf: str) -> MeOut:
    user = db.get(User, user_id)
    assert user is not None
    rows = db.execute(
        select(Membership.org_id, Organization.name, Membership.role)
        .join(Organization, Organization.id == Membership.org_id)
        .where(Membership.user_id == user_id)
        .order_by(Organization.name)
    ).all()
    ms = [MembershipOut(org_id=r[0], org_name=r[1], role=r[2]) for r in rows]
    current = next(m for m in ms if m.org_id == org_id)
    return MeOut(
        user=UserOut.model_validate(user),
        org_id=org_id,
        org_name=current.org_name,
        role=current.role,
        memberships=ms,
        csrf_token=csrf,
    )


# The one answer to every accepted sign-up: it names nothing that depends on the address (not
# even the address), so a registered and a new e-mail get byte-identical answers.
SIGNUP_ANSWER = (
    "check your inbox: we sent a message to this address; follow its link to confirm the address "
    "and finish creating your account"
)


@router.post(
    "/auth/signup",
    status_code=202,
    response_model=Accepted,
    summary="Start an account: a confirmation link goes to the e-mail (same answer for taken e-mails)",
)
def signup(body: SignupIn, request: Request, db: DbDep, tasks: BackgroundTasks) -> Accepted:
    """The answer never tells whether the e-mail has an account: a new address gets a link that
    creates the account and its organization (POST /auth/signup/confirm); the owner of a taken
    address gets a notice instead. Mails go out after the response."""
    email = body.email.lower()
    refuse_weak(body.password, "password", email, body.display_name)
    ip = client_ip(request)
    taken, secret = accounts.create_signup(db, email, body.password, body.display_name, body.org_name, ip)
    audit(db, "user.signup_requested", ip=ip, email=email, existing=taken, mailed=secret is not None)
    db.commit()
    if secret is not None and taken:
        tasks.add_task(
            send_text,
            email,
            "Your Hitcurve account",
            f"Someone (hopefully you) asked to create a Hitcurve account with {email}, which already "
            f"has one. Nothing was changed.\n\n"
            f"Log in: {public_link('/login')}\n"
            f"Forgot your password? {public_link('/forgot-password')}\n\n"
            f"If it was not you, you can ignore this mail.\n",
        )
    elif secret is not None:
        hours = get_settings().signup_ttl_s // 3600
        tasks.add_task(
            send_text,
            email,
            "Confirm your e-mail for Hitcurve",
            f"Welcome to Hitcurve. Confirm {email} to finish creating your account and the "
            f"organization {body.org_name}:\n\n"
            f"{public_link('/signup/confirm/' + secret)}\n\n"
            f"The link works once, for {hours} hours. If you did not sign up, ignore this mail: "
            f"no account is made without it.\n",
        )
    return Accepted(detail=SIGNUP_ANSWER)


@router.post(
    "/auth/signup/confirm",
    status_code=201,
    response_model=MeOut,
    summary="Confirm a sign-up with the mailed link: creates the account and its organization, logs in",
    responses={400: {"description": "the link is invalid, used or expired"}},
)
def confirm_signup(body: SignupConfirmIn, request: Request, response: Response, db: DbDep) -> MeOut:
    try:
        made = accounts.confirm_signup(db, body.token)
    except IntegrityError:  # another link of the same address made its account at the same moment
        made = None
    if made is None:
        db.rollback()
        raise ApiError(
            400, "signup_invalid", "this sign-up link is invalid, used or expired; sign up again or log in"
        )
    user, org = made
    sess = _start_session(db, request, response, user.id, org.id)
    audit(
        db,
        "user.signup",
        org_id=org.id,
        user_id=user.id,
        ip=client_ip(request),
        target_type="user",
        target_id=user.id,
    )
    db.commit()
    return _me(db, user.id, org.id, sess.csrf_token)


@router.post(
    "/auth/login",
    response_model=MeOut,
    summary="Log in; sets the session and CSRF cookies",
    responses={
        401: {"description": "wrong e-mail or password"},
        429: {"description": "too many failed attempts; retry after Retry-After seconds"},
    },
)
def login(body: LoginIn, request: Request, response: Response, db: DbDep) -> MeOut:
    s = get_settings()
    email = body.email.strip().lower()
    ip = client_ip(request)
    fails, ip_fails, all_fails = login_failures(db, email, ip)
    if (
        fails >= s.login_max_failures_per_email
        or ip_fails >= s.login_max_failures_per_ip
        or all_fails >= s.login_max_failures_global
    ):
        audit(db, "login.throttled", ip=ip, email=email)
        db.commit()
        raise ApiError(
            429,
            "too_many_attempts",
            "too many failed log-in attempts; try again later",
            headers={"Retry-After": str(s.login_window_s)},
        )
    user = db.execute(select(User).where(User.email == email)).scalar_one_or_none()
    ok = verify_password(user.password_hash if user else None, body.password)
    db.add(LoginAttempt(email=email, ip=ip, succeeded=ok))
    if not ok or user is None:
        audit(db, "login.failed", ip=ip, user_id=user.id if user else None, email=email)
        db.commit()
        raise ApiError(401, "bad_credentials", "wrong e-mail or password")
    org_id = db.execute(
        select(Membership.org_id)
        .where(Membership.user_id == user.id)
        .order_by(Membership.created_at)
        .limit(1)
    ).scalar_one_or_none()
    if org_id is None:
        db.commit()
        raise ApiError(403, "no_organization", "this account belongs to no organization any more")
    sess = _start_session(db, request, response, user.id, org_id)
    audit(db, "login.succeeded", org_id=org_id, user_id=user.id, ip=ip)
    db.commit()
    return _me(db, user.id, org_id, sess.csrf_token)


@router.post("/auth/logout", status_code=204, summary="End this browser session")
def logout(me: UserDep, request: Request, response: Response, db: DbDep) -> Response:
    db.execute(update(UserSession).where(UserSession.id == me.session_id).values(revoked_at=_now()))
    audit(db, "logout", org_id=me.org_id, user_id=me.user_id, ip=client_ip(request))
    db.commit()
    out = Response(status_code=204)
    out.delete_cookie(SESSION_COOKIE, path="/")
    out.delete_cookie(CSRF_COOKIE, path="/")
    return out


@router.get("/auth/me", response_model=MeOut, summary="The logged-in user, current organization and role")
def me(me: UserDep, db: DbDep) -> MeOut:
    sess = db.get(UserSession, me.session_id)
    assert sess is not None and me.user_id is not None
    return _me(db, me.user_id, me.org_id, sess.csrf_token)


@router.post(
    "/auth/password",
    status_code=204,
    summary="Change the password; ends the user's other sessions",
    responses={401: {"description": "current password is wrong"}},
)
def change_password(body: PasswordChangeIn, me: UserDep, request: Request, db: DbDep) -> Response:
    user = db.get(User, me.user_id)
    assert user is not None
    if not verify_password(user.password_hash, body.current_password):
        audit(db, "password.change_failed", org_id=me.org_id, user_id=me.user_id, ip=client_ip(request))
        db.commit()
        raise ApiError(401, "bad_credentials", "the current password is wrong")
    refuse_weak(body.new_password, "new_password", user.email, user.display_name)
    user.password_hash = hash_password(body.new_password)
    user.password_changed_at = _now()
    revoke_sessions(db, user.id, keep=me.session_id)
    audit(db, "password.changed", org_id=me.org_id, user_id=me.user_id, ip=client_ip(request))
    db.commit()
    return Response(status_code=204)


@router.post(
    "/auth/switch-org", response_model=MeOut, summary="Act in another organization the user belongs to"
)
def switch_org(body: SwitchOrgIn, me: UserDep, db: DbDep) -> MeOut:
    member = db.execute(
        select(Membership.id).where(Membership.user_id == me.user_id, Membership.org_id == body.org_id)
    ).first()
    if member is None:
        raise not_found("organization")
    sess = db.get(UserSession, me.session_id)
    assert sess is not None and me.user_id is not None
    sess.org_id = body.org_id
    audit(db, "org.switched", org_id=body.org_id, user_id=me.user_id, from_org=str(me.org_id))
    db.commit()
    return _me(db, me.user_id, body.org_id, sess.csrf_token)


@router.get("/orgs", response_model=list[MembershipOut], summary="The organizations the user belongs to")
def my_orgs(me: UserDep, db: DbDep) -> list[MembershipOut]:
    rows = db.execute(
        select(Membership.org_id, Organization.name, Membership.role)
        .join(Organization, Organization.id == Membership.org_id)
        .where(Membership.user_id == me.user_id)
        .order_by(Organization.name)
    ).all()
    return [MembershipOut(org_id=r[0], org_name=r[1], role=r[2]) for r in rows]


@router.post(
    "/orgs", status_code=201, response_model=MembershipOut, summary="Create another organization (you own it)"
)
def create_org(body: OrgIn, me: UserDep, db: DbDep) -> MembershipOut:
    org = Organization(name=body.name)
    db.add(org)
    db.flush()
    db.add(Membership(org_id=org.id, user_id=me.user_id, role="owner"))
    audit(db, "org.created", org_id=org.id, user_id=me.user_id, target_type="organization", target_id=org.id)
    db.commit()
    return MembershipOut(org_id=org.id, org_name=org.name, role="owner")


def _members(db: DbDep, org_id: uuid.UUID) -> list[MemberOut]:
    rows = db.execute(
        select(User.id, User.email, User.display_name, Membership.role, Membership.created_at)
        .join(Membership, Membership.user_id == User.id)
        .where(Membership.org_id == org_id)
        .order_by(User.email)
    ).all()
    return [MemberOut(user_id=r[0], email=r[1], display_name=r[2], role=r[3], created_at=r[4]) for r in rows]


@router.get("/org/members", response_model=list[MemberOut], summary="Members of the current organization")
def list_members(me: UserDep, db: DbDep) -> list[MemberOut]:
    return _members(db, me.org_id)


def _owner_count(db: DbDep, org_id: uuid.UUID) -> int:
    return db.execute(
        select(func.count())
        .select_from(Membership)
        .where(Membership.org_id == org_id, Membership.role == "owner")
    ).scalar_one()


@router.patch(
    "/org/members/{user_id}", response_model=list[MemberOut], summary="Change a member's role (owners only)"
)
def change_role(user_id: uuid.UUID, body: MemberRoleIn, me: OwnerDep, db: DbDep) -> list[MemberOut]:
    m = db.execute(
        select(Membership).where(Membership.org_id == me.org_id, Membership.user_id == user_id)
    ).scalar_one_or_none()
    if m is None:
        raise not_found("member")
    if m.role == "owner" and body.role != "owner" and _owner_count(db, me.org_id) <= 1:
        raise ApiError(409, "last_owner", "an organization needs at least one owner")
    m.role = body.role
    audit(
        db,
        "member.role_changed",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="user",
        target_id=user_id,
        role=body.role,
    )
    db.commit()
    return _members(db, me.org_id)


@router.delete("/org/members/{user_id}", status_code=204, summary="Remove a member (owners only)")
def remove_member(user_id: uuid.UUID, me: OwnerDep, db: DbDep) -> Response:
    m = db.execute(
        select(Membership).where(Membership.org_id == me.org_id, Membership.user_id == user_id)
    ).scalar_one_or_none()
    if m is None:
        raise not_found("member")
    if m.role == "owner" and _owner_count(db, me.org_id) <= 1:
        raise ApiError(409, "last_owner", "an organization needs at least one owner")
    db.delete(m)
    db.execute(
        update(UserSession)
        .where(
            UserSession.user_id == user_id, UserSession.org_id == me.org_id, UserSession.revoked_at.is_(None)
        )
        .values(revoked_at=_now())
    )
    audit(db, "member.removed", org_id=me.org_id, user_id=me.user_id, target_type="user", target_id=user_id)
    db.commit()
    return Response(status_code=204)
