"""deploy/autoscaler/: the reference client, run as a program against the real API served over
HTTP by uvicorn on a free loopback port, and the KEDA ScaledObject's request and valueLocation
applied to a real answer."""

from __future__ import annotations

import json
import math
import socket
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pytest
import uvicorn
import yaml

from conftest import bearer
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import ClusterCurve

pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
CLIENT = ROOT / "deploy/autoscaler/hitcurve_client.py"
GB = 1e9


@pytest.fixture(scope="module")
def base_url(app: Any) -> Iterator[str]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 60
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.05)
    assert server.started, "uvicorn did not start"
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(30)


def _run(base_url: str, token: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(CLIENT), "--url", base_url, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={"HITCURVE_TOKEN": token, "PATH": "/usr/bin:/bin"},
    )


def _cluster_with_curve(account: Any, node_size: int | None) -> str:
    body: dict[str, Any] = {"name": f"web-{uuid.uuid4().hex[:6]}", "target_hit_ratio": 0.45}
    if node_size:
        body["node_size_bytes"] = node_size
    r = account.post("/api/v1/clusters", json=body)
    assert r.status_code == 201, r.text
    cid = str(r.json()["id"])
    with get_sessionmaker()() as db:
        db.add(
            ClusterCurve(
                org_id=uuid.UUID(account.org_id),
                cluster_id=uuid.UUID(cid),
                window_end=datetime.now(UTC),
                basis="calibrated",
                sizes_bytes=[10 * GB, 20 * GB, 40 * GB, 80 * GB],
                hit_ratios=[0.2, 0.4, 0.6, 0.7],
                current_bytes=int(30 * GB),
                server_count=3,
            )
        )
        db.commit()
    return cid


