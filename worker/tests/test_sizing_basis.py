"""Stats-only windows (memcached refused `watch`) through the real backend and real
PostgreSQL, each upload processed by the worker's own task (hitcurve_worker.snapshot_tasks.process,
in process: the Celery round trip is test_pipeline's): the worker turns the agent's model into the
server curve, the sizing answer names its basis (`data_basis: "stats_only"`), says so first and
gives the stats-only band, wider than a watch-based curve's; a window whose model has no curve is
processed without one, and the answer says why. The agent side, live: e2e/tests/stats-only.spec.ts."""

from __future__ import annotations

import math
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select
from worker_helpers import Org, upload

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import ServerCurve, Snapshot
from hitcurve.rules import band
from hitcurve.schemas.sizing import STATS_ONLY_LABEL
from hitcurve_testing.snapshots import make_snapshot, make_stats_only_snapshot

MIB = 1 << 20


def process(sid: str) -> dict[str, Any]:
    from hitcurve_worker.snapshot_tasks import process as task

    return task(uuid.UUID(sid))


def status_of(sid: str) -> str | None:
    with get_sessionmaker()() as db:
        return db.execute(select(Snapshot.status).where(Snapshot.id == uuid.UUID(sid))).scalar_one_or_none()


def read_token(org: Org) -> str:
    from hitcurve.core.security import sha256_hex
    from hitcurve.models import ApiToken

    secret = "hct_" + uuid.uuid4().hex + uuid.uuid4().hex
    with get_sessionmaker()() as db:
        db.add(
            ApiToken(
                org_id=org.id, name="reader", prefix=secret[:8], token_hash=sha256_hex(secret), scope="read"
            )
        )
        db.commit()
    return secret


def server_id(client: Any, token: str, address: str) -> str:
    servers = client.get("/api/v1/servers", headers={"Authorization": f"Bearer {token}"}).json()
    return str(next(s["id"] for s in servers if s["address"] == address))


