"""A server with a flash tier (memcached's extstore) through the real backend: the real agent
beside a real memcached 1.6.18 -m 32 -o ext_path=FILE:256m under a zipf look-aside load, every
snapshot it wrote uploaded to the API and processed by the worker's own task (in process), into
real PostgreSQL. The server page's curve body says the server has a flash tier, how full it is and
what share of the hits it served, and the sizing answer says plainly that it is for RAM with that
flash tier as it is; a RAM-only server says nothing of the kind; an extstore object that
contradicts its classes is refused, with the class named."""

from __future__ import annotations

import copy
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import select
from worker_helpers import Org, upload

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import Snapshot
from hitcurve_testing.snapshots import make_snapshot

HARNESS = Path(__file__).resolve().parents[2] / "profiler-agent" / "tests" / "agent"
FLASH = 256 << 20


@pytest.fixture(scope="module")
def agent_snapshots(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    sys.path.insert(0, str(HARNESS))
    from agent_harness import Agent, Memcached, kill_leftovers, loadgen_bin

    tmp = tmp_path_factory.mktemp("flash")
    # ext_item_age=2: memcached flushes items older than 2 s (tests/agent/test_extstore_live.py)
    mc = Memcached(mem_mb=32, extra=["-o", f"ext_path={tmp}/flash.dat:256m,ext_item_age=2"])
    try:
        agent = Agent(tmp, mc.addr, "--interval", "3")
        agent.wait_log("watch_connected", timeout=120)
        subprocess.run(
            [loadgen_bin(), "--server", mc.addr, "--dist", "zipf", "--alpha", "0.9", "--keys", "200000",
             "--min-value", "100", "--value-size", "1500", "--requests", "0", "--duration", "10",
             "--seed", "5", "--quiet"],
            check=True, capture_output=True, timeout=120,
        )  # fmt: skip
        n = agent.log().count("msg=window")
        agent.wait_log("msg=window", count=n + 1, timeout=120)
        assert agent.stop() == 0
    finally:
        mc.stop()
        kill_leftovers()
    return agent.snapshots()


def process(sid: str) -> dict[str, Any]:
    from hitcurve_worker.snapshot_tasks import process as task

    return task(uuid.UUID(sid))


def reader(org: Org) -> dict[str, str]:
    from hitcurve.core.security import sha256_hex
    from hitcurve.models import ApiToken

    secret = "hct_" + uuid.uuid4().hex + uuid.uuid4().hex
    with get_sessionmaker()() as db:
        db.add(
            ApiToken(org_id=org.id, name="r", prefix=secret[:8], token_hash=sha256_hex(secret), scope="read")
        )
        db.commit()
    return {"Authorization": f"Bearer {secret}"}


def server_id(client: Any, h: dict[str, str], address: str) -> str:
    return str(
        next(s["id"] for s in client.get("/api/v1/servers", headers=h).json() if s["address"] == address)
    )


@pytest.mark.live
def test_a_flash_tier_is_stored_shown_and_named_in_the_answers(
    client: Any, org: Org, agent_snapshots
) -> None:
    docs = [d for d in agent_snapshots if d["classes"]]
    assert docs and all("extstore" in d for d in docs)
    h = reader(org)
    for d in docs:
        assert upload(client, org, d).status_code == 202
        process(d["snapshot_id"])
        with get_sessionmaker()() as db:
            stored = db.execute(
                select(Snapshot.extstore).where(Snapshot.id == uuid.UUID(d["snapshot_id"]))
            ).scalar_one()
        # what the agent sent, but the stream's diagnostics (kept in the payload only)
        assert stored == {k: v for k, v in d["extstore"].items() if k != "stream"}
    address = docs[-1]["server"]["address"]
    sid = server_id(client, h, address)
    body = client.get(f"/api/v1/servers/{sid}/curve", headers=h).json()
    tier = body["flash_tier"]
    assert tier is not None
    new = docs[-1]["extstore"]
    assert tier["limit_bytes"] == FLASH == new["flash"]["limit_bytes"]
    assert tier["header_items"] == new["ram"]["header_items"] > 0
    assert tier["header_bytes"] == new["ram"]["header_bytes"]
    pages = new["flash"]["pages_used"] + new["flash"]["pages_free"]
    assert tier["fill_ratio"] == pytest.approx(new["flash"]["pages_used"] / pages)
    # the shares over the newest windows (at most 10), from what the agent sent
    recent = docs[-10:]
    hits = sum(d["measured"]["get_hits"] for d in recent)
    flash_hits = sum(d["extstore"]["window"]["flash_hits"] for d in recent)
    assert tier["windows"] == len(recent)
    assert tier["flash_hit_share"] == pytest.approx(flash_hits / hits)
    assert 0 < tier["flash_hit_share"] < 1
    assert "flash tier" in tier["note"] and "for RAM (-m) with this flash tier as it is" in tier["note"]
    assert "256\u00a0MiB of flash" in tier["note"] and "not computed yet" in tier["note"]
    # every answer about this server says it, in the same words
    r = client.get(f"/api/v1/sizing/servers/{sid}/hit-ratio", params={"memory_bytes": 32 << 20}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["flash_note"] == tier["note"]
    r = client.get(f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.5}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["flash_note"] == tier["note"]


@pytest.mark.live
def test_a_ram_only_server_has_no_flash_tier(client: Any, org: Org) -> None:
    h = reader(org)
    address = f"10.16.1.1:{uuid.uuid4().int % 60000}"
    snap = make_snapshot(address)
    assert upload(client, org, snap).status_code == 202
    process(snap["snapshot_id"])
    sid = server_id(client, h, address)
    assert client.get(f"/api/v1/servers/{sid}/curve", headers=h).json()["flash_tier"] is None
    r = client.get(f"/api/v1/sizing/servers/{sid}/hit-ratio", params={"memory_bytes": 32 << 20}, headers=h)
    assert r.status_code == 200, r.text
    assert r.json()["flash_note"] is None


@pytest.mark.live
def test_an_extstore_object_that_contradicts_its_classes_is_refused(
    client: Any, org: Org, agent_snapshots
) -> None:
    doc = copy.deepcopy(next(d for d in agent_snapshots if d["classes"] and d["extstore"]["ram"]["classes"]))
    doc["snapshot_id"] = str(uuid.uuid4())
    hc = doc["extstore"]["ram"]["classes"][0]
    items = next(c["items"] for c in doc["classes"] if c["id"] == hc["id"])
    doc["extstore"]["ram"]["header_items"] += items + 1 - hc["header_items"]
    hc["header_items"] = items + 1
    r = upload(client, org, doc)
    assert r.status_code == 422 and f"class {hc['id']} has more header_items than items" in r.text
    doc["extstore"]["ram"]["header_items"] += 1
    r = upload(client, org, doc)
    assert r.status_code == 422 and "the sum of its classes' header_items" in r.text