def test_client_prints_the_api_answer(account: Any, base_url: str) -> None:
    token = account.api_token("read")
    cid = _cluster_with_curve(account, int(16 * GB))
    out = _run(base_url, token, "--cluster", cid)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    want = account.get(f"/api/v1/sizing/clusters/{cid}/memory").json()
    nodes = account.get(f"/api/v1/sizing/clusters/{cid}/nodes").json()
    assert got["memory_bytes"] == pytest.approx(want["memory_bytes"]) and got["status"] == "ok"
    assert got["nodes"] == nodes["nodes"] == math.ceil(want["memory_bytes"] / (16 * GB))
    assert got["target_hit_ratio"] == 0.45 and got["basis"] == "calibrated"
    # the band, in integer bytes and nodes, on either side of the answer
    band = got["band"]
    assert band["memory_bytes_min"] == want["band"]["memory_bytes_min"]
    assert band["memory_bytes_min"] <= got["memory_bytes"] <= band["memory_bytes_max"]
    assert band["nodes_min"] <= got["nodes"] <= band["nodes_max"] and band["confidence"] == 0.9
    assert band["basis"] == "benchmark_prior"  # no graded prediction in this cluster yet
    # one -m to set, the API's headline (the value the dashboard, e-mail, alerts and /metrics show),
    # inside its own band; the newest curve's own -m is named as such
    assert got["memory_limit_bytes"] == want["recommended_memory_limit_bytes"] is not None
    assert got["window_memory_limit_bytes"] == want["memory_limit_bytes"]
    assert band["memory_limit_bytes_min"] <= got["memory_limit_bytes"]
    assert (
        band["memory_limit_bytes_max"] is None or got["memory_limit_bytes"] <= band["memory_limit_bytes_max"]
    )

    # Another target and node size on the command line.
    out = _run(base_url, token, "--cluster", cid, "--target", "0.6", "--node-size-bytes", str(int(8 * GB)))
    got = json.loads(out.stdout)
    assert got["target_hit_ratio"] == 0.6 and got["nodes"] == math.ceil(got["memory_bytes"] / (8 * GB))
    # A target past the curve (still climbing): a lower bound with nulls, exit 0.
    got = json.loads(_run(base_url, token, "--cluster", cid, "--target", "0.95").stdout)
    assert got["status"] == "above_curve" and got["memory_bytes"] is None and got["nodes"] is None
    # ... and the bound in bytes and in nodes: more than at_least bytes in all is at least one
    # node more than at_least fills
    above = account.get(f"/api/v1/sizing/clusters/{cid}/memory", params={"target_hit_ratio": 0.95}).json()
    above_n = account.get(f"/api/v1/sizing/clusters/{cid}/nodes", params={"target_hit_ratio": 0.95}).json()
    at_least = above["memory_bytes_at_least"]
    assert at_least is not None and got["memory_bytes_at_least"] == at_least
    assert got["nodes_at_least"] == above_n["nodes_at_least"] == int(at_least // (16 * GB)) + 1
    assert account.get(f"/api/v1/sizing/clusters/{cid}/nodes").json()["nodes_at_least"] is None  # ok: nodes


def test_cluster_answers_carry_the_clusters_node_size(account: Any) -> None:
    """The memory and hit-rate answers name the node size the nodes answer counts in."""
    cid = _cluster_with_curve(account, int(16 * GB))
    base = f"/api/v1/sizing/clusters/{cid}"
    mem = account.get(f"{base}/memory").json()
    ratio = account.get(f"{base}/hit-ratio", params={"memory_bytes": "20GB"}).json()
    nodes = account.get(f"{base}/nodes").json()
    assert mem["node_size_bytes"] == ratio["node_size_bytes"] == nodes["node_size_bytes"] == int(16 * GB)
    assert ratio["memory_bytes"] == 20 * 10**9  # a size with its unit, answered in bytes

    # bytes are integers everywhere in the three answers (the curve was stored in float bytes)
    def byte_fields(d: dict[str, Any], at: str = "") -> list[tuple[str, Any]]:
        out: list[tuple[str, Any]] = []
        for k, v in d.items():
            if isinstance(v, dict):
                out += byte_fields(v, f"{at}{k}.")
            elif "_bytes" in k:
                out.append((at + k, v))
        return out

    for answer in (mem, ratio, nodes):
        fields = byte_fields(answer)
        assert ("curve.max_bytes", int(80 * GB)) in fields
        assert [(k, v) for k, v in fields if not (v is None or type(v) is int)] == []
    other = _cluster_with_curve(account, None)
    assert account.get(f"/api/v1/sizing/clusters/{other}/memory").json()["node_size_bytes"] is None


def test_client_without_node_size_and_errors(account: Any, other: Any, base_url: str) -> None:
    token = account.api_token("read")
    cid = _cluster_with_curve(account, None)
    got = json.loads(_run(base_url, token, "--cluster", cid).stdout)
    assert got["nodes"] is None and got["memory_bytes"] > 0  # no node size anywhere: memory only
    empty = account.post("/api/v1/clusters", json={"name": "new", "target_hit_ratio": 0.9}).json()["id"]
    out = _run(base_url, token, "--cluster", empty)
    assert out.returncode == 3 and json.loads(out.stderr)["error"] == "not_enough_data"
    out = _run(base_url, other.api_token("read"), "--cluster", cid)  # another organization's id
    assert out.returncode == 4 and json.loads(out.stderr)["status_code"] == 404
    out = _run(base_url, "hct_" + "x" * 40, "--cluster", cid)
    assert out.returncode == 4 and json.loads(out.stderr)["status_code"] == 401
    # a refused parameter: the API's located errors as JSON, not a Python repr of them
    out = _run(base_url, token, "--cluster", cid, "--target", "92")
    assert out.returncode == 4, out.stderr
    err = json.loads(out.stderr)
    assert (err["status_code"], err["error"]) == (422, "invalid_request")
    [e] = err["detail"]
    assert e["loc"] == ["query", "target_hit_ratio"] and "did you mean 0.92 (92 %)?" in e["msg"]


def test_keda_scaled_object_reads_nodes_from_a_real_answer(account: Any, anon: Any) -> None:
    docs = list(yaml.safe_load_all((ROOT / "deploy/autoscaler/keda-scaledobject.yaml").read_text()))
    scaled = next(d for d in docs if d["kind"] == "ScaledObject")
    (trigger,) = scaled["spec"]["triggers"]
    meta = trigger["metadata"]
    assert trigger["type"] == "metrics-api" and meta["authMode"] == "bearer"
    assert scaled["spec"]["scaleTargetRef"]["name"] == "memcached"  # the sidecar example's Deployment
    cid = _cluster_with_curve(account, int(16 * GB))
    example_id = urlparse(meta["url"]).path.split("/")[5]
    path = urlparse(meta["url"]).path.replace(example_id, cid)
    r = anon.get(path, headers=bearer(account.api_token("read")))
    assert r.status_code == 200, r.text
    value: Any = r.json()
    for part in meta["valueLocation"].split("."):
        value = value[part]
    assert isinstance(value, int) and value >= 1
    # AverageValue with targetValue 1: the desired replica count is the node count.
    assert trigger["metricType"] == "AverageValue" and float(meta["targetValue"]) == 1
