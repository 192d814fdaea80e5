"""Server and cluster status come from the API (hitcurve.status), with the thresholds behind them
(GET /thresholds): the same definitions the alert rules use, so the dashboard derives nothing."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from conftest import upload_snapshot
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, Alert, ClusterCurve, Server, Snapshot
from hitcurve.status import Thresholds


def _server(account, sid: str) -> dict:
    return next(x for x in account.get("/api/v1/servers").json() if x["id"] == sid)


def test_thresholds_endpoint_names_the_statistic_and_follows_the_environment(account, monkeypatch) -> None:
    body = account.get("/api/v1/thresholds").json()
    d = Thresholds()
    assert body == {
        "silent_after_s": d.silent_after_s,
        "loss_ratio": d.loss_ratio,
        "curve_error_pp": d.curve_error_pp,
        "curve_error_statistic": "mean_abs_error_pp",
        "curve_error_min_windows": d.curve_error_min_windows,
    }
    monkeypatch.setenv("HITCURVE_ALERT_SILENT_AFTER_S", "1234")
    assert account.get("/api/v1/thresholds").json()["silent_after_s"] == 1234.0


def test_server_status_ok_lossy_drifting_silent(account) -> None:
    now = datetime.now(UTC).replace(microsecond=0)
    org = uuid.UUID(account.org_id)
    th = Thresholds()
    sid, snap = upload_snapshot(account, end=now - timedelta(seconds=30))
    s = _server(account, sid)
    assert (s["status"], s["status_note"], s["loss_warning"], s["curve_error_warning"]) == (
        "ok",
        None,
        False,
        None,
    )

    one = Snapshot.id == uuid.UUID(snap["snapshot_id"])
    with get_sessionmaker()() as db:
        db.execute(update(Snapshot).where(one).values(loss_ratio=th.loss_ratio * 2))
        db.commit()
    s = _server(account, sid)
    assert (s["status"], s["status_note"], s["loss_warning"]) == ("warning", "events lost", True)

    with get_sessionmaker()() as db:
        db.execute(update(Snapshot).where(one).values(loss_ratio=0.0))
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
                measured_hit_ratio=0.5 - (th.curve_error_pp + 1) / 100,
                error_pp=th.curve_error_pp + 1,
            )
        )
        db.commit()
    s = _server(account, sid)
    assert (s["status"], s["status_note"], s["loss_warning"], s["curve_error_warning"]) == (
        "warning",
        "curve drifting",
        False,
        True,
    )

    # silent: just past silent_after_s (the agent-silent alert's threshold), not 10 minutes
    with get_sessionmaker()() as db:
        past = now - timedelta(seconds=th.silent_after_s + 60)
        db.execute(update(Server).where(Server.id == uuid.UUID(sid)).values(last_snapshot_at=past))
        db.commit()
    s = _server(account, sid)
    assert (s["status"], s["status_note"]) == ("critical", "agent silent")


def test_server_without_snapshot_has_no_data(account) -> None:
    sid, _ = upload_snapshot(account, address="10.0.0.9:11211")
    with get_sessionmaker()() as db:
        db.execute(update(Server).where(Server.id == uuid.UUID(sid)).values(last_snapshot_at=None))
        db.commit()
    s = _server(account, sid)
    assert (s["status"], s["status_note"], s["loss_warning"]) == ("no_data", "no snapshot yet", False)


@pytest.mark.parametrize(
    ("measured", "alerts", "status"),
    [
        (0.7, [], "ok"),
        (0.5, [], "warning"),  # below the target 0.6
        (0.7, [("savings_available", "info")], "warning"),
        (0.7, [("memory_short", "critical")], "critical"),
    ],
)
def test_cluster_status(account, measured: float, alerts: list[tuple[str, str]], status: str) -> None:
    cid = account.post("/api/v1/clusters", json={"name": "c", "target_hit_ratio": 0.6}).json()["id"]
    assert next(c for c in account.get("/api/v1/clusters").json() if c["id"] == cid)["status"] == "no_data"
    now = datetime.now(UTC)
    org = uuid.UUID(account.org_id)
    with get_sessionmaker()() as db:
        db.add(
            ClusterCurve(
                org_id=org,
                cluster_id=uuid.UUID(cid),
                window_end=now,
                computed_at=now,
                sizes_bytes=[1.0e9, 2.0e9],
                hit_ratios=[0.5, 0.8],
                current_bytes=1 << 30,
                measured_hit_ratio=measured,
                server_count=1,
            )
        )
        for kind, sev in alerts:
            db.add(
                Alert(
                    org_id=org, cluster_id=uuid.UUID(cid), kind=kind, severity=sev, message="m", state="open"
                )
            )
        db.commit()
    assert next(c for c in account.get("/api/v1/clusters").json() if c["id"] == cid)["status"] == status
