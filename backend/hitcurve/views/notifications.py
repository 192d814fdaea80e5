"""Notification channels and deliveries as the API answers them: a Slack URL (a credential) and a
PagerDuty routing key shown only in part, a webhook's secret never (except once, on creation)."""

from typing import Any

from hitcurve.models import NotificationChannel
from hitcurve.schemas.notifications import ChannelOut, DeliveryOut


def _masked(ch: NotificationChannel) -> str:
    if ch.kind != "slack":
        return ch.url
    head, _, _tail = ch.url.rstrip("/").rpartition("/")
    return f"{head}/****"


def channel_out(
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


def delivery_out(r: Any) -> DeliveryOut:
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
