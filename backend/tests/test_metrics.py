"""GET /metrics scraped as Prometheus would (the documented scrape job's path, a real read-scoped
API token), parsed with prometheus_client's own text parser, its figures compared with the
REST API's answers; and every metric the Grafana dashboard queries exists in the scrape."""

from __future__ import annotations

import json
import re
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import update

from conftest import bearer, insert_server_curve, upload_snapshot
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, ClusterCurve, Snapshot

ROOT = Path(__file__).resolve().parents[2]
GB = 1e9
XS = [10 * GB, 20 * GB, 40 * GB, 80 * GB]
YS = [0.2, 0.4, 0.6, 0.7]


def _scrape_job() -> dict[str, Any]:
    doc = yaml.safe_load((ROOT / "deploy/prometheus/scrape.yml").read_text())
    (job,) = doc["scrape_configs"]
    return dict(job)


def _families(text: str) -> dict[str, Any]:
    return {f.name: f for f in text_string_to_metric_families(text)}


def _value(fams: dict[str, Any], name: str, **labels: str) -> float:
    hits = [s.value for s in fams[name].samples if all(s.labels.get(k) == v for k, v in labels.items())]
    assert len(hits) == 1, (name, labels, fams[name].samples)
    return float(hits[0])


@pytest.fixture
def fleet(account: Any, private_queue: Any) -> dict[str, Any]:
    """A cluster with one server that has a curve, a cluster curve, a processed snapshot and one
    still waiting for the worker (no worker consumes this test's queue)."""
    cid = account.post("/api/v1/clusters", json={"name": "web", "target_hit_ratio": 0.45}).json()["id"]
    sid, snap = upload_snapshot(account, "10.0.0.7:11211")
    assert account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": cid}).status_code == 200
    insert_server_curve(account.org_id, sid, snap, XS, YS, current_bytes=int(20 * GB))
    with get_sessionmaker()() as db:
        db.add(
            ClusterCurve(
                org_id=uuid.UUID(account.org_id),
                cluster_id=uuid.UUID(cid),
                window_end=datetime.now(UTC),
                basis="calibrated",
                sizes_bytes=XS,
                hit_ratios=YS,
                current_bytes=int(30 * GB),
                measured_hit_ratio=0.5,
                server_count=1,
            )
        )
        end = datetime.fromisoformat(snap["window"]["end"])
        db.add(
            AccuracyRecord(
                org_id=uuid.UUID(account.org_id),
                server_id=uuid.UUID(sid),
                snapshot_id=uuid.UUID(snap["snapshot_id"]),
                window_start=end - timedelta(seconds=60),
                window_end=end,
                memory_bytes=int(20 * GB),
                predicted_hit_ratio=0.415,
                measured_hit_ratio=0.4,
                error_pp=1.5,
            )
        )
        received = db.get(Snapshot, uuid.UUID(snap["snapshot_id"])).received_at  # type: ignore[union-attr]
        db.execute(
            update(Snapshot)
            .where(Snapshot.id == uuid.UUID(snap["snapshot_id"]))
            .values(status="processed", processed_at=received + timedelta(seconds=3))
        )
        db.commit()
    other_sid, _ = upload_snapshot(account, "10.0.0.8:11211", seed=2)
    return {"cluster": cid, "server": sid, "snapshot": snap, "pending_server": other_sid}


