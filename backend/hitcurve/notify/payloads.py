"""What a notification channel receives when an alert opens or resolves (pure: no I/O).

One `AlertEvent` (the alert, its subject's name, opened/resolved/test) becomes the body and headers
of one POST for each channel kind:

* `webhook`: Hitcurve's own JSON, signed: `X-Hitcurve-Signature: sha256=<hex HMAC-SHA256 of the raw
  body with the channel's secret>`; `X-Hitcurve-Delivery` (the same on every retry of one state
  change: receivers can drop repeats) and `X-Hitcurve-Event`. The body carries `sent_at`, so a
  receiver can refuse old replays.
* `slack`: a Slack incoming-webhook message (`text` plus one section block).
* `pagerduty`: a PagerDuty Events API v2 event: `trigger` when the alert opens, `resolve` when it
  resolves, `dedup_key` `hitcurve-<alert id>` so both land on one incident.
* `alertmanager`: the body Prometheus Alertmanager posts to its webhook receivers (version 4), so a
  receiver written for Alertmanager takes Hitcurve's alerts as they are.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

CHANNEL_KINDS = ("webhook", "slack", "pagerduty", "alertmanager")
EVENTS = ("opened", "resolved", "test")
SEVERITY_RANK = {"info": 0, "warning": 1, "critical": 2}
PAGERDUTY_URL = "https://events.pagerduty.com/v2/enqueue"
SIGNATURE_HEADER = "X-Hitcurve-Signature"


@dataclass(frozen=True)
class AlertEvent:
    event: str  # opened | resolved | test
    alert_id: str
    kind: str  # below_target, memory_short, ...
    severity: str  # info | warning | critical
    message: str
    subject_type: str  # cluster | server | organization
    subject_name: str
    subject_id: str | None
    organization: str
    first_seen_at: datetime
    resolved_at: datetime | None
    sent_at: datetime
    delivery_key: str  # the same on every attempt of one state change
    dashboard_url: str
    details: dict[str, Any] = field(default_factory=dict)

    @property
    def title(self) -> str:
        verb = {"opened": "", "resolved": "resolved: ", "test": "test: "}[self.event]
        return f"[{self.severity.upper()}] {verb}{self.subject_type} {self.subject_name}: {self.message}"


def should_send(min_severity: str, severity: str) -> bool:
    return SEVERITY_RANK.get(severity, 0) >= SEVERITY_RANK.get(min_severity, 0)


def sign(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


def verify(secret: str, body: bytes, header: str) -> bool:
    """What a receiver does (also what the tests do): constant-time comparison."""
    return hmac.compare_digest(sign(secret, body), header)


def _iso(t: datetime | None) -> str | None:
    return t.isoformat().replace("+00:00", "Z") if t is not None else None


def _webhook(e: AlertEvent) -> dict[str, Any]:
    return {
        "event": f"alert.{e.event}",
        "delivery": e.delivery_key,
        "sent_at": _iso(e.sent_at),
        "organization": e.organization,
        "alert": {
            "id": e.alert_id,
            "kind": e.kind,
            "severity": e.severity,
            "state": "resolved" if e.event == "resolved" else "open",
            "subject": {"type": e.subject_type, "name": e.subject_name, "id": e.subject_id},
            "message": e.message,
            "details": e.details,
            "first_seen_at": _iso(e.first_seen_at),
            "resolved_at": _iso(e.resolved_at),
            "url": e.dashboard_url,
        },
    }


def _slack(e: AlertEvent) -> dict[str, Any]:
    icon = {"critical": ":red_circle:", "warning": ":warning:", "info": ":information_source:"}
    mark = ":white_check_mark:" if e.event == "resolved" else icon.get(e.severity, "")
    text = f"{mark} {e.title}"
    return {
        "text": text,
        "blocks": [
            {
                "type": "section",
                "text": {"type": "mrkdwn", "text": f"{text}\n<{e.dashboard_url}|Open in Hitcurve>"},
            }
        ],
    }


def _pagerduty(e: AlertEvent, routing_key: str) -> dict[str, Any]:
    dedup = f"hitcurve-test-{e.delivery_key}" if e.event == "test" else f"hitcurve-{e.alert_id}"
    body: dict[str, Any] = {
        "routing_key": routing_key,
        "event_action": "resolve" if e.event == "resolved" else "trigger",
        "dedup_key": dedup,
    }
    if e.event != "resolved":
        body["payload"] = {
            "summary": e.title[:1024],
            "source": f"{e.subject_type} {e.subject_name}",
            "severity": e.severity if e.severity in ("critical", "warning", "info") else "error",
            "timestamp": _iso(e.first_seen_at),
            "component": e.subject_name,
            "group": e.organization,
            "class": e.kind,
            "custom_details": {"message": e.message, **e.details},
        }
        body["links"] = [{"href": e.dashboard_url, "text": "Open in Hitcurve"}]
    return body


def _alertmanager(e: AlertEvent) -> dict[str, Any]:
    status = "resolved" if e.event == "resolved" else "firing"
    labels = {
        "alertname": f"hitcurve_{e.kind}",
        "severity": e.severity,
        "organization": e.organization,
        e.subject_type: e.subject_name,
    }
    alert = {
        "status": status,
        "labels": labels,
        "annotations": {"summary": e.title, "description": e.message},
        "startsAt": _iso(e.first_seen_at),
        "endsAt": _iso(e.resolved_at) or "0001-01-01T00:00:00Z",
        "generatorURL": e.dashboard_url,
        "fingerprint": hashlib.sha256(e.alert_id.encode()).hexdigest()[:16],
    }
    return {
        "version": "4",
        "groupKey": f"hitcurve:{e.alert_id}",
        "truncatedAlerts": 0,
        "status": status,
        "receiver": "hitcurve",
        "groupLabels": {"alertname": labels["alertname"]},
        "commonLabels": labels,
        "commonAnnotations": alert["annotations"],
        "externalURL": e.dashboard_url,
        "alerts": [alert],
    }


def build(
    kind: str, e: AlertEvent, *, secret: str | None, routing_key: str | None
) -> tuple[bytes, dict[str, str]]:
    """The body (bytes, exactly what is signed and sent) and the extra headers of one POST."""
    if kind == "webhook":
        doc = _webhook(e)
    elif kind == "slack":
        doc = _slack(e)
    elif kind == "pagerduty":
        doc = _pagerduty(e, routing_key or "")
    elif kind == "alertmanager":
        doc = _alertmanager(e)
    else:
        raise ValueError(f"unknown channel kind {kind!r}")
    body = json.dumps(doc, separators=(",", ":"), default=str).encode()
    headers = {
        "User-Agent": "Hitcurve-Notifier/1",
        "X-Hitcurve-Delivery": e.delivery_key,
        "X-Hitcurve-Event": f"alert.{e.event}",
    }
    if kind == "webhook" and secret:
        headers[SIGNATURE_HEADER] = sign(secret, body)
    return body, headers


def server_name(address: str, hostname: str | None) -> str:
    """How alerts name a server: its host name and address, or the address alone."""
    if hostname and hostname not in address:
        return f"{hostname} ({address})"
    return address
