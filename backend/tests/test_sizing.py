"""Sizing answers: monotone interpolation, basis, band, age, not-enough-data and unreachable."""

import math
import uuid
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from conftest import bearer, insert_server_curve, upload_snapshot
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, ClusterCurve, SimulationResult, SimulationRun
from hitcurve.rules.curves import Pchip
from hitcurve_testing.snapshots import make_snapshot

GB = 1e9


# --- the interpolant ---------------------------------------------------------------------------
def test_pchip_reproduces_a_straight_line_exactly() -> None:
    # A cubic Hermite interpolant with the secant slopes of linear data is that line.
    xs = [1e9 * k for k in range(1, 11)]
    ys = [0.09 * k for k in range(1, 11)]
    f = Pchip.fit(xs, ys)
    for x in (0.0, 0.5e9, 1.25e9, 7.7e9, 10e9):
        assert f(x) == pytest.approx(0.09 * x / 1e9, abs=1e-12)
    assert f.inverse(0.45) == pytest.approx(5e9, rel=1e-9)
    assert f.inverse(0.95) is None
    assert f(20e9) == pytest.approx(0.9)


def test_pchip_flat_segments_stay_flat() -> None:
    f = Pchip.fit([1, 2, 3, 4], [0.2, 0.5, 0.5, 0.8])
    for x in (2.0, 2.3, 2.9, 3.0):
        assert f(x) == pytest.approx(0.5)
    assert f.inverse(0.5) == pytest.approx(2.0, abs=1e-6)  # the smallest size that reaches it


def test_pchip_rejects_bad_curves() -> None:
    with pytest.raises(ValueError):
        Pchip.fit([1, 2, 2], [0.1, 0.2, 0.3])
    with pytest.raises(ValueError):
        Pchip.fit([1, 2, 3], [0.1, 0.3, 0.2])


curves = st.lists(st.tuples(st.floats(0.001, 1000), st.floats(0, 1)), min_size=1, max_size=40).map(
    lambda pts: (sorted({round(p[0], 6) for p in pts}), sorted(p[1] for p in pts))
)


@given(curves, st.lists(st.floats(0, 1200), min_size=2, max_size=20))
@settings(max_examples=200, deadline=None)
def test_pchip_is_monotone_passes_knots_and_inverts(curve, probes) -> None:
    xs, ys = curve
    ys = ys[: len(xs)]
    f = Pchip.fit(xs, ys)
    for x, y in zip(xs, ys, strict=True):
        assert f(x) == pytest.approx(y, abs=1e-12)
    values = [f(x) for x in sorted(probes)]
    assert all(b >= a - 1e-12 for a, b in zip(values, values[1:], strict=False))
    for t in (0.0, ys[-1] / 3, ys[-1]):
        x = f.inverse(t)
        assert x is not None and f(x) >= t - 1e-9
        if x > 1e-9:
            assert f(x * (1 - 1e-6)) <= t + 1e-9


# --- the endpoints -----------------------------------------------------------------------------
LINE_X = [GB * k for k in range(1, 101)]
LINE_Y = [0.009 * k for k in range(1, 101)]  # 0.9 at 100 GB, straight line through the origin


@pytest.fixture
def server(account) -> str:
    sid, snap = upload_snapshot(account)
    insert_server_curve(
        account.org_id,
        sid,
        snap,
        LINE_X,
        LINE_Y,
        hit_ratio_calibrated=[y * 0.5 for y in LINE_Y],
        band_low=[y * 0.4 for y in LINE_Y],
        band_high=[y * 0.6 for y in LINE_Y],
    )
    return sid


def test_not_enough_data_before_a_curve(account) -> None:
    sid, _ = upload_snapshot(account)
    r = account.get(f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.5})
    assert r.status_code == 409 and r.json()["code"] == "not_enough_data"
    r = account.get(f"/api/v1/sizing/servers/{sid}/hit-ratio", params={"memory_bytes": 10})
    assert r.status_code == 409


def test_memory_for_target_on_calibrated_curve(account, server) -> None:
    r = account.get(f"/api/v1/sizing/servers/{server}/memory", params={"target_hit_ratio": 0.18})
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["basis"] == "calibrated" and a["status"] == "ok" and a["policy"] is None
    # calibrated curve: 0.0045 per GB -> 0.18 needs 40 GB
    assert a["memory_bytes"] == pytest.approx(40 * GB, rel=1e-6)
    # the band (hitcurve.rules.band): integer bytes on either side of the answer, at its confidence
    b = a["band"]
    assert isinstance(b["memory_bytes_min"], int) and isinstance(b["memory_bytes_max"], int)
    assert b["memory_bytes_min"] < a["memory_bytes"] < b["memory_bytes_max"]
    assert b["hit_rate_min"] < 0.18 < b["hit_rate_max"] and b["confidence"] == 0.9
    assert "low" not in b and "high" not in b and "source" not in b
    assert 0 <= a["curve"]["age_seconds"] < 120
    assert "GiB" in a["message"]


