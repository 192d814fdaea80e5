"""A cluster's recommended memory limit (the `-m` of each node) follows the same one definition as
a server's: hysteresis.recommend_periodic over the cluster's recent curves,
anchored on their window ends. Against real PostgreSQL through the API, an autoscaler polling
after every window of a stationary workload sees it change at most once over 30 windows, while
the raw answer moves; `stable` says what the hysteresis says.

The curves are the recorded real sequence of test_recorded_windows (memcached 1.6.18 at 32 MiB,
the agent on its defaults, a seeded Zipf 0.9 workload, the worker pipeline's calibrated curves),
stored as the cluster curves the worker writes (one per window), for a cluster of two nodes.
"""

import gzip
import json
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from conftest import upload_snapshot
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import ClusterCurve
from hitcurve.rules import hysteresis

FIXTURE = Path(__file__).parent / "data" / "stationary-windows-zipf0.9.json.gz"
POLLS = 30
NODES = 2


def _changes(values: list[Any]) -> int:
    return sum(1 for a, b in zip(values, values[1:], strict=False) if a != b)


def _inside(raw: int, rec: int) -> bool:
    return abs(raw - rec) <= max(hysteresis.BAND_FRACTION * rec, hysteresis.BAND_MIN_BYTES)


def _store_curve(
    account, cid: str, end: datetime, node_sizes, hits, node_bytes: int, nodes: int, measured: float
) -> None:
    """A cluster curve as the worker writes it: `nodes` nodes, each with the given curve."""
    with get_sessionmaker()() as db:
        db.add(
            ClusterCurve(
                org_id=uuid.UUID(account.org_id),
                cluster_id=uuid.UUID(cid),
                computed_at=end + timedelta(seconds=1),
                window_end=end,
                basis="calibrated",
                sizes_bytes=[nodes * x for x in node_sizes],
                hit_ratios=hits,
                current_bytes=nodes * node_bytes,
                measured_hit_ratio=measured,
                server_count=nodes,
            )
        )
        db.commit()


@pytest.mark.slow  # 30 windows of three servers through the API
def test_cluster_recommended_limit_changes_at_most_once_over_30_stationary_windows(account) -> None:
    doc = json.loads(gzip.decompress(FIXTURE.read_bytes()))
    target, recs = float(doc["target_hit_ratio"]), doc["windows"]
    assert len(recs) >= POLLS + 10
    # two full nodes (memcached full for more than two windows: not warming up)
    cid = account.post("/api/v1/clusters", json={"name": "zipf", "target_hit_ratio": target}).json()["id"]
    now = datetime.now(UTC).replace(microsecond=0)
    for n in range(NODES):
        address = f"10.8.0.{n + 1}:11211"
        for k in range(3):
            sid, _ = upload_snapshot(account, address, end=now - timedelta(minutes=3 - k), fill=1.0)
        assert account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": cid}).status_code == 200
    # the recorded windows, replayed as the cluster's curves on their own time grid
    t0 = datetime.fromisoformat(recs[0]["window_end"])
    shift = now - timedelta(hours=1) - t0
    polls = []
    for r in recs:
        end = datetime.fromisoformat(r["window_end"]) + shift
        _store_curve(
            account,
            cid,
            end,
            r["sizes_bytes"],
            r["hit_ratios"],
            r["current_bytes"],
            NODES,
            r["measured_hit_ratio"],
        )
        a = account.get(f"/api/v1/sizing/clusters/{cid}/memory").json()
        assert a["nodes"] == NODES, a
        polls.append(a)
    last = polls[-POLLS:]
    # (the first windows, while the agent's ghost fills, may not reach the target yet)
    assert all(a["status"] == "ok" for a in polls[-POLLS - 2 :])
    raw = [a["memory_limit_bytes"] for a in last]
    rec = [a["recommended_memory_limit_bytes"] for a in last]
    # the raw per-node -m moves between windows: a limit that followed it would flap
    assert None not in raw and _changes(raw) >= 2, raw
    assert None not in rec and _changes(rec) <= 1, rec
    # per node: the cluster's memory over its nodes, in whole MiB
    assert all(r % (1 << 20) == 0 for r in rec)
    assert all(abs(a["memory_bytes"] / NODES - a["memory_limit_bytes"]) <= 2 << 20 for a in last)
    # `stable`: the last 3 windows' raw answers all inside the hysteresis band of the recommendation
    for i in range(len(polls) - POLLS, len(polls)):
        a = polls[i]
        tail = [p["memory_limit_bytes"] for p in polls[i - 2 : i + 1]]
        assert a["stable"] is all(_inside(t, a["recommended_memory_limit_bytes"]) for t in tail), (i, a)


def test_cluster_recommended_limit_rests_on_windows_of_todays_node_count(account) -> None:
    """Windows summing another number of nodes answer another -m per node: the seeded web-cache
    cluster (one node for a day, two now) recommended -m 227 beside "-m 834 on each of 2 nodes",
    its one-node curves divided over today's two nodes."""
    mib, gib = 1 << 20, 1 << 30
    cid = account.post("/api/v1/clusters", json={"name": "grown", "target_hit_ratio": 0.8}).json()["id"]
    now = datetime.now(UTC).replace(microsecond=0)
    for n in range(NODES):
        for k in range(3):
            sid, _ = upload_snapshot(
                account, f"10.9.0.{n + 1}:11211", end=now - timedelta(minutes=3 - k), fill=1.0
            )
        assert account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": cid}).status_code == 200
    node = [i * 64 * mib for i in range(1, 33)]  # one node's curve: 0.8 at 1 GiB
    hits = [min(0.95, 0.8 * x / gib) for x in node]
    for k, count in enumerate([1] * 8 + [NODES]):
        end = now - timedelta(minutes=60 - 6 * k)
        _store_curve(account, cid, end, node, hits, 512 * mib, count, 0.4)
    a = account.get("/api/v1/sizing/clusters/" + cid + "/memory").json()
    assert a["status"] == "ok" and a["nodes"] == NODES, a
    assert abs(a["memory_limit_bytes"] - gib) <= 2 * mib, a
    # per node, as the answer beside it: not the one-node windows' 1 GiB over 2 nodes
    assert a["recommended_memory_limit_bytes"] == a["memory_limit_bytes"], a
    assert a["stable"] is False  # one window of two nodes so far
