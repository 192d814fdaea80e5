"""Inventory, curves, history (downsampling), accuracy, simulations, alerts, report subscriptions."""

import json
import uuid
from datetime import UTC, datetime, timedelta

import pytest
import redis

from conftest import bearer, insert_server_curve, upload_snapshot
from hitcurve.core import fairqueue
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, Alert, ClusterCurve, SimulationResult


def test_cluster_crud_and_server_assignment(account) -> None:
    r = account.post(
        "/api/v1/clusters", json={"name": "web", "price_per_gb_month": 3.5, "target_hit_ratio": 0.95}
    )
    assert r.status_code == 201
    c = r.json()
    assert (c["name"], c["price_per_gb_month"], c["target_hit_ratio"], c["server_count"]) == (
        "web",
        3.5,
        0.95,
        0,
    )
    assert account.post("/api/v1/clusters", json={"name": "web"}).json()["code"] == "name_taken"
    for bad in (
        {"name": ""},
        {"name": "x", "target_hit_ratio": 1.2},
        {"name": "x", "price_per_gb_month": -1},
        {"name": "x", "bogus": 1},
        {"name": "   "},
        {"name": "a\nb"},
        {"name": "x" * 201},
    ):
        assert account.post("/api/v1/clusters", json=bad).status_code == 422, bad
    sid, _ = upload_snapshot(account)
    assert account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": c["id"]}).status_code == 200
    assert account.get(f"/api/v1/clusters/{c['id']}").json()["server_count"] == 1
    assert [s["id"] for s in account.get("/api/v1/servers", params={"cluster_id": c["id"]}).json()] == [sid]
    p = account.patch(f"/api/v1/clusters/{c['id']}", json={"name": "web-eu", "target_hit_ratio": 0.9})
    assert p.status_code == 200 and p.json()["name"] == "web-eu" and p.json()["price_per_gb_month"] == 3.5
    assert account.patch(f"/api/v1/clusters/{c['id']}", json={"name": None}).status_code == 422
    assert account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": str(uuid.uuid4())}).status_code == 404
    assert account.delete(f"/api/v1/clusters/{c['id']}").status_code == 204
    assert account.get(f"/api/v1/servers/{sid}").json()["cluster_id"] is None
    assert account.get(f"/api/v1/clusters/{c['id']}").status_code == 404


def test_injection_and_unicode_names_are_data(account) -> None:
    names = [
        "Robert'); DROP TABLE clusters;--",
        "<script>alert(1)</script>",
        "ñame ☃ 名前 🚀",
        "%s %x {0} ${x}",
    ]
    for n in names:
        r = account.post("/api/v1/clusters", json={"name": n})
        assert r.status_code == 201 and r.json()["name"] == n
    assert sorted(c["name"] for c in account.get("/api/v1/clusters").json()) == sorted(names)
    for bad in ("\u0000", "a\u0007b", "\ud800"):
        r = account.client.post(
            "/api/v1/clusters",
            content=json.dumps({"name": bad}),
            headers={**account.h(), "Content-Type": "application/json"},
        )
        assert r.status_code == 422, (bad, r.text)


def test_server_curve_per_class_and_merged(account) -> None:
    sid, snap = upload_snapshot(account)
    r = account.get(f"/api/v1/servers/{sid}/curve").json()
    assert r["merged"] is None and r["latest_snapshot"]["status"] == "pending"
    first = snap["classes"][0]
    cls = r["classes"][0]
    assert cls["class_id"] == first["id"]
    assert cls["sizes_bytes"][5] == first["curve"]["points"][5][0] * first["chunk_size"]
    insert_server_curve(
        account.org_id,
        sid,
        snap,
        [1.0, 2.0, 3.0],
        [0.1, 0.2, 0.3],
        hit_ratio_calibrated=[0.1, 0.15, 0.2],
        advice={"move_pages": []},
    )
    m = account.get(f"/api/v1/servers/{sid}/curve").json()["merged"]
    assert m["hit_ratio_calibrated"] == [0.1, 0.15, 0.2] and m["snapshot_id"] == snap["snapshot_id"]
    assert m["advice"] == {"move_pages": []} and m["age_seconds"] >= 0