def test_message_says_when_the_curve_carries_the_policy_correction(account) -> None:
    def server_with(correction: dict, address: str) -> str:
        sid, snap = upload_snapshot(account, address)
        calibration = {"method": "size-scale", "policy_correction": correction}
        insert_server_curve(
            account.org_id, sid, snap, LINE_X, LINE_Y, hit_ratio_calibrated=LINE_Y, calibration=calibration
        )
        return sid

    sid = server_with({"applied": True, "sampled_gets": 31234}, "10.0.0.7:11211")
    a = account.get(f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.18}).json()
    assert a["basis"] == "calibrated"
    assert "corrected for memcached's segmented LRU from 31,234 sampled reads" in a["message"]
    assert "above today's memory" not in a["message"]  # a correction stored without the ghost view
    # the proportional estimate is the LRU model: no such note
    e = account.get(
        f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.18, "curve": "proportional"}
    ).json()
    assert e["basis"] == "estimate" and "segmented" not in e["message"]
    # with the ghost view's lift above today's memory (worker policy_correction.apply's lift_pp)
    lifted = {"applied": True, "sampled_gets": 31234, "lift_pp": {"1.5": 0.4, "2": 1.1, "3": 0.9}}
    sid = server_with(lifted, "10.0.2.9:11211")
    a = account.get(f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.18}).json()
    assert "from 31,234 sampled reads, above today's memory too" in a["message"]


def test_answer_reports_the_windows_stream_loss_and_warns_when_flagged(account) -> None:
    key = account.agent_key()
    answers = {}
    for address, loss, flagged in (("10.0.3.1:11211", 0.004, False), ("10.0.3.2:11211", 0.18, True)):
        snap = make_snapshot(address)
        snap["loss"].update(loss_ratio=loss, flagged=flagged)
        r = account.client.post("/api/v1/agent/snapshots", json=snap, headers=bearer(key))
        assert r.status_code == 202, r.text
        sid = next(s["id"] for s in account.get("/api/v1/servers").json() if s["address"] == address)
        insert_server_curve(account.org_id, sid, snap, LINE_X, LINE_Y, hit_ratio_calibrated=LINE_Y)
        r = account.get(f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.18})
        assert r.status_code == 200, r.text
        answers[flagged] = r.json()
    quiet, lossy = answers[False], answers[True]
    assert quiet["curve"]["stream_loss_ratio"] == pytest.approx(0.004)
    assert quiet["curve"]["stream_loss_flagged"] is False and "lost" not in quiet["message"]
    assert lossy["curve"]["stream_loss_ratio"] == pytest.approx(0.18)
    assert lossy["curve"]["stream_loss_flagged"] is True
    assert "lost 18\u00a0% of memcached's events" in lossy["message"]
    assert lossy["memory_bytes"] == pytest.approx(quiet["memory_bytes"])  # a warning, not a new answer


def test_memory_on_the_estimate_and_unreachable(account, server) -> None:
    r = account.get(
        f"/api/v1/sizing/servers/{server}/memory", params={"target_hit_ratio": 0.45, "curve": "proportional"}
    ).json()
    assert r["basis"] == "estimate" and r["memory_bytes"] == pytest.approx(50 * GB, rel=1e-6)
    r = account.get(f"/api/v1/sizing/servers/{server}/memory", params={"target_hit_ratio": 0.6}).json()
    # a straight line that has not levelled off: not unreachable, a lower bound (the curve's reach)
    assert r["status"] == "above_curve" and r["memory_bytes"] is None
    assert r["memory_bytes_at_least"] == int(LINE_X[-1]) and r["memory_limit_bytes"] is None
    assert r["curve"]["max_hit_ratio"] == pytest.approx(0.45) and "needs more than" in r["message"]
    assert "--ghost-factor" in r["message"]
    r = account.get(f"/api/v1/sizing/servers/{server}/memory", params={"target_hit_ratio": 0.0}).json()
    assert r["memory_bytes"] == 0


