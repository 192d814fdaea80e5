"""Sign-up (confirmed by e-mail: no answer tells whether an address is taken), log-in (throttled),
log-out, password change, organization switch, memberships. Members join through invitations
they accept (account.py)."""

import time
import uuid
from datetime import UTC, datetime

from fastapi import APIRouter, BackgroundTasks, Request, Response
from sqlalchemy import select, update
from sqlalchemy.exc import IntegrityError

from hitcurve.api.deps import (
    CSRF_COOKIE,
    MAIL_UNAVAILABLE,
    SESSION_COOKIE,
    DbDep,
    OwnerDep,
    UserDep,
    client_ip,
    require_mail,
)
from hitcurve.core import ratelimit
from hitcurve.core.audit import audit
from hitcurve.core.config import get_settings
from hitcurve.core.domain import NotFound, Unavailable
from hitcurve.core.errors import ApiError
from hitcurve.core.mail import send_text
from hitcurve.core.security import hash_password, refuse_weak, verify_password
from hitcurve.crud import accounts
from hitcurve.crud.accounts import revoke_sessions
from hitcurve.models import User, UserSession
from hitcurve.notify import account_mail as mail
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
)

router = APIRouter(tags=["auth"])


def _now() -> datetime:
    return datetime.now(UTC)


def cookie_secure(request: Request) -> bool:
    """Settings.cookie_secure when set, else whether this request came over HTTPS."""
    forced = get_settings().cookie_secure
    return forced if forced is not None else request.url.scheme == "https"


def _start_session(
    db: DbDep, request: Request, response: Response, user_id: uuid.UUID, org_id: uuid.UUID
) -> UserSession:
    s = get_settings()
    sess, secret = accounts.new_session(
        db, user_id, org_id, client_ip(request), request.headers.get("user-agent") or ""
    )
    secure = cookie_secure(request)
    # the session secret is HttpOnly; the CSRF token is read by the dashboard's script
    for name, value, httponly in ((SESSION_COOKIE, secret, True), (CSRF_COOKIE, sess.csrf_token, False)):
        response.set_cookie(
            name, value, max_age=s.session_ttl_s, httponly=httponly, secure=secure, samesite="lax", path="/"
        )
    return sess


