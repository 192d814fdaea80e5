"""Server and cluster status come from the API (hitcurve.rules.status), with the thresholds behind them
(GET /thresholds): the same definitions the alert rules use, so the dashboard derives nothing."""

import uuid
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import update

from conftest import upload_snapshot
from hitcurve.core import accepting
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, Alert, ClusterCurve, Server, Snapshot
from hitcurve.rules.alerts import stale_agent
from hitcurve.rules.status import RECONNECTING, SILENT_CRITICAL_AFTER_S, Thresholds


@pytest.fixture
def backend_up():
    """Sets the start of the backend's up period on the test Redis (as the API processes' beats
    do, hitcurve.core.accepting): backend_up(ago) says the backend has accepted uploads for `ago`."""
    import redis

    client = redis.Redis.from_url(get_settings().redis_url)

    def up(ago: timedelta) -> None:
        client.set(accepting.SINCE_KEY, repr(datetime.now(UTC).timestamp() - ago.total_seconds()))
        client.set(accepting.ALIVE_KEY, repr(datetime.now(UTC).timestamp()), px=600_000)

    up(timedelta(days=1))
    yield up
    client.delete(accepting.ALIVE_KEY, accepting.SINCE_KEY)
    client.close()


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


def test_server_status_ok_lossy_drifting_silent(account, backend_up) -> None:
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
    assert (s["status"], s["status_note"]) == ("warning", "agent silent")  # the alert's severity too
    with get_sessionmaker()() as db:  # an hour silent: critical, in the list as in the alert
        past = now - timedelta(seconds=SILENT_CRITICAL_AFTER_S + 60)
        db.execute(update(Server).where(Server.id == uuid.UUID(sid)).values(last_snapshot_at=past))
        db.commit()
    s = _server(account, sid)
    assert (s["status"], s["status_note"]) == ("critical", "agent silent")
    assert stale_agent("x", past, datetime.now(UTC), th).severity == "critical"  # type: ignore[union-attr]


def _silent_for(sid: str, ago: timedelta) -> None:
    with get_sessionmaker()() as db:
        past = datetime.now(UTC) - ago
        db.execute(update(Server).where(Server.id == uuid.UUID(sid)).values(last_snapshot_at=past))
        db.commit()


def test_a_backend_restart_leaves_the_agents_fine_in_the_servers_list(account, backend_up) -> None:
    """An agent silent for an hour because the backend was down is not silent: the list says it is
    reconnecting until the backend has been up for silent_after_s, then silent if still nothing
    came (the agent-silent alert's rule: rules.status.blamed_silence_s)."""
    th = Thresholds()
    sid, _ = upload_snapshot(account, address="10.0.0.11:11211")
    _silent_for(sid, timedelta(hours=1, minutes=5))
    backend_up(timedelta(hours=2))  # the backend was up all along: the agent's silence
    assert (_server(account, sid)["status"], _server(account, sid)["status_note"]) == (
        "critical",
        "agent silent",
    )
    backend_up(timedelta(seconds=30))  # it just restarted after the hour down: not the agent's
    s = _server(account, sid)
    assert (s["status"], s["status_note"]) == ("ok", RECONNECTING)
    assert "silent" not in RECONNECTING and "stale" not in RECONNECTING
    backend_up(timedelta(seconds=th.silent_after_s + 60))  # up long enough to have reconnected
    s = _server(account, sid)
    assert (s["status"], s["status_note"]) == ("warning", "agent silent")  # 6 min of its own silence


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
        # the cluster's member (a cluster whose servers all left shows no status from its old curve)
        db.add(Server(org_id=org, cluster_id=uuid.UUID(cid), address="10.0.0.9:11211", instance_id="m"))
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
