"""Tenancy: another organization's ids answer 404 on every route that takes an id, and lists never
show foreign rows."""

import uuid
from datetime import UTC, datetime, timedelta

from conftest import bearer, insert_server_curve, upload_snapshot
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import Alert


def test_foreign_ids_are_404_everywhere(account, other, anon, inbox) -> None:
    cid = account.post("/api/v1/clusters", json={"name": "secret"}).json()["id"]
    sid, snap = upload_snapshot(account)
    insert_server_curve(account.org_id, sid, snap, [1e9, 2e9], [0.5, 0.6])
    account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": cid})
    run = account.post(
        "/api/v1/simulations", json={"server_id": sid, "policies": ["lru"], "sizes_bytes": [1]}
    ).json()
    sub = account.post("/api/v1/report-subscriptions", json={"email": "a@example.com"}).json()
    with get_sessionmaker()() as db:
        alert = Alert(
            org_id=uuid.UUID(account.org_id),
            cluster_id=uuid.UUID(cid),
            kind="k",
            severity="info",
            message="m",
        )
        db.add(alert)
        db.commit()
        aid = str(alert.id)
    reads = [
        f"/api/v1/clusters/{cid}",
        f"/api/v1/clusters/{cid}/curve",
        f"/api/v1/clusters/{cid}/history",
        f"/api/v1/clusters/{cid}/accuracy",
        f"/api/v1/servers/{sid}",
        f"/api/v1/servers/{sid}/curve",
        f"/api/v1/servers/{sid}/history",
        f"/api/v1/servers/{sid}/accuracy",
        f"/api/v1/simulations/{run['id']}",
        f"/api/v1/report-subscriptions/{sub['id']}",
        f"/api/v1/sizing/servers/{sid}/memory?target_hit_ratio=0.5",
        f"/api/v1/sizing/servers/{sid}/hit-ratio?memory_bytes=5",
        f"/api/v1/sizing/clusters/{cid}/memory?target_hit_ratio=0.5",
        f"/api/v1/sizing/clusters/{cid}/hit-ratio?memory_bytes=5",
        f"/api/v1/sizing/clusters/{cid}/nodes?node_size_bytes=5",
    ]
    token = other.api_token("read_write")
    for url in reads:
        assert account.get(url).status_code in (200, 409), url
        r = other.get(url)
        assert r.status_code == 404, (url, r.status_code, r.text)
        assert anon.get(url, headers=bearer(token)).status_code == 404, url
    writes = [
        ("patch", f"/api/v1/clusters/{cid}", {"name": "pwned"}),
        ("delete", f"/api/v1/clusters/{cid}", None),
        ("patch", f"/api/v1/servers/{sid}", {"cluster_id": None}),
        ("post", f"/api/v1/alerts/{aid}/ack", None),
        ("patch", f"/api/v1/report-subscriptions/{sub['id']}", {"enabled": False}),
        ("post", f"/api/v1/report-subscriptions/{sub['id']}/confirmation", None),
        ("delete", f"/api/v1/report-subscriptions/{sub['id']}", None),
        ("post", "/api/v1/simulations", {"server_id": sid, "policies": ["lru"], "sizes_bytes": [1]}),
        ("post", "/api/v1/simulations", {"cluster_id": cid, "policies": ["lru"], "sizes_bytes": [1]}),
        ("post", "/api/v1/report-subscriptions", {"email": "x@example.com", "cluster_id": cid}),
    ]
    for method, url, body in writes:
        kw = {"json": body} if body is not None else {}
        r = getattr(other, method)(url, **kw)
        assert r.status_code == 404, (method, url, r.status_code, r.text)
    # other's own server with our cluster id cannot be assigned to it
    osid, _ = upload_snapshot(other, "10.9.0.1:11211")
    assert other.patch(f"/api/v1/servers/{osid}", json={"cluster_id": cid}).status_code == 404
    # nothing changed for the owner, and lists never mix
    assert account.get(f"/api/v1/clusters/{cid}").json()["name"] == "secret"
    assert account.get(f"/api/v1/servers/{sid}").json()["cluster_id"] == cid
    assert [c["id"] for c in other.get("/api/v1/clusters").json()] == []
    assert [s["id"] for s in other.get("/api/v1/servers").json()] == [osid]
    for url in (
        "/api/v1/simulations",
        "/api/v1/alerts",
        "/api/v1/report-subscriptions",
        "/api/v1/audit-log",
        "/api/v1/agent-keys",
        "/api/v1/api-tokens",
    ):
        mine = {x.get("id") for x in account.get(url).json()}
        theirs = {x.get("id") for x in other.get(url).json()}
        assert not (mine & theirs), url
    assert (
        other.get(
            f"/api/v1/servers/{sid}/history",
            params={"start": (datetime.now(UTC) - timedelta(days=1)).isoformat()},
        ).status_code
        == 404
    )
