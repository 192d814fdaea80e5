"""Invitations (an owner invites an e-mail; the invited person accepts) and password reset by
e-mail. No answer here tells whether an e-mail has an account: inviting and asking for a reset
answer the same either way, and the mails go out after the response."""

import uuid
from datetime import UTC, datetime

from fastapi import APIRouter, BackgroundTasks, Request, Response
from sqlalchemy import select, update

from hitcurve.api.deps import MAIL_UNAVAILABLE, DbDep, OwnerDep, UserDep, client_ip, require_mail
from hitcurve.core.audit import audit
from hitcurve.core.domain import NotFound
from hitcurve.core.errors import ApiError
from hitcurve.core.mail import send_text
from hitcurve.core.security import hash_password, refuse_weak
from hitcurve.crud import accounts
from hitcurve.models import Invitation, Organization, User
from hitcurve.notify import account_mail as mail
from hitcurve.schemas.api import (
    Accepted,
    InvitationAcceptIn,
    InvitationIn,
    InvitationOut,
    InvitationView,
    MembershipOut,
    PasswordResetConfirmIn,
    PasswordResetIn,
)

router = APIRouter(tags=["auth"])


@router.post(
    "/org/invitations",
    status_code=201,
    response_model=InvitationOut,
    summary="Invite an e-mail address into the current organization (owners only)",
    responses={
        409: {"description": "already a member of this organization"},
        **MAIL_UNAVAILABLE,
    },
)
def invite(body: InvitationIn, me: OwnerDep, db: DbDep, tasks: BackgroundTasks) -> InvitationOut:
    email = body.email.lower()
    if accounts.is_member(db, me.org_id, email):
        raise ApiError(409, "already_member", "this e-mail is already a member of this organization")
    require_mail()
    inv, secret = accounts.create_invitation(db, me.org_id, email, body.role, me.user_id)
    org = db.get(Organization, me.org_id)
    inviter = db.get(User, me.user_id)
    audit(
        db,
        "member.invited",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="invitation",
        target_id=inv.id,
        role=body.role,
    )
    db.commit()
    who = inviter.email if inviter else "An owner"
    org_name = org.name if org else "an organization"
    tasks.add_task(
        send_text, email, *mail.invitation(email, who, org_name, body.role, secret, inv.expires_at)
    )
    return InvitationOut.model_validate(inv)


@router.get(
    "/org/invitations",
    response_model=list[InvitationOut],
    summary="Pending invitations of the current organization (owners only)",
)
def list_invitations(me: OwnerDep, db: DbDep) -> list[InvitationOut]:
    return [InvitationOut.model_validate(i) for i in accounts.pending_invitations(db, me.org_id)]


@router.delete("/org/invitations/{invitation_id}", status_code=204, summary="Withdraw an invitation")
def revoke_invitation(invitation_id: uuid.UUID, me: OwnerDep, db: DbDep) -> Response:
    done = db.execute(
        update(Invitation)
        .where(Invitation.id == invitation_id, Invitation.org_id == me.org_id)
        .where(Invitation.accepted_at.is_(None))
        .values(revoked_at=datetime.now(UTC))
        .returning(Invitation.id)
    ).first()
    if done is None:
        raise NotFound("invitation")
    audit(
        db,
        "member.invitation_revoked",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="invitation",
        target_id=invitation_id,
    )
    db.commit()
    return Response(status_code=204)


def _open(db: DbDep, token: str) -> Invitation:
    inv = accounts.open_invitation(db, token)
    if inv is None:
        raise ApiError(404, "invitation_invalid", mail.INVALID_INVITATION)
    return inv


@router.get(
    "/invitations/{token}",
    response_model=InvitationView,
    summary="What an invitation link offers (for its holder, before logging in)",
)
def view_invitation(token: str, db: DbDep) -> InvitationView:
    inv = _open(db, token)
    org = db.get(Organization, inv.org_id)
    inviter = db.get(User, inv.invited_by) if inv.invited_by else None
    return InvitationView(
        org_name=org.name if org else "",
        role=inv.role,
        email=inv.email,
        invited_by=inviter.email if inviter else None,
        expires_at=inv.expires_at,
    )


@router.post(
    "/invitations/accept",
    response_model=MembershipOut,
    summary="Accept an invitation: the logged-in user (with the invited e-mail) joins the organization",
    responses={403: {"description": "logged in with another e-mail than the invited one"}},
)
def accept_invitation(body: InvitationAcceptIn, me: UserDep, db: DbDep, request: Request) -> MembershipOut:
    inv = _open(db, body.token)
    user = db.get(User, me.user_id)
    assert user is not None
    if user.email != inv.email:
        raise ApiError(
            403, "invitation_other_email", "this invitation is for another e-mail address: log in with it"
        )
    if not accounts.accept_invitation(db, inv, user.id):
        db.rollback()
        raise ApiError(404, "invitation_invalid", mail.INVALID_INVITATION)
    audit(
        db,
        "member.joined",
        org_id=inv.org_id,
        user_id=user.id,
        ip=client_ip(request),
        target_type="invitation",
        target_id=inv.id,
        role=inv.role,
    )
    db.commit()
    org_name = db.execute(select(Organization.name).where(Organization.id == inv.org_id)).scalar_one()
    return MembershipOut(org_id=inv.org_id, org_name=org_name, role=inv.role)


@router.post(
    "/auth/password-reset",
    status_code=202,
    response_model=Accepted,
    responses=MAIL_UNAVAILABLE,
    summary="Mail a single-use password-reset link (answers the same for unknown e-mails)",
)
def request_password_reset(
    body: PasswordResetIn, request: Request, db: DbDep, tasks: BackgroundTasks
) -> Accepted:
    email = body.email.strip().lower()
    require_mail()
    ip = client_ip(request)
    made = accounts.create_password_reset(db, email, ip)
    audit(db, "password.reset_requested", ip=ip, email=email, user_id=made[0].id if made else None)
    db.commit()
    if made is not None:
        tasks.add_task(send_text, email, *mail.password_reset(email, made[1]))
    return Accepted(detail=mail.RESET_ANSWER)


@router.post(
    "/auth/password-reset/confirm",
    status_code=204,
    summary="Set a new password with a reset link; ends every session of the account",
    responses={400: {"description": "the link is invalid, used or expired"}},
)
def confirm_password_reset(body: PasswordResetConfirmIn, request: Request, db: DbDep) -> Response:
    user = accounts.use_password_reset(db, body.token)
    if user is None:
        db.rollback()
        raise ApiError(400, "reset_invalid", "this reset link is invalid, used or expired; ask for a new one")
    refuse_weak(body.new_password, "new_password", user.email, user.display_name)
    user.password_hash = hash_password(body.new_password)
    user.password_changed_at = datetime.now(UTC)
    accounts.revoke_sessions(db, user.id)
    audit(db, "password.reset", user_id=user.id, ip=client_ip(request))
    db.commit()
    return Response(status_code=204)
