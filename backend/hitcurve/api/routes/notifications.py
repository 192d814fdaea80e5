"""Alert notification channels (webhook, Slack, PagerDuty, Alertmanager), "send test" and the
delivery log. HTTP only: rows and attempts live in crud/notifications.py, bodies in notify.py."""

import uuid
from typing import Any

from fastapi import APIRouter, Response

from hitcurve import outbound
from hitcurve.api.deps import DbDep, Limit, MemberDep, Offset, OwnerDep, ReaderDep
from hitcurve.core.audit import audit
from hitcurve.core.config import get_settings
from hitcurve.core.errors import ApiError
from hitcurve.crud import notifications as crud
from hitcurve.models import NotificationChannel
from hitcurve.notify import PAGERDUTY_URL
from hitcurve.schemas.notifications import ChannelCreated, ChannelIn, ChannelOut, ChannelPatch, DeliveryOut

router = APIRouter(tags=["notifications"])
BLOCKED: dict[int | str, dict[str, Any]] = {
    422: {"description": "invalid request, or a target on a refused address (code blocked_target)"}
}


def _checked_url(url: str) -> str:
    try:
        return outbound.check_url(url, allow_private=get_settings().allow_private_webhooks)
    except outbound.BlockedTarget as exc:
        raise ApiError(422, "blocked_target", f"url: {exc}") from None


def _masked(ch: NotificationChannel) -> str:
    if ch.kind != "slack":
        return ch.url
    head, _, _tail = ch.url.rstrip("/").rpartition("/")
    return f"{head}/****"


def _out(
    ch: NotificationChannel, last: tuple[str, Any] | None, cls: type[ChannelOut] = ChannelOut, **extra: Any
) -> Any:
    return cls(
        id=ch.id,
        name=ch.name,
        kind=ch.kind,
        url=_masked(ch),
        min_severity=ch.min_severity,
        enabled=ch.enabled,
        signed=ch.kind == "webhook" and bool(ch.secret),
        routing_key_hint=ch.routing_key[-4:] if ch.routing_key else None,
        created_at=ch.created_at,
        last_delivery_status=last[0] if last else None,
        last_delivery_at=last[1] if last else None,
        **extra,
    )


@router.get("/notification-channels", response_model=list[ChannelOut], summary="Alert notification channels")
def list_channels(me: ReaderDep, db: DbDep) -> list[ChannelOut]:
    last = crud.last_deliveries(db, me.org_id)
    return [_out(c, last.get(c.id)) for c in crud.list_channels(db, me.org_id)]


@router.post(
    "/notification-channels",
    status_code=201,
    response_model=ChannelCreated,
    summary="Add a channel; a webhook's signing secret is in this answer only",
    responses={**BLOCKED, 409: {"description": "a channel of that name exists"}},
)
def create_channel(body: ChannelIn, me: OwnerDep, db: DbDep) -> ChannelCreated:
    url = _checked_url(body.url or PAGERDUTY_URL)
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
    return _out(ch, None, ChannelCreated, secret=ch.secret)


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
        changes["url"] = _checked_url(changes["url"])
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
    return _out(ch, crud.last_deliveries(db, me.org_id).get(ch.id))


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
    return _delivery(rows[0])


def _delivery(r: Any) -> DeliveryOut:
    d = r[0]
    return DeliveryOut(
        id=d.id,
        channel_id=d.channel_id,
        channel_name=r[1],
        alert_id=d.alert_id,
        alert_kind=r[2],
        alert_message=r[3],
        event=d.event,
        key=d.key,
        status=d.status,
        attempts=d.attempts,
        response_code=d.response_code,
        last_error=d.last_error,
        created_at=d.created_at,
        last_attempt_at=d.last_attempt_at,
        next_attempt_at=d.next_attempt_at,
        delivered_at=d.delivered_at,
    )


@router.get(
    "/alert-deliveries",
    response_model=list[DeliveryOut],
    summary="The delivery log: each alert state change per channel and each test, newest first",
)
def list_deliveries(
    me: ReaderDep, db: DbDep, channel_id: uuid.UUID | None = None, limit: Limit = 100, offset: Offset = 0
) -> list[DeliveryOut]:
    return [_delivery(r) for r in crud.list_deliveries(db, me.org_id, channel_id, limit, offset)]