def test_history_downsamples_and_weights_by_gets(account) -> None:
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    ratios = [0.5, 0.7, 0.6, 0.8, 0.9, 0.4]
    sid = None
    for i, hr in enumerate(ratios):  # windows ending 10 min apart
        sid, _ = upload_snapshot(
            account, end=end - timedelta(minutes=5 + 10 * (len(ratios) - 1 - i)), hit_ratio=hr
        )
    start = end - timedelta(minutes=60)
    r = account.get(
        f"/api/v1/servers/{sid}/history",
        params={"start": start.isoformat(), "end": end.isoformat(), "max_points": 3},
    )
    assert r.status_code == 200, r.text
    h = r.json()
    assert h["bucket_seconds"] == 1200
    assert [p["samples"] for p in h["points"]] == [2, 2, 2]
    # every snapshot has 1.2 M gets, so the bucket's ratio is the mean of its two windows
    expect = [(0.5 + 0.7) / 2, (0.6 + 0.8) / 2, (0.9 + 0.4) / 2]
    assert [p["measured_hit_ratio"] for p in h["points"]] == pytest.approx(expect, abs=1e-6)
    # each point sits at its bucket's newest window, not at the bucket's start: the newest point is
    # the newest window (5 min before end), not 20 min before end
    at = [datetime.fromisoformat(p["at"]) for p in h["points"]]
    assert at == [end - timedelta(minutes=m) for m in (45, 25, 5)]
    assert all(
        datetime.fromisoformat(p["start"]) < t <= datetime.fromisoformat(p["end"])
        for p, t in zip(h["points"], at, strict=True)
    )
    full = account.get(
        f"/api/v1/servers/{sid}/history", params={"start": start.isoformat(), "end": end.isoformat()}
    )
    assert sum(p["samples"] for p in full.json()["points"]) == 6
    for params in (
        {"start": end.isoformat(), "end": start.isoformat()},
        {"max_points": 0},
        {"start": "2026-01-01T00:00:00"},
        {"start": "yesterday"},
    ):
        assert account.get(f"/api/v1/servers/{sid}/history", params=params).status_code == 422, params


def test_accuracy_record_and_cluster_views(account) -> None:
    cid = account.post("/api/v1/clusters", json={"name": "c"}).json()["id"]
    sid, snap = upload_snapshot(account)
    account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": cid})
    now = datetime.now(UTC)
    with get_sessionmaker()() as db:
        for i, (pred, meas) in enumerate(((0.80, 0.78), (0.70, 0.75))):
            s = upload_snapshot(account, end=now - timedelta(minutes=i + 1))[1]
            db.add(
                AccuracyRecord(
                    org_id=uuid.UUID(account.org_id),
                    server_id=uuid.UUID(sid),
                    snapshot_id=uuid.UUID(s["snapshot_id"]),
                    window_start=now - timedelta(minutes=5),
                    window_end=now - timedelta(minutes=i + 1),
                    memory_bytes=1 << 26,
                    predicted_hit_ratio=pred,
                    measured_hit_ratio=meas,
                    error_pp=(pred - meas) * 100,
                )
            )
        db.add(
            ClusterCurve(
                org_id=uuid.UUID(account.org_id),
                cluster_id=uuid.UUID(cid),
                window_end=now,
                sizes_bytes=[1.0, 2.0],
                hit_ratios=[0.5, 0.6],
                current_bytes=1,
                server_count=1,
            )
        )
        db.commit()
    a = account.get(f"/api/v1/servers/{sid}/accuracy").json()
    assert a["samples"] == 2 and a["mean_abs_error_pp"] == pytest.approx(3.5)
    assert a["max_abs_error_pp"] == pytest.approx(5.0)
    assert max(datetime.fromisoformat(p["at"]) for p in a["points"]) == now - timedelta(minutes=1)
    assert account.get(f"/api/v1/clusters/{cid}/accuracy").json()["samples"] == 2
    assert sum(p["samples"] for p in account.get(f"/api/v1/clusters/{cid}/history").json()["points"]) == 3
    cc = account.get(f"/api/v1/clusters/{cid}/curve").json()
    assert cc["hit_ratios"] == [0.5, 0.6] and cc["cluster"]["server_count"] == 1
    empty = account.post("/api/v1/clusters", json={"name": "empty"}).json()["id"]
    assert account.get(f"/api/v1/clusters/{empty}/curve").json()["sizes_bytes"] is None


