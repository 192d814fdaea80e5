"""Bodies of the notification-channel endpoints (/notification-channels, /alert-deliveries)."""

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

ChannelKind = Literal["webhook", "slack", "pagerduty", "alertmanager"]
Severity = Literal["info", "warning", "critical"]
Name = Annotated[str, Field(min_length=1, max_length=100, pattern=r"^[^\x00-\x1f]+$")]
Url = Annotated[str, Field(min_length=1, max_length=2048, description="http(s) URL the channel posts to")]
RoutingKey = Annotated[str, Field(min_length=1, max_length=128, pattern=r"^[A-Za-z0-9_\-]+$")]


class ChannelIn(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name
    kind: ChannelKind
    url: Url | None = Field(
        default=None,
        description="where to post; required except for pagerduty (default: the Events API v2 endpoint)",
    )
    routing_key: RoutingKey | None = Field(
        default=None, description="pagerduty only: the integration (routing) key of the service"
    )
    min_severity: Severity = Field(default="warning", description="alerts below this severity are not sent")
    enabled: bool = True

    @model_validator(mode="after")
    def _fields_of_kind(self) -> "ChannelIn":
        if self.kind == "pagerduty":
            if not self.routing_key:
                raise ValueError("a pagerduty channel needs routing_key (the service's integration key)")
        elif self.routing_key is not None:
            raise ValueError("routing_key is for pagerduty channels only")
        if self.kind != "pagerduty" and not self.url:
            raise ValueError(f"a {self.kind} channel needs url")
        return self


class ChannelPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: Name | None = None
    url: Url | None = None
    routing_key: RoutingKey | None = None
    min_severity: Severity | None = None
    enabled: bool | None = None


class ChannelOut(BaseModel):
    model_config = ConfigDict(from_attributes=True)

    id: uuid.UUID
    name: str
    kind: ChannelKind
    url: str = Field(description="the target; for slack the secret part of the path is masked")
    min_severity: Severity
    enabled: bool
    signed: bool = Field(description="webhook only: bodies carry X-Hitcurve-Signature")
    routing_key_hint: str | None = Field(description="pagerduty: the key's last four characters")
    created_at: datetime
    last_delivery_status: str | None = None
    last_delivery_at: datetime | None = None


class ChannelCreated(ChannelOut):
    secret: str | None = Field(
        description="webhook only, shown once: the HMAC-SHA256 key of X-Hitcurve-Signature "
        "(sha256=<hex of HMAC(secret, raw body)>)"
    )
    open_alerts: int = Field(
        default=0,
        description="alerts open now that this channel takes (its minimum severity): POST "
        "/notification-channels/{id}/send-open-alerts sends them to it; their resolutions reach it "
        "either way",
    )


class OpenAlertsQueued(BaseModel):
    queued: int = Field(description="open alerts queued for delivery to the channel (each once)")


class DeliveryOut(BaseModel):
    id: int
    channel_id: uuid.UUID
    channel_name: str
    alert_id: uuid.UUID | None
    alert_kind: str | None
    alert_message: str | None
    event: Literal["opened", "resolved", "test"]
    key: str = Field(description="X-Hitcurve-Delivery: the same on every attempt of one state change")
    status: Literal["pending", "retrying", "delivered", "failed"]
    attempts: int
    response_code: int | None
    last_error: str | None
    created_at: datetime
    last_attempt_at: datetime | None
    next_attempt_at: datetime | None
    delivered_at: datetime | None


class InstallSettingsOut(BaseModel):
    allow_private_webhooks: bool = Field(
        description="channels may target loopback, private and link-local addresses now (the setting "
        "or the environment)"
    )
    stored: bool = Field(description="the install setting an administrator or the host changes")
    from_environment: bool = Field(
        description="HITCURVE_ALLOW_PRIVATE_WEBHOOKS=true allows private targets whatever the setting"
    )
    can_change: bool = Field(description="the logged-in user is one of the install's administrators")
    changed_at: datetime | None
    changed_by: str | None = Field(
        description="who changed it last (an administrator's e-mail, or host): told to administrators only"
    )


class InstallSettingsPatch(BaseModel):
    model_config = ConfigDict(extra="forbid")

    allow_private_webhooks: bool