def test_stats_only_windows_become_a_curve_and_an_answer_that_names_its_basis(client: Any, org: Org) -> None:
    base = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)
    address = f"10.15.1.1:{uuid.uuid4().int % 60000}"
    token = read_token(org)
    h = {"Authorization": f"Bearer {token}"}
    # first a window whose model has no curve yet (memcached not evicting): processed, no curve,
    # and the answer says why instead of a number
    first = make_stats_only_snapshot(address, end=base, fitted=False)
    assert upload(client, org, first).status_code == 202
    assert process(first["snapshot_id"])["status"] == "processed"
    assert status_of(first["snapshot_id"]) == "processed"
    sid = server_id(client, token, address)
    r = client.get(f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.9}, headers=h)
    assert r.status_code == 409 and r.json()["code"] == "not_enough_data"
    assert "refused `watch`" in r.json()["detail"] and "not_evicting" in r.json()["detail"]
    # then five fitted windows (the answer's fitted-curve cache would keep the 409 for its TTL)
    from hitcurve.sizing.cache import basis_cache

    basis_cache().clear()
    ids = []
    for m in range(1, 6):
        snap = make_stats_only_snapshot(address, end=base + timedelta(minutes=m), hit_ratio=0.8)
        r = upload(client, org, snap)
        assert r.status_code == 202, r.text
        ids.append(snap["snapshot_id"])
        assert process(snap["snapshot_id"])["status"] == "processed"
    with get_sessionmaker()() as db:
        assert (
            db.execute(
                select(ServerCurve).where(ServerCurve.snapshot_id == uuid.UUID(first["snapshot_id"]))
            ).scalar_one_or_none()
            is None
        ), "no fitted model, no curve"
        c = db.execute(select(ServerCurve).where(ServerCurve.snapshot_id == uuid.UUID(ids[-1]))).scalar_one()
        # the model over memory: items x (today's slab memory / today's items); through the measured point
        assert c.current_bytes == 64 * MIB
        x = np.asarray(c.sizes_bytes)
        assert x[-1] == pytest.approx(5 * 64 * MIB, rel=1e-6)
        assert float(np.interp(c.current_bytes, x, c.hit_ratio_calibrated)) == pytest.approx(0.8, abs=1e-4)
        assert c.calibration["basis"] == "stats_only" and c.calibration["method"] == "stats-model"

    srv = next(s for s in client.get("/api/v1/servers", headers=h).json() if s["id"] == sid)
    assert srv["data_basis"] == "stats_only"
    cur = client.get(f"/api/v1/servers/{sid}/curve", headers=h).json()
    assert cur["merged"]["data_basis"] == "stats_only" and cur["classes"] == []
    assert cur["latest_snapshot"]["data_basis"] == "stats_only"
    assert cur["latest_snapshot"]["stats_model_state"] == "fitted"

    a = client.get(
        f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.85}, headers=h
    ).json()
    assert a["status"] == "ok", a
    assert a["data_basis"] == "stats_only"
    assert a["message"].startswith(STATS_ONLY_LABEL), a["message"]
    assert "stats-only model" in a["message"] and "calibrated" not in a["message"]
    # The band at half today's memory (one doubling, away from the 100 % ceiling): the stats-only
    # model's width, not a watch curve's.
    r = client.get(
        f"/api/v1/sizing/servers/{sid}/hit-ratio", params={"memory_bytes": 32 * MIB}, headers=h
    ).json()
    assert r["data_basis"] == "stats_only"
    width = r["band"]["hit_rate_max"] - r["band"]["hit_rate_min"]
    drift = 0.0  # five windows measuring the same hit ratio: the accuracy record's errors are 0
    stats_w = 2 * band.Z * math.hypot(drift, band.STATS_ONLY_PER_DOUBLING_PP) / 100
    watch_w = 2 * band.Z * math.hypot(drift, band.PER_DOUBLING_PP) / 100
    # (edges are held non-decreasing: the high edge may stay up from smaller sizes, never lower)
    assert 0.95 * stats_w <= width <= 1.5 * stats_w, (width, stats_w)
    assert width > 3 * watch_w

    # In a cluster: the cluster's answer and the weekly e-mail say it too
    from hitcurve.models import Cluster, Server
    from hitcurve.reports.content import build_report
    from hitcurve.reports.render import render

    with get_sessionmaker()() as db:
        cl = Cluster(org_id=org.id, name=f"serverless-{uuid.uuid4().hex[:6]}", target_hit_ratio=0.85)
        db.add(cl)
        db.flush()
        db.get(Server, uuid.UUID(sid)).cluster_id = cl.id  # type: ignore[union-attr]
        db.commit()
        cluster_id = cl.id
    more = make_stats_only_snapshot(address, end=base + timedelta(minutes=6), hit_ratio=0.8)
    assert upload(client, org, more).status_code == 202
    assert process(more["snapshot_id"])["cluster_curve"] is True
    ca = client.get(f"/api/v1/sizing/clusters/{cluster_id}/memory", headers=h).json()
    assert ca["data_basis"] == "stats_only" and ca["message"].startswith(STATS_ONLY_LABEL), ca
    with get_sessionmaker()() as db:
        report = build_report(db, org.id, datetime.now(UTC), cluster_id)
    _, text, html = render(report, "ops@example.com")
    assert "estimated from stats only: memcached refused `watch`" in text
    assert "stimated from stats only</strong>" in html

    # A watch server with a curve is labelled watch
    wsnap = make_snapshot(f"10.15.1.2:{uuid.uuid4().int % 60000}", end=base + timedelta(minutes=5))
    assert upload(client, org, wsnap).status_code == 202
    assert process(wsnap["snapshot_id"])["status"] == "processed"
    wid = server_id(client, token, wsnap["server"]["address"])
    wa = client.get(
        f"/api/v1/sizing/servers/{wid}/memory", params={"target_hit_ratio": 0.5}, headers=h
    ).json()
    assert wa["data_basis"] == "watch" and STATS_ONLY_LABEL not in wa["message"]