def test_simulation_request_enqueued_and_results(account, anon, private_queue) -> None:
    sid, _ = upload_snapshot(account)
    body = {"server_id": sid, "policies": ["lru", "gdwheel", "lru"], "sizes_bytes": [2 << 30, 1 << 30]}
    r = account.post("/api/v1/simulations", json=body)
    assert r.status_code == 202, r.text
    run = r.json()
    assert run["status"] == "pending" and run["policies"] == ["lru", "gdwheel"]
    assert run["sizes_bytes"] == [1 << 30, 2 << 30]
    # queued on the organization's fair queue, with a turn on the batch queue to run it
    msgs = private_queue()
    assert [m for m in msgs if m["headers"]["task"] == "hitcurve.fair_turn"]
    with redis.Redis.from_url(get_settings().redis_url) as broker:
        assert fairqueue.waiting(broker) == {account.org_id: 1}
        assert fairqueue.take(broker) == (account.org_id, "hitcurve.run_simulation", [run["id"]])
    with get_sessionmaker()() as db:
        db.add(
            SimulationResult(
                org_id=uuid.UUID(account.org_id),
                run_id=uuid.UUID(run["id"]),
                policy="lru",
                size_bytes=1 << 30,
                hit_ratio=0.8,
                byte_hit_ratio=0.7,
                requests=10,
            )
        )
        db.commit()
    got = account.get(f"/api/v1/simulations/{run['id']}").json()
    assert got["results"][0]["hit_ratio"] == 0.8 and got["enqueued_at"] is not None
    assert [x["id"] for x in account.get("/api/v1/simulations", params={"server_id": sid}).json()] == [
        run["id"]
    ]
    for bad in (
        {**body, "policies": ["belady"]},
        {**body, "sizes_bytes": []},
        {"policies": ["lru"], "sizes_bytes": [1]},
        {**body, "cluster_id": str(uuid.uuid4())},
        {**body, "window_start": "2026-01-02T00:00:00Z", "window_end": "2026-01-01T00:00:00Z"},
    ):
        assert account.post("/api/v1/simulations", json=bad).status_code == 422, bad
    assert (
        account.post("/api/v1/simulations", json={**body, "server_id": str(uuid.uuid4())}).status_code == 404
    )
    tok = account.api_token("read_write")
    assert anon.post("/api/v1/simulations", json=body, headers=bearer(tok)).status_code == 202


def test_alerts_list_and_ack(account) -> None:
    sid, _ = upload_snapshot(account)
    with get_sessionmaker()() as db:
        a = Alert(
            org_id=uuid.UUID(account.org_id),
            server_id=uuid.UUID(sid),
            kind="stream_loss",
            severity="warning",
            message="5% of watch events lost",
        )
        db.add(a)
        db.commit()
        aid = str(a.id)
    alerts = account.get("/api/v1/alerts").json()
    assert [x["id"] for x in alerts] == [aid] and alerts[0]["acknowledged_at"] is None
    r = account.post(f"/api/v1/alerts/{aid}/ack")
    assert r.status_code == 200 and r.json()["acknowledged_at"] is not None
    assert account.get("/api/v1/alerts", params={"state": "resolved"}).json() == []
    assert account.post(f"/api/v1/alerts/{uuid.uuid4()}/ack").status_code == 404
    assert account.get("/api/v1/alerts", params={"state": "bogus"}).status_code == 422


def test_one_open_alert_per_kind_and_subject(account) -> None:
    import sqlalchemy.exc

    sid, _ = upload_snapshot(account)
    with get_sessionmaker()() as db:
        kw = dict(
            org_id=uuid.UUID(account.org_id),
            server_id=uuid.UUID(sid),
            kind="below_target",
            severity="info",
            message="m",
        )
        db.add(Alert(**kw))
        db.commit()
        db.add(Alert(**kw))
        with pytest.raises(sqlalchemy.exc.IntegrityError):
            db.commit()
        db.rollback()
        db.add(Alert(**{**kw, "state": "resolved"}))
        db.commit()


def test_report_subscriptions_crud(account, inbox) -> None:
    cid = account.post("/api/v1/clusters", json={"name": "c"}).json()["id"]
    r = account.post(
        "/api/v1/report-subscriptions",
        json={"email": "ops@example.com", "cluster_id": cid, "weekday": 2, "hour_utc": 7},
    )
    assert r.status_code == 201
    sub = r.json()
    assert (sub["weekday"], sub["hour_utc"], sub["enabled"]) == (2, 7, True)
    assert account.get(f"/api/v1/report-subscriptions/{sub['id']}").json()["email"] == "ops@example.com"
    p = account.patch(f"/api/v1/report-subscriptions/{sub['id']}", json={"enabled": False, "hour_utc": 9})
    assert p.status_code == 200 and p.json()["enabled"] is False and p.json()["hour_utc"] == 9
    for bad in (
        {"email": "nope"},
        {"email": "a@example.com", "weekday": 7},
        {"email": "a@example.com", "hour_utc": 24},
    ):
        assert account.post("/api/v1/report-subscriptions", json=bad).status_code == 422
    assert (
        account.post(
            "/api/v1/report-subscriptions", json={"email": "a@example.com", "cluster_id": str(uuid.uuid4())}
        ).status_code
        == 404
    )
    assert account.delete(f"/api/v1/report-subscriptions/{sub['id']}").status_code == 204
    assert account.get("/api/v1/report-subscriptions").json() == []
