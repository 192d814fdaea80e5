"""Stored curves over time (downsampled) and the summary fields of GET /clusters and GET /servers."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from conftest import insert_server_curve, upload_snapshot
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, Alert, ClusterCurve, Snapshot

DAY = timedelta(days=1)


def test_server_curves_latest_per_period_oldest_first(account, other) -> None:
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    offsets = [6.5, 5.5, 4.5, 3.0, 1.0, 0.5]  # days before end; 6.5 lies before the asked start
    sid = ""
    for i, days in enumerate(offsets):
        sid, snap = upload_snapshot(account, end=end - days * DAY)
        ys = [0.1 * (i + 1), 0.1 * (i + 2)]
        kw = {"hit_ratio_calibrated": [y - 0.05 for y in ys]} if days == 3.0 else {}
        insert_server_curve(account.org_id, sid, snap, [1.0e6, 2.0e6], ys, **kw)
    start = end - 6 * DAY
    r = account.get(
        f"/api/v1/servers/{sid}/curves",
        params={"start": start.isoformat(), "end": end.isoformat(), "max_curves": 3},
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["bucket_seconds"] == 2 * 86400
    # buckets [0, 2d), [2d, 4d), [4d, 6d] after start: the latest curve of each
    got = [datetime.fromisoformat(c["window_end"]) for c in body["curves"]]
    assert got == [end - 4.5 * DAY, end - 3.0 * DAY, end - 0.5 * DAY]
    first, mid, last = body["curves"]
    assert first["hit_ratios"] == pytest.approx([0.3, 0.4]) and first["basis"] == "estimate"
    assert first["hit_ratio_calibrated"] is None and first["sizes_bytes"] == [1.0e6, 2.0e6]
    assert mid["basis"] == "calibrated" and mid["hit_ratios"] == pytest.approx([0.35, 0.45])
    assert mid["hit_ratio_proportional"] == pytest.approx([0.4, 0.5])
    assert last["hit_ratios"] == pytest.approx([0.6, 0.7])
    # default: the last 7 days, at most 24 curves (buckets of 7 h, one curve each here)
    assert len(account.get(f"/api/v1/servers/{sid}/curves").json()["curves"]) == 6
    for bad in ({"max_curves": 0}, {"max_curves": 201}, {"start": "2026-01-01T00:00:00"}):
        assert account.get(f"/api/v1/servers/{sid}/curves", params=bad).status_code == 422, bad
    assert other.get(f"/api/v1/servers/{sid}/curves").status_code == 404
    assert account.get(f"/api/v1/servers/{uuid.uuid4()}/curves").status_code == 404


def test_cluster_curves_and_isolation(account, other) -> None:
    cid = account.post("/api/v1/clusters", json={"name": "c"}).json()["id"]
    now = datetime.now(UTC).replace(microsecond=0)
    with get_sessionmaker()() as db:
        for i in range(4):  # 4 h apart, the newest 1 h ago
            db.add(
                ClusterCurve(
                    org_id=uuid.UUID(account.org_id),
                    cluster_id=uuid.UUID(cid),
                    window_end=now - timedelta(hours=1 + 4 * (3 - i)),
                    sizes_bytes=[1.0, 2.0],
                    hit_ratios=[0.5, 0.5 + 0.1 * i],
                    current_bytes=1,
                    server_count=1,
                )
            )
        db.commit()
    start = now - timedelta(hours=16)
    r = account.get(
        f"/api/v1/clusters/{cid}/curves",
        params={"start": start.isoformat(), "end": now.isoformat(), "max_curves": 2},
    ).json()
    # buckets of 8 h: curves at 3 h and 7 h after start, then at 11 h and 15 h: the later of each
    assert [c["hit_ratios"][1] for c in r["curves"]] == pytest.approx([0.6, 0.8])
    all_four = account.get(f"/api/v1/clusters/{cid}/curves", params={"start": start.isoformat()}).json()
    assert len(all_four["curves"]) == 4
    assert other.get(f"/api/v1/clusters/{cid}/curves").status_code == 404


def test_cluster_list_summary_matches_sizing_and_alerts(account, other) -> None:
    cid = account.post(
        "/api/v1/clusters", json={"name": "a", "target_hit_ratio": 0.55, "price_per_gb_month": 2}
    ).json()["id"]
    empty = account.post("/api/v1/clusters", json={"name": "b"}).json()["id"]
    now = datetime.now(UTC)
    org = uuid.UUID(account.org_id)
    with get_sessionmaker()() as db:
        for age, meas, cur in ((2, 0.4, 10), (1, 0.52, 1 << 30)):  # the newer one counts
            db.add(
                ClusterCurve(
                    org_id=org,
                    cluster_id=uuid.UUID(cid),
                    window_end=now - timedelta(minutes=age),
                    computed_at=now - timedelta(minutes=age),
                    sizes_bytes=[1.0e9, 2.0e9, 4.0e9],
                    hit_ratios=[0.5, 0.6, 0.65],
                    current_bytes=cur,
                    measured_hit_ratio=meas,
                    server_count=1,
                )
            )
        for kind, sev, state in (
            ("below_target", "critical", "open"),
            ("stale_agent", "warning", "open"),
            ("stream_loss", "warning", "resolved"),
        ):
            db.add(
                Alert(
                    org_id=org, cluster_id=uuid.UUID(cid), kind=kind, severity=sev, message="m", state=state
                )
            )
        db.commit()
    rows = {c["id"]: c for c in account.get("/api/v1/clusters").json()}
    a, b = rows[cid], rows[empty]
    sizing = account.get(f"/api/v1/sizing/clusters/{cid}/memory").json()
    assert sizing["status"] == "ok"
    assert a["memory_for_target_bytes"] == pytest.approx(sizing["memory_bytes"], rel=1e-12)
    assert 1.0e9 < a["memory_for_target_bytes"] < 2.0e9  # 0.55 lies between the first two points
    assert a["memory_for_target_status"] == "ok"
    assert (a["measured_hit_ratio"], a["allocated_bytes"]) == (pytest.approx(0.52), 1 << 30)
    assert (a["open_alerts"], a["open_critical_alerts"]) == (2, 1)
    assert b["measured_hit_ratio"] is None and b["allocated_bytes"] is None and b["curve_window_end"] is None
    assert b["memory_for_target_bytes"] is None and b["open_alerts"] == 0
    # above what the curve reaches (a curve still climbing): above_curve, no bytes (as the sizing API says)
    account.patch(f"/api/v1/clusters/{cid}", json={"target_hit_ratio": 0.9})
    a = next(c for c in account.get("/api/v1/clusters").json() if c["id"] == cid)
    assert a["memory_for_target_status"] == "above_curve" and a["memory_for_target_bytes"] is None
    assert other.get("/api/v1/clusters").json() == []


def test_server_list_summary(account) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    org = uuid.UUID(account.org_id)
    snaps = []
    for age, hr in ((2 * DAY, 0.9), (timedelta(minutes=10), 0.8), (timedelta(minutes=2), 0.6)):
        sid, snap = upload_snapshot(account, end=now - age, hit_ratio=hr)
        snaps.append(snap)
    with get_sessionmaker()() as db:
        for snap, loss, err in zip(snaps, (0.5, 0.3, 0.07), (50.0, 2.0, -4.0), strict=True):
            one = Snapshot.id == uuid.UUID(snap["snapshot_id"])
            db.execute(update(Snapshot).where(one).values(loss_ratio=loss))
            end = datetime.fromisoformat(snap["window"]["end"])
            db.add(
                AccuracyRecord(
                    org_id=org,
                    server_id=uuid.UUID(sid),
                    snapshot_id=uuid.UUID(snap["snapshot_id"]),
                    window_start=end - timedelta(minutes=1),
                    window_end=end,
                    memory_bytes=1 << 26,
                    predicted_hit_ratio=0.5,
                    measured_hit_ratio=0.5 - err / 100,
                    error_pp=err,
                )
            )
        db.commit()
    s = next(x for x in account.get("/api/v1/servers").json() if x["id"] == sid)
    assert s["loss_ratio"] == pytest.approx(0.07)
    assert s["measured_hit_ratio"] == pytest.approx(0.6, abs=1e-3)
    assert s["curve_error_pp"] == pytest.approx(3.0)  # |2| and |-4|; the 2-day-old record is out
    acc = account.get(f"/api/v1/servers/{sid}/accuracy").json()
    assert s["curve_error_pp"] == pytest.approx(acc["mean_abs_error_pp"])
    fresh, _ = upload_snapshot(account, address="10.0.0.8:11211")
    f = next(x for x in account.get("/api/v1/servers").json() if x["id"] == fresh)
    assert f["curve_error_pp"] is None and f["loss_ratio"] == 0.0