def test_hit_ratio_at_memory(account, server) -> None:
    r = account.get(
        f"/api/v1/sizing/servers/{server}/hit-ratio", params={"memory_bytes": int(25 * GB)}
    ).json()
    assert r["status"] == "ok" and r["hit_ratio"] == pytest.approx(0.1125, rel=1e-6)
    assert r["band"]["hit_rate_min"] < 0.1125 < r["band"]["hit_rate_max"]
    r = account.get(
        f"/api/v1/sizing/servers/{server}/hit-ratio", params={"memory_bytes": int(500 * GB)}
    ).json()
    assert r["status"] == "above_curve" and r["hit_ratio"] == pytest.approx(0.45)


def test_band_drift_from_the_benchmark_prior_then_the_servers_record(account) -> None:
    from hitcurve.rules import band

    sid, snap = upload_snapshot(account)
    today = int(LINE_X[50])  # insert_server_curve's current_bytes: the band is narrowest here
    insert_server_curve(account.org_id, sid, snap, LINE_X, LINE_Y, hit_ratio_calibrated=LINE_Y)
    r = account.get(f"/api/v1/sizing/servers/{sid}/hit-ratio", params={"memory_bytes": today}).json()
    b = r["band"]
    assert b["basis"] == "benchmark_prior" and b["graded_predictions"] == 0
    assert b["drift_pp"] == pytest.approx(band.PRIOR_DRIFT_PP)
    assert "benchmark's prediction error" in r["message"]
    # the band holds today's measured point
    measured = snap["measured"]["hit_ratio"]
    assert b["hit_rate_min"] <= measured <= b["hit_rate_max"]
    now = datetime.now(UTC)
    with get_sessionmaker()() as db:
        # the last one graded while memcached was still filling: not counted (its hit rate rose
        # with the fill, not by the curve's error)
        for i, err in enumerate((1.0, -3.0, 2.0, -30.0)):
            s2 = upload_snapshot(account, end=now - timedelta(minutes=i + 2), fill=1.0 if i < 3 else 0.5)[1]
            db.add(
                AccuracyRecord(
                    org_id=uuid.UUID(account.org_id),
                    server_id=uuid.UUID(sid),
                    snapshot_id=uuid.UUID(s2["snapshot_id"]),
                    window_start=now - timedelta(minutes=3),
                    window_end=now - timedelta(minutes=i + 2),  # the graded snapshot's window
                    memory_bytes=10,
                    predicted_hit_ratio=0.5,
                    measured_hit_ratio=0.5 - err / 100,
                    error_pp=err,
                )
            )
        db.commit()
    r = account.get(f"/api/v1/sizing/servers/{sid}/hit-ratio", params={"memory_bytes": today}).json()
    b = r["band"]
    assert b["basis"] == "server_record" and b["graded_predictions"] == 3
    # shrunk toward the prior: sqrt((1 + 9 + 4 + 10 x 1.6^2) / 13)
    drift = math.sqrt((14 + band.PRIOR_WEIGHT * band.PRIOR_DRIFT_PP**2) / (3 + band.PRIOR_WEIGHT))
    assert b["drift_pp"] == pytest.approx(drift, abs=1e-3)
    assert "3 graded predictions of this server" in r["message"]


def test_simulated_policy_basis(account, server) -> None:
    now = datetime.now(UTC)
    r = account.get(
        f"/api/v1/sizing/servers/{server}/memory", params={"target_hit_ratio": 0.5, "policy": "gdwheel"}
    )
    assert r.status_code == 409 and "gdwheel" in r.json()["detail"]
    with get_sessionmaker()() as db:
        run = SimulationRun(
            org_id=uuid.UUID(account.org_id),
            server_id=uuid.UUID(server),
            policies=["lru", "gdwheel"],
            sizes_bytes=[int(10 * GB), int(20 * GB)],
            window_start=now - timedelta(hours=1),
            window_end=now,
            status="done",
            progress=1.0,
            finished_at=now,
        )
        db.add(run)
        db.flush()
        for size, hr in ((10 * GB, 0.4), (20 * GB, 0.6)):
            db.add(
                SimulationResult(
                    org_id=run.org_id,
                    run_id=run.id,
                    policy="gdwheel",
                    size_bytes=int(size),
                    hit_ratio=hr,
                    requests=1000,
                )
            )
        db.commit()
    r = account.get(
        f"/api/v1/sizing/servers/{server}/memory", params={"target_hit_ratio": 0.5, "policy": "gdwheel"}
    )
    a = r.json()
    assert r.status_code == 200 and a["basis"] == "simulated" and a["policy"] == "gdwheel"
    assert 10 * GB < a["memory_bytes"] < 20 * GB
    # points (0,0), (10 GB, 0.4), (20 GB, 0.6): monotone interpolation stays inside the segment's range
    at15 = account.get(
        f"/api/v1/sizing/servers/{server}/hit-ratio",
        params={"memory_bytes": int(15 * GB), "policy": "gdwheel"},
    ).json()["hit_ratio"]
    assert 0.4 < at15 < 0.6


