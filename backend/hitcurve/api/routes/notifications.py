"""Alert notification channels (webhook, Slack, PagerDuty, Alertmanager), "send test" and the
delivery log. HTTP only: rows and attempts live in crud/notifications.py, bodies in notify.py."""

import uuid
from datetime import UTC, datetime
from typing import Any

from fastapi import APIRouter, Response

from hitcurve.api.deps import DbDep, Limit, MemberDep, Offset, OwnerDep, ReaderDep, UserDep
from hitcurve.core import tasks
from hitcurve.core.audit import audit
from hitcurve.core.errors import ApiError
from hitcurve.core.task_names import DELIVER_ALERT
from hitcurve.crud import install
from hitcurve.crud import notifications as crud
from hitcurve.models import NotificationChannel, User
from hitcurve.notify import outbound
from hitcurve.notify.payloads import PAGERDUTY_URL
from hitcurve.schemas.notifications import (
    ChannelCreated,
    ChannelIn,
    ChannelOut,
    ChannelPatch,
    DeliveryOut,
    InstallSettingsOut,
    InstallSettingsPatch,
    OpenAlertsQueued,
)
from hitcurve.views.notifications import channel_out, delivery_out

router = APIRouter(tags=["notifications"])
BLOCKED: dict[int | str, dict[str, Any]] = {
    422: {"description": "invalid request, or a target on a refused address (code blocked_target)"}
}


def _checked_url(db: DbDep, url: str) -> str:
    try:
        return outbound.check_url(url, allow_private=install.private_webhooks_allowed(db))
    except outbound.BlockedTarget as exc:
        raise ApiError(422, "blocked_target", f"url: {exc}") from None


@router.get("/notification-channels", response_model=list[ChannelOut], summary="Alert notification channels")
def list_channels(me: ReaderDep, db: DbDep) -> list[ChannelOut]:
    last = crud.last_deliveries(db, me.org_id)
    return [channel_out(c, last.get(c.id)) for c in crud.list_channels(db, me.org_id)]


@router.post(
    "/notification-channels",
    status_code=201,
    response_model=ChannelCreated,
    summary="Add a channel; a webhook's signing secret is in this answer only",
    responses={**BLOCKED, 409: {"description": "a channel of that name exists"}},
)
def create_channel(body: ChannelIn, me: OwnerDep, db: DbDep) -> ChannelCreated:
    url = _checked_url(db, body.url or PAGERDUTY_URL)
    if crud.name_taken(db, me.org_id, body.name):
        raise ApiError(409, "name_taken", f"a channel named {body.name!r} exists")
    ch = NotificationChannel(
        org_id=me.org_id,
        name=body.name,
        kind=body.kind,
        url=url,
        secret=crud.new_secret() if body.kind == "webhook" else None,
        routing_key=body.routing_key,
        min_severity=body.min_severity,
        enabled=body.enabled,
        created_by=me.user_id,
    )
    db.add(ch)
    db.flush()
    audit(
        db,
        "notification_channel.created",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="notification_channel",
        target_id=ch.id,
        kind=body.kind,
    )
    db.commit()
    return channel_out(ch, None, ChannelCreated, secret=ch.secret, open_alerts=crud.open_alerts_for(db, ch))


@router.post(
    "/notification-channels/{channel_id}/send-open-alerts",
    response_model=OpenAlertsQueued,
    summary="Send the alerts open now to this channel (each once; e.g. right after adding it)",
    responses={404: {"description": "no such channel"}, 409: {"description": "the channel is disabled"}},
)
def send_open_alerts(channel_id: uuid.UUID, me: OwnerDep, db: DbDep) -> OpenAlertsQueued:
    ch = crud.get_channel(db, me.org_id, channel_id)
    if not ch.enabled:
        raise ApiError(409, "channel_disabled", "the channel is disabled: enable it first")
    ids = crud.queue_open_alerts(db, ch, datetime.now(UTC))
    db.commit()
    # after the commit; a delivery whose task is lost is sent by the worker's re-enqueue job
    for i in ids:
        tasks.send(DELIVER_ALERT, i)
    return OpenAlertsQueued(queued=len(ids))


