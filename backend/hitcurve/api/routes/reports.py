"""The weekly e-mail from the dashboard: a preview and "send me a test" for the logged-in user
(the organization is the session's), the recipient's confirmation of a subscription and the
one-click unsubscribe, both by the signed links of their e-mails, which need no session (RFC 8058:
mail clients POST to the List-Unsubscribe URL)."""

import uuid
from typing import Annotated, TypeVar

from fastapi import APIRouter, BackgroundTasks, Query, Request

from hitcurve.api.deps import MAIL_UNAVAILABLE, DbDep, UserDep, client_ip, require_mail
from hitcurve.core.audit import audit
from hitcurve.core.errors import ApiError
from hitcurve.core.mail import send_message
from hitcurve.crud import reports
from hitcurve.models import User
from hitcurve.schemas.api import Accepted, ReportConfirmedOut, ReportPreviewOut, ReportTestIn, UnsubscribeOut

router = APIRouter(tags=["operations"])


def _email(db: DbDep, user_id: uuid.UUID | None) -> str:
    user = db.get(User, user_id) if user_id else None
    if user is None:
        raise ApiError(403, "user_only", "previews and test mails are for logged-in users")
    return user.email


@router.get(
    "/reports/preview",
    response_model=ReportPreviewOut,
    summary="The weekly e-mail as it would be sent now to you (charts inline as data: URLs)",
)
def preview_report(
    me: UserDep,
    db: DbDep,
    cluster_id: Annotated[uuid.UUID | None, Query(description="one cluster; omitted: all")] = None,
) -> ReportPreviewOut:
    return reports.preview(db, me.org_id, cluster_id, _email(db, me.user_id))


@router.post(
    "/reports/test",
    status_code=202,
    response_model=Accepted,
    responses=MAIL_UNAVAILABLE,
    summary="Send the weekly e-mail now, marked as a test, to your own address",
)
def send_test_report(body: ReportTestIn, me: UserDep, db: DbDep, tasks: BackgroundTasks) -> Accepted:
    email = _email(db, me.user_id)
    msg = reports.test_message(db, me.org_id, body.cluster_id, email)
    require_mail()
    audit(db, "report.test_sent", org_id=me.org_id, user_id=me.user_id, email=email)
    db.commit()
    tasks.add_task(send_message, msg)
    return Accepted(detail=f"a test report is on its way to {email}")


Followed = TypeVar("Followed", UnsubscribeOut, ReportConfirmedOut)


def _followed(db: DbDep, request: Request, action: str, out: Followed, org_id: uuid.UUID | None) -> Followed:
    """Audit what a mailed link changed (nothing to audit when it was done already) and commit."""
    if not out.already:
        audit(
            db,
            action,
            org_id=org_id,
            ip=client_ip(request),
            target_type="report_subscription",
            target_id=out.subscription_id,
            email=out.email,
        )
    db.commit()
    return out


@router.post(
    "/reports/unsubscribe/{token}",
    response_model=UnsubscribeOut,
    summary="Unsubscribe with the e-mail's signed link (no log-in; repeating it changes nothing)",
    responses={404: {"description": "the link is not valid"}},
)
def unsubscribe(token: str, request: Request, db: DbDep) -> UnsubscribeOut:
    done = reports.unsubscribe(db, token)
    if done is None:
        raise ApiError(
            404,
            "unsubscribe_invalid",
            "this unsubscribe link is not valid; manage reports from the dashboard",
        )
    return _followed(db, request, "report_subscription.unsubscribed", *done)


@router.post(
    "/reports/confirm/{token}",
    response_model=ReportConfirmedOut,
    summary="Confirm a report recipient with the confirmation mail's signed link (no log-in; idempotent)",
    responses={404: {"description": "the link is not valid (or its subscription changed or is gone)"}},
)
def confirm_recipient(token: str, request: Request, db: DbDep) -> ReportConfirmedOut:
    done = reports.confirm(db, token)
    if done is None:
        raise ApiError(
            404,
            "confirmation_invalid",
            "this confirmation link is not valid: the subscription was removed or its address changed",
        )
    return _followed(db, request, "report_subscription.confirmed", *done)