def test_scrape_with_read_token_parses_and_matches_the_api(account, other, anon, fleet) -> None:
    job = _scrape_job()
    assert job["authorization"]["type"] == "Bearer"
    token = account.api_token("read")
    r = anon.get(job["metrics_path"], headers=bearer(token))
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/plain; version=0.0.4")
    fams = _families(r.text)
    # /api/v1/metrics answers the same families (values such as ages move between scrapes).
    assert set(_families(anon.get("/api/v1/metrics", headers=bearer(token)).text)) == set(fams)

    srv = {"server": "10.0.0.7:11211", "cluster": "web"}
    servers = {s["address"]: s for s in account.get("/api/v1/servers").json()}
    assert _value(fams, "hitcurve_server_hit_ratio", **srv) == pytest.approx(
        servers["10.0.0.7:11211"]["measured_hit_ratio"]
    )
    assert _value(fams, "hitcurve_server_stream_loss_ratio", **srv) == pytest.approx(
        fleet["snapshot"]["loss"]["loss_ratio"]
    )
    assert (
        _value(fams, "hitcurve_server_memory_limit_bytes", **srv)
        == fleet["snapshot"]["server"]["limit_maxbytes"]
    )
    assert _value(fams, "hitcurve_server_target_hit_ratio", **srv) == 0.45
    want = account.get(
        f"/api/v1/sizing/servers/{fleet['server']}/memory", params={"target_hit_ratio": 0.45}
    ).json()
    assert _value(fams, "hitcurve_server_memory_for_target_bytes", **srv) == pytest.approx(
        want["memory_bytes"]
    )
    assert _value(fams, "hitcurve_server_target_reachable", **srv) == 1
    # warm-up state and the recommended limit, as the sizing answer says
    assert _value(fams, "hitcurve_server_warming_up", **srv) == (1 if want["status"] == "warming_up" else 0)
    if want["recommended_memory_limit_bytes"] is not None:
        assert _value(fams, "hitcurve_server_recommended_memory_limit_bytes", **srv) == pytest.approx(
            want["recommended_memory_limit_bytes"]
        )
    assert "hitcurve_cluster_warming_up" in fams and "hitcurve_cluster_recommended_memory_limit_bytes" in fams
    # today's -m against the answer (hitcurve.rules.shortage), the one rule the memory alert follows
    state = want["memory_state"]
    assert state in ("short", "at_edge", "enough")
    assert _value(fams, "hitcurve_server_memory_short", **srv) == (1 if state == "short" else 0)
    assert _value(fams, "hitcurve_server_memory_at_edge", **srv) == (1 if state == "at_edge" else 0)
    assert _value(fams, "hitcurve_server_curve_error_pp", **srv) == pytest.approx(
        servers["10.0.0.7:11211"]["curve_error_pp"]
    )
    assert servers["10.0.0.7:11211"]["curve_error_pp"] == pytest.approx(1.5)
    # The unassigned server has its measured figures but no target.
    assert _value(fams, "hitcurve_server_hit_ratio", server="10.0.0.8:11211", cluster="") == pytest.approx(
        servers["10.0.0.8:11211"]["measured_hit_ratio"]
    )
    assert not [
        s for s in fams["hitcurve_server_target_hit_ratio"].samples if s.labels["server"] == "10.0.0.8:11211"
    ]

    cl = {"cluster": "web", "cluster_id": fleet["cluster"]}
    answer = account.get(f"/api/v1/sizing/clusters/{fleet['cluster']}/memory").json()
    assert _value(fams, "hitcurve_cluster_memory_for_target_bytes", **cl) == pytest.approx(
        answer["memory_bytes"]
    )
    assert _value(fams, "hitcurve_cluster_memory_bytes", **cl) == 30 * GB
    assert _value(fams, "hitcurve_cluster_hit_ratio", **cl) == 0.5
    assert _value(fams, "hitcurve_cluster_servers", **cl) == 1

    assert _value(fams, "hitcurve_queue_pending", kind="snapshot") == 1
    assert _value(fams, "hitcurve_queue_oldest_pending_age_seconds", kind="snapshot") >= 0
    assert _value(fams, "hitcurve_ingest_processing_seconds", quantile="0.5") == pytest.approx(3.0)
    assert _value(fams, "hitcurve_ingest_snapshots_per_second") == pytest.approx(2 / 300)
    assert _value(fams, "hitcurve_task_failures", kind="snapshot") == 0

    # Another organization's token sees none of it.
    theirs = _families(anon.get("/metrics", headers=bearer(other.api_token("read"))).text)
    assert not theirs["hitcurve_server_hit_ratio"].samples
    assert _value(theirs, "hitcurve_queue_pending", kind="snapshot") == 0


def test_scrape_refuses_missing_and_agent_credentials(account, anon) -> None:
    r = anon.get("/metrics")
    assert r.status_code == 401 and r.json()["code"] == "unauthenticated"
    assert anon.get("/metrics", headers=bearer(account.agent_key())).status_code == 403
    assert anon.get("/metrics", headers=bearer("hct_" + "x" * 40)).status_code == 401


def _dashboard_metrics() -> set[str]:
    dash = json.loads((ROOT / "deploy/grafana/hitcurve-dashboard.json").read_text())
    exprs: list[str] = []

    def walk(o: Any) -> None:
        if isinstance(o, dict):
            for k, v in o.items():
                if k in ("expr", "definition") and isinstance(v, str):
                    exprs.append(v)
                walk(v)
        elif isinstance(o, list):
            for v in o:
                walk(v)

    walk(dash)
    assert len(exprs) >= 20, exprs
    return {
        m
        for e in exprs
        for m in re.findall(r"\b[a-z_]+(?=\s*[{(\s]|$|\s*[-+*/),])", e)
        if m.startswith("hitcurve_")
    }


def test_grafana_dashboard_queries_only_metrics_that_exist(account, anon, fleet) -> None:
    fams = _families(anon.get("/metrics", headers=bearer(account.api_token("read"))).text)
    used = _dashboard_metrics()
    assert len(used) >= 20, used
    missing = used - set(fams)
    assert not missing, f"the dashboard queries metrics /metrics does not expose: {sorted(missing)}"
    empty = {m for m in used if not fams[m].samples}
    assert not empty, f"metrics without a sample in a scrape of a populated organization: {sorted(empty)}"