def test_cluster_memory_and_nodes(account) -> None:
    cid = account.post("/api/v1/clusters", json={"name": "web", "target_hit_ratio": 0.45}).json()["id"]
    r = account.get(f"/api/v1/sizing/clusters/{cid}/memory")
    assert r.status_code == 409 and r.json()["code"] == "not_enough_data"
    assert "assign servers" in r.json()["detail"]
    # a server assigned, its first snapshot not processed yet: no "assign servers" (it is done)
    sid, _ = upload_snapshot(account, address="10.0.0.99:11211")
    assert account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": cid}).status_code == 200
    r = account.get(f"/api/v1/sizing/clusters/{cid}/memory")
    assert r.status_code == 409 and r.json()["code"] == "not_enough_data"
    assert (
        "assign servers" not in r.json()["detail"]
        and "its 1 server's first processed" in r.json()["detail"]
    )
    assert account.get(f"/api/v1/sizing/clusters/{cid}/nodes").json()["code"] == "node_size_required"
    with get_sessionmaker()() as db:
        db.add(
            ClusterCurve(
                org_id=uuid.UUID(account.org_id),
                cluster_id=uuid.UUID(cid),
                window_end=datetime.now(UTC),
                basis="calibrated",
                sizes_bytes=LINE_X,
                hit_ratios=LINE_Y,
                current_bytes=int(30 * GB),
                server_count=3,
            )
        )
        db.commit()
    a = account.get(f"/api/v1/sizing/clusters/{cid}/memory").json()
    assert a["target_hit_ratio"] == 0.45 and a["memory_bytes"] == pytest.approx(50 * GB, rel=1e-6)
    assert a["basis"] == "calibrated"
    n = account.get(f"/api/v1/sizing/clusters/{cid}/nodes", params={"node_size_bytes": int(16 * GB)}).json()
    assert n["nodes"] == math.ceil(50 / 16) and n["question"] == "nodes_for_hit_ratio"
    h = account.get(f"/api/v1/sizing/clusters/{cid}/hit-ratio", params={"memory_bytes": int(10 * GB)}).json()
    assert h["hit_ratio"] == pytest.approx(0.09, rel=1e-6)
    u = account.get(
        f"/api/v1/sizing/clusters/{cid}/nodes",
        params={"node_size_bytes": int(16 * GB), "target_hit_ratio": 0.95},
    ).json()
    assert u["status"] == "above_curve" and u["nodes"] is None


def test_sizing_with_api_token_and_errors(account, other, anon, server) -> None:
    tok = account.api_token()
    url = f"/api/v1/sizing/servers/{server}/memory"
    assert anon.get(url, params={"target_hit_ratio": 0.1}, headers=bearer(tok)).status_code == 200
    assert (
        anon.get(url, params={"target_hit_ratio": 0.1}, headers=bearer(other.api_token())).status_code == 404
    )
    assert (
        anon.get(url, params={"target_hit_ratio": 0.1}, headers=bearer(account.agent_key())).status_code
        == 403
    )
    for bad in ("1.5", "-0.1", "nan", "inf", "abc"):
        r = anon.get(url, params={"target_hit_ratio": bad}, headers=bearer(tok))
        assert r.status_code == 422, (bad, r.text)
    assert anon.get(url, headers=bearer(tok)).status_code == 422
    r = anon.get(url, params={"target_hit_ratio": 0.1, "policy": "belady"}, headers=bearer(tok))
    assert r.status_code == 422
    assert (
        anon.get(
            f"/api/v1/sizing/servers/{uuid.uuid4()}/memory",
            params={"target_hit_ratio": 0.1},
            headers=bearer(tok),
        ).status_code
        == 404
    )
    assert (
        anon.get(
            "/api/v1/sizing/servers/not-a-uuid/memory", params={"target_hit_ratio": 0.1}, headers=bearer(tok)
        ).status_code
        == 422
    )