@router.post(
    "/auth/signup",
    status_code=202,
    response_model=Accepted,
    responses=MAIL_UNAVAILABLE,
    summary="Start an account: a confirmation link goes to the e-mail (same answer for taken e-mails)",
)
def signup(body: SignupIn, request: Request, db: DbDep, tasks: BackgroundTasks) -> Accepted:
    """The answer never tells whether the e-mail has an account: a new address gets a link that
    creates the account and its organization (POST /auth/signup/confirm); the owner of a taken
    address gets a notice instead. Mails go out after the response."""
    email = body.email.lower()
    ip = client_ip(request)
    # counted before any password work (strength check, hashing); Redis unreachable: not counted,
    # the hashing is still bounded (core.security.password_slot)
    limit = get_settings().signup_max_per_ip_per_hour
    count = ratelimit.count_in_window("signup_ip", ip, 3600)
    if count is not None and count > limit:
        raise ApiError(
            429,
            "too_many_signups",
            f"more than {limit} sign-ups from this address in an hour; try again later",
            headers={"Retry-After": str(3600 - int(time.time()) % 3600)},
        )
    refuse_weak(body.password, "password", email, body.display_name)
    require_mail()
    taken, secret = accounts.create_signup(db, email, body.password, body.display_name, body.org_name, ip)
    audit(db, "user.signup_requested", ip=ip, email=email, existing=taken, mailed=secret is not None)
    db.commit()
    if secret is not None:
        what = mail.signup_taken(email) if taken else mail.signup_confirm(email, body.org_name, secret)
        tasks.add_task(send_text, email, *what)
    return Accepted(detail=mail.SIGNUP_ANSWER)


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
    return accounts.me(db, user.id, org.id, sess.csrf_token)


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
    attempt = accounts.reserve_login_attempt(db, email, ip)
    if attempt is None:
        audit(db, "login.throttled", ip=ip, email=email)
        db.commit()
        raise ApiError(
            429,
            "too_many_attempts",
            "too many failed log-in attempts; try again later",
            headers={"Retry-After": str(s.login_window_s)},
        )
    user = db.execute(select(User).where(User.email == email)).scalar_one_or_none()
    # the attempt is recorded (as failed until it succeeds) and the connection returned to the
    # pool before the password work, which waits for a slot of its own (core.security)
    db.commit()
    try:
        ok = verify_password(user.password_hash if user else None, body.password)
    except Unavailable:
        # every password slot busy: no guess was checked, so none counts toward a limit
        accounts.forget_login_attempt(db, attempt.id)
        db.commit()
        raise
    if not ok or user is None:
        audit(db, "login.failed", ip=ip, user_id=user.id if user else None, email=email)
        db.commit()
        raise ApiError(401, "bad_credentials", "wrong e-mail or password")
    accounts.login_succeeded(db, attempt.id)
    org_id = accounts.first_org(db, user.id)
    if org_id is None:
        db.commit()
        raise ApiError(403, "no_organization", "this account belongs to no organization any more")
    sess = _start_session(db, request, response, user.id, org_id)
    audit(db, "login.succeeded", org_id=org_id, user_id=user.id, ip=ip)
    db.commit()
    return accounts.me(db, user.id, org_id, sess.csrf_token)


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
    return accounts.me(db, me.user_id, me.org_id, sess.csrf_token)


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
    if not accounts.belongs(db, me.user, body.org_id):
        raise NotFound("organization")
    sess = db.get(UserSession, me.session_id)
    assert sess is not None and me.user_id is not None
    sess.org_id = body.org_id
    audit(db, "org.switched", org_id=body.org_id, user_id=me.user_id, from_org=str(me.org_id))
    db.commit()
    return accounts.me(db, me.user_id, body.org_id, sess.csrf_token)


@router.get("/orgs", response_model=list[MembershipOut], summary="The organizations the user belongs to")
def my_orgs(me: UserDep, db: DbDep) -> list[MembershipOut]:
    return accounts.memberships(db, me.user)


@router.post(
    "/orgs", status_code=201, response_model=MembershipOut, summary="Create another organization (you own it)"
)
def create_org(body: OrgIn, me: UserDep, db: DbDep) -> MembershipOut:
    org = accounts.create_org(db, body.name, me.user)
    audit(db, "org.created", org_id=org.id, user_id=me.user_id, target_type="organization", target_id=org.id)
    db.commit()
    return MembershipOut(org_id=org.id, org_name=org.name, role="owner")


@router.get("/org/members", response_model=list[MemberOut], summary="Members of the current organization")
def list_members(me: UserDep, db: DbDep) -> list[MemberOut]:
    return accounts.members(db, me.org_id)


@router.patch(
    "/org/members/{user_id}", response_model=list[MemberOut], summary="Change a member's role (owners only)"
)
def change_role(user_id: uuid.UUID, body: MemberRoleIn, me: OwnerDep, db: DbDep) -> list[MemberOut]:
    m = accounts.membership(db, me.org_id, user_id)
    if body.role != "owner" and accounts.last_owner(db, m):
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
    return accounts.members(db, me.org_id)


@router.delete("/org/members/{user_id}", status_code=204, summary="Remove a member (owners only)")
def remove_member(user_id: uuid.UUID, me: OwnerDep, db: DbDep) -> Response:
    m = accounts.membership(db, me.org_id, user_id)
    if accounts.last_owner(db, m):
        raise ApiError(409, "last_owner", "an organization needs at least one owner")
    accounts.remove_member(db, m)
    audit(db, "member.removed", org_id=me.org_id, user_id=me.user_id, target_type="user", target_id=user_id)
    db.commit()
    return Response(status_code=204)