@router.patch(
    "/notification-channels/{channel_id}",
    response_model=ChannelOut,
    summary="Change a channel (name, url, routing key, minimum severity, enabled)",
    responses={**BLOCKED, 404: {"description": "no such channel"}},
)
def update_channel(channel_id: uuid.UUID, body: ChannelPatch, me: OwnerDep, db: DbDep) -> ChannelOut:
    ch = crud.get_channel(db, me.org_id, channel_id)
    changes = body.model_dump(exclude_unset=True)
    for field in ("name", "url", "min_severity", "enabled"):
        if field in changes and changes[field] is None:
            raise ApiError(422, "invalid_request", f"{field} cannot be null")
    if "routing_key" in changes and ch.kind != "pagerduty":
        raise ApiError(422, "invalid_request", "routing_key is for pagerduty channels only")
    if "routing_key" in changes and not changes["routing_key"]:
        raise ApiError(422, "invalid_request", "a pagerduty channel needs routing_key")
    if "url" in changes:
        changes["url"] = _checked_url(db, changes["url"])
    if "name" in changes and changes["name"] != ch.name and (crud.name_taken(db, me.org_id, changes["name"])):
        raise ApiError(409, "name_taken", f"a channel named {changes['name']!r} exists")
    for k, v in changes.items():
        setattr(ch, k, v)
    audit(
        db,
        "notification_channel.updated",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="notification_channel",
        target_id=ch.id,
        fields=sorted(changes),
    )
    db.commit()
    return channel_out(ch, crud.last_deliveries(db, me.org_id).get(ch.id))


@router.delete("/notification-channels/{channel_id}", status_code=204, summary="Delete a channel and its log")
def delete_channel(channel_id: uuid.UUID, me: OwnerDep, db: DbDep) -> Response:
    ch = crud.get_channel(db, me.org_id, channel_id)
    db.delete(ch)
    audit(
        db,
        "notification_channel.deleted",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="notification_channel",
        target_id=channel_id,
    )
    db.commit()
    return Response(status_code=204)


@router.post(
    "/notification-channels/{channel_id}/test",
    response_model=DeliveryOut,
    summary="Send a test message now (one attempt, not retried) and answer its delivery",
    responses={404: {"description": "no such channel"}},
)
def send_test(channel_id: uuid.UUID, me: MemberDep, db: DbDep) -> DeliveryOut:
    ch = crud.get_channel(db, me.org_id, channel_id)
    d = crud.create_test(db, ch)
    crud.attempt(db, d.id, max_attempts=1)
    rows = crud.list_deliveries(db, me.org_id, ch.id, 1, 0)
    return delivery_out(rows[0])


@router.get(
    "/alert-deliveries",
    response_model=list[DeliveryOut],
    summary="The delivery log: each alert state change per channel and each test, newest first",
)
def list_deliveries(
    me: ReaderDep, db: DbDep, channel_id: uuid.UUID | None = None, limit: Limit = 100, offset: Offset = 0
) -> list[DeliveryOut]:
    return [delivery_out(r) for r in crud.list_deliveries(db, me.org_id, channel_id, limit, offset)]


def _install_out(db: DbDep, email: str | None) -> InstallSettingsOut:
    p = install.private_webhooks(db)
    admin = install.is_admin(email)
    return InstallSettingsOut(
        allow_private_webhooks=p.allowed,
        stored=p.stored,
        from_environment=p.from_environment,
        can_change=admin,
        changed_at=p.changed_at,
        changed_by=p.changed_by if admin else None,  # an administrator's e-mail is not every tenant's
    )


def _email(db: DbDep, me: UserDep) -> str | None:
    u = db.get(User, me.user)
    return u.email if u else None


@router.get(
    "/install-settings",
    response_model=InstallSettingsOut,
    summary="The install's settings: whether channels may target private addresses, and who may change it",
)
def read_install_settings(me: UserDep, db: DbDep) -> InstallSettingsOut:
    return _install_out(db, _email(db, me))


@router.patch(
    "/install-settings",
    response_model=InstallSettingsOut,
    summary="Allow or refuse private channel targets for the whole install, at once (administrators only)",
    responses={403: {"description": "not one of the install's administrators (HITCURVE_ADMIN_EMAILS)"}},
)
def change_install_settings(body: InstallSettingsPatch, me: UserDep, db: DbDep) -> InstallSettingsOut:
    email = _email(db, me)
    if not install.is_admin(email):
        raise ApiError(
            403,
            "not_install_admin",
            "only the install's administrators (HITCURVE_ADMIN_EMAILS) may change its settings; "
            "on the host: python -m hitcurve.notify.install_admin private-webhooks allow",
        )
    assert email is not None
    install.set_private_webhooks(db, body.allow_private_webhooks, email)
    audit(
        db,
        "install.private_webhooks",
        org_id=me.org_id,
        user_id=me.user_id,
        target_type="install",
        target_id=None,
        allow=body.allow_private_webhooks,
    )
    db.commit()
    return _install_out(db, email)
