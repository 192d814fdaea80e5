"""A cluster whose last server moves away resolves its open alerts (the channels are told) and
leaves the weekly e-mail; while a server remains, nothing changes. A deleted cluster's open alerts
resolve likewise, the channels told, and its alerts stay in the history under its name. Against
the real database and a real local receiver."""

import uuid

from receiver import Receiver
from sqlalchemy import select

from conftest import Account
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import Alert, AlertDelivery, Server


def _server(org_id: str, cluster_id: str, address: str) -> str:
    with get_sessionmaker()() as db:
        s = Server(
            org_id=uuid.UUID(org_id), cluster_id=uuid.UUID(cluster_id), address=address, instance_id=address
        )
        db.add(s)
        db.commit()
        return str(s.id)


def _cluster_alert(org_id: str, cluster_id: str) -> str:
    with get_sessionmaker()() as db:
        a = Alert(
            org_id=uuid.UUID(org_id),
            cluster_id=uuid.UUID(cluster_id),
            kind="memory_short",
            severity="critical",
            state="open",
            message="needs more memory",
        )
        db.add(a)
        db.commit()
        return str(a.id)


def _channel(account: Account, kind: str, url: str) -> dict:
    ch = account.post("/api/v1/notification-channels", json={"name": "ops", "kind": kind, "url": url})
    assert ch.status_code == 201, ch.text
    return ch.json()


def test_the_last_server_leaving_resolves_the_clusters_alerts(account: Account, monkeypatch) -> None:
    from hitcurve.core.config import get_settings

    monkeypatch.setattr(get_settings(), "allow_private_webhooks", True)
    c = account.post("/api/v1/clusters", json={"name": "emptied"}).json()
    dest = account.post("/api/v1/clusters", json={"name": "elsewhere"}).json()
    one = _server(account.org_id, c["id"], "10.0.0.1:11211")
    two = _server(account.org_id, c["id"], "10.0.0.2:11211")
    alert = _cluster_alert(account.org_id, c["id"])
    with Receiver({}) as rx:
        ch = _channel(account, "slack", f"{rx.base}/s")

        # one server moves: the cluster still has one, its alert stays open
        assert account.patch(f"/api/v1/servers/{one}", json={"cluster_id": dest["id"]}).status_code == 200
        opened = account.get("/api/v1/alerts", params={"state": "open"}).json()
        assert [a["id"] for a in opened] == [alert]

        # the last one leaves: resolved, and the resolution queued for the channel
        assert account.patch(f"/api/v1/servers/{two}", json={"cluster_id": None}).status_code == 200
        assert account.get("/api/v1/alerts", params={"state": "open"}).json() == []
        with get_sessionmaker()() as db:
            a = db.get(Alert, uuid.UUID(alert))
            assert a is not None and a.state == "resolved" and a.resolved_at is not None
            d = db.execute(select(AlertDelivery).where(AlertDelivery.alert_id == a.id)).scalars().all()
            assert [(x.event, str(x.channel_id)) for x in d] == [("resolved", ch["id"])]

    row = next(x for x in account.get("/api/v1/clusters").json() if x["id"] == c["id"])
    assert row["server_count"] == 0 and row["open_alerts"] == 0
    preview = account.get("/api/v1/reports/preview")
    assert preview.status_code == 200, preview.text
    # neither the cluster nor its (resolved) alert is in the weekly e-mail
    assert "emptied" not in preview.text


def test_deleting_a_cluster_resolves_its_alerts_tells_the_channels_and_keeps_the_history(
    account: Account, monkeypatch
) -> None:
    import json

    from hitcurve.core.config import get_settings
    from hitcurve.crud.notifications import attempt

    monkeypatch.setattr(get_settings(), "allow_private_webhooks", True)
    c = account.post("/api/v1/clusters", json={"name": "to-delete"}).json()
    server = _server(account.org_id, c["id"], "10.0.1.1:11211")
    alert = _cluster_alert(account.org_id, c["id"])
    with Receiver({}) as rx:
        ch = _channel(account, "webhook", f"{rx.base}/w")
        assert account.delete(f"/api/v1/clusters/{c['id']}").status_code == 204

        # the alert is resolved, not gone; it still names its cluster
        assert account.get("/api/v1/alerts", params={"state": "open"}).json() == []
        listed = [
            a for a in account.get("/api/v1/alerts", params={"state": "all"}).json() if a["id"] == alert
        ]
        assert len(listed) == 1 and listed[0]["state"] == "resolved" and listed[0]["resolved_at"]
        assert listed[0]["cluster_id"] is None
        assert listed[0]["details"]["cluster_name"] == "to-delete"
        with get_sessionmaker()() as db:
            d = db.execute(
                select(AlertDelivery).where(AlertDelivery.alert_id == uuid.UUID(alert))
            ).scalar_one()
            assert (d.event, str(d.channel_id)) == ("resolved", ch["id"])
            assert attempt(db, d.id)["status"] == "delivered"
            s = db.get(Server, uuid.UUID(server))
            assert s is not None and s.cluster_id is None  # the server stays, unassigned
        body = json.loads(rx.received[-1].body)
        assert (body["event"], body["alert"]["id"], body["alert"]["state"]) == (
            "alert.resolved",
            alert,
            "resolved",
        )
        assert body["alert"]["subject"] == {"type": "cluster", "name": "to-delete", "id": c["id"]}, body