def test_ttl_traffic_is_sized_on_the_agents_merged_ttl_aware_curve(client: Any, org: Org) -> None:
    """TTL-aware sizing: a window whose traffic carries TTLs (hitcurve/rules/ttl.py: the agent's TTL-aware and
    TTL-oblivious curves differ by >= TTL_CURVE_GAP_PP) is sized on the agent's merged TTL-aware
    curve, calibrated through memcached's measured point, and the answer says so (ttl_aware, the
    message); a window where expiry moves the curve less, and one from an agent without the
    breakdown, stay on the LRU class curves. The classes' TTL-aware curves are stored, not used."""
    from hitcurve.ingest.classpack import unpack
    from hitcurve.rules.ttl import TTL_CURVE_GAP_PP, curve_gap_pp
    from hitcurve.sizing.cache import basis_cache
    from hitcurve_testing.snapshots import add_breakdown
    from hitcurve_worker.merge import ClassCurve, merge
    from hitcurve_worker.pipeline import TtlCurve

    token = read_token(org)
    h = {"Authorization": f"Bearer {token}"}
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=3)
    ttl_snap = add_breakdown(make_snapshot(f"10.16.1.1:{uuid.uuid4().int % 60000}", end=end, hit_ratio=0.7))
    little = add_breakdown(make_snapshot(f"10.16.1.2:{uuid.uuid4().int % 60000}", end=end, hit_ratio=0.7))
    # expiry moves this one's curve by half the threshold at most
    little["ttl"]["oblivious_points"] = [
        [x, min(1.0, round(y + TTL_CURVE_GAP_PP / 200, 6))] for x, y in little["ttl_points"]
    ]
    plain = make_snapshot(f"10.16.1.3:{uuid.uuid4().int % 60000}", end=end, hit_ratio=0.7)
    assert curve_gap_pp(ttl_snap["ttl_points"], ttl_snap["ttl"]["oblivious_points"]) > 10
    for doc in (ttl_snap, little, plain):
        assert upload(client, org, doc).status_code == 202
        assert process(doc["snapshot_id"])["status"] == "processed"
    with get_sessionmaker()() as db:
        snaps = [db.get(Snapshot, uuid.UUID(d["snapshot_id"])) for d in (ttl_snap, little, plain)]
        flags = [s.ttl_aware for s in snaps]  # type: ignore[union-attr]
        merged_ttl = [(s.ttl_sizes_bytes, s.ttl_hit_ratios) for s in snaps]  # type: ignore[union-attr]
        stored = [
            (c.class_id, c.ttl_sizes_items, c.ttl_hit_ratios)
            for c in unpack(snaps[0].classes or b"")  # type: ignore[union-attr]
        ]
        curves = {
            d["snapshot_id"]: db.execute(
                select(ServerCurve).where(ServerCurve.snapshot_id == uuid.UUID(d["snapshot_id"]))
            ).scalar_one()
            for d in (ttl_snap, little, plain)
        }
    assert flags == [True, False, None]
    assert merged_ttl[0] == ([p[0] for p in ttl_snap["ttl_points"]], [p[1] for p in ttl_snap["ttl_points"]])
    assert merged_ttl[2] == (None, None)
    for (cid, xs, ys), c in zip(stored, ttl_snap["classes"], strict=True):
        assert cid == c["id"] and [[x, y] for x, y in zip(xs, ys, strict=True)] == c["curve"]["ttl_points"]

    def lru_join(doc: dict[str, Any]) -> np.ndarray:
        cls = [
            ClassCurve(
                c["id"],
                c["chunk_size"],
                c["pages"],
                c["curve"]["current_items"],
                float(c["requests"]),
                np.asarray([p[0] for p in c["curve"]["points"]]),
                np.asarray([p[1] for p in c["curve"]["points"]]),
            )
            for c in doc["classes"]
        ]
        return merge(cls).proportional

    # the TTL window's model is the agent's merged curve on the merge's grid, not the classes' join
    tc = curves[ttl_snap["snapshot_id"]]
    want = TtlCurve(*merged_ttl[0]).on(np.asarray(tc.sizes_bytes))  # type: ignore[arg-type]
    assert np.allclose(tc.hit_ratio_proportional, want, atol=1e-9)
    assert not np.allclose(tc.hit_ratio_proportional, lru_join(ttl_snap), atol=0.01)
    assert tc.calibration["ttl_aware"] is True and tc.calibration["measured"] == pytest.approx(0.7)
    # measured over its whole range (SHARDS++, no ghost): its reach is its last size, on the
    # calibrated axis (an LRU model over its whole range: one rescaling, no offset above today)
    assert tc.calibration["offset_above_bytes"] is None
    assert tc.calibration["ghost_reach_bytes"] == pytest.approx(
        ttl_snap["ttl_points"][-1][0] / tc.calibration["scale"]
    )
    for d in (little, plain):
        c = curves[d["snapshot_id"]]
        assert np.allclose(c.hit_ratio_proportional, lru_join(d), atol=1e-9)
        assert c.calibration["ttl_aware"] is False

    # the answers: basis named in the field and the message; calibrated through the measured point
    basis_cache().clear()
    answers = {}
    for d in (ttl_snap, little, plain):
        sid = server_id(client, token, d["server"]["address"])
        r = client.get(f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.6}, headers=h)
        assert r.status_code == 200, r.text
        answers[d["snapshot_id"]] = r.json()
    a = answers[ttl_snap["snapshot_id"]]
    assert a["ttl_aware"] is True and "TTL-aware calibrated curve" in a["message"], a
    xs, ys = np.asarray(tc.sizes_bytes), np.asarray(tc.hit_ratio_calibrated)
    assert np.interp(tc.current_bytes, xs, ys) == pytest.approx(0.7, abs=0.005)
    assert a["memory_bytes"] < tc.current_bytes  # 0.6 is below the measured 0.7 on the same curve
    for d in (little, plain):
        b = answers[d["snapshot_id"]]
        assert b["ttl_aware"] is False and "TTL-aware" not in b["message"], b
    # a cluster of the TTL server alone is TTL-aware; with the LRU one beside it, not
    from hitcurve.models import Cluster, Server

    with get_sessionmaker()() as db:
        cl = Cluster(org_id=org.id, name=f"ttl-{uuid.uuid4().hex[:6]}", target_hit_ratio=0.6)
        db.add(cl)
        db.flush()
        ttl_sid = uuid.UUID(server_id(client, token, ttl_snap["server"]["address"]))
        db.get(Server, ttl_sid).cluster_id = cl.id  # type: ignore[union-attr]
        db.commit()
        cluster_id = cl.id
    later = end + timedelta(minutes=1)
    again = add_breakdown(make_snapshot(ttl_snap["server"]["address"], end=later, hit_ratio=0.7))
    assert upload(client, org, again).status_code == 202
    assert process(again["snapshot_id"])["cluster_curve"] is True
    basis_cache().clear()
    cq = {"target_hit_ratio": 0.6}
    ca = client.get(f"/api/v1/sizing/clusters/{cluster_id}/memory", params=cq, headers=h)
    assert ca.status_code == 200 and ca.json()["ttl_aware"] is True, ca.text
    with get_sessionmaker()() as db:
        plain_sid = uuid.UUID(server_id(client, token, plain["server"]["address"]))
        db.get(Server, plain_sid).cluster_id = cluster_id  # type: ignore[union-attr]
        db.commit()
    more = make_snapshot(plain["server"]["address"], end=end + timedelta(minutes=2), hit_ratio=0.7)
    assert upload(client, org, more).status_code == 202
    assert process(more["snapshot_id"])["cluster_curve"] is True
    basis_cache().clear()
    ca = client.get(f"/api/v1/sizing/clusters/{cluster_id}/memory", params=cq, headers=h)
    assert ca.status_code == 200 and ca.json()["ttl_aware"] is False, ca.text

    # curve=optimal is the LRU classes' page allocation: never labelled TTL-aware
    sid = server_id(client, token, ttl_snap["server"]["address"])
    r = client.get(
        f"/api/v1/sizing/servers/{sid}/memory",
        params={"target_hit_ratio": 0.6, "curve": "optimal"},
        headers=h,
    )
    assert r.status_code == 200 and r.json()["ttl_aware"] is False, r.text
