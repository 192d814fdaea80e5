"""Seeded states for the consistency check (e2e/tests/consistency.spec.ts): one organization of
its own, each state a cluster whose servers replay real agent windows through the upload path
(crud.ingest.store_snapshot) and the worker's own code (hitcurve_worker.snapshot_tasks.process for a
server's first window, then the drain's batch, drain_tasks._settle, in process: the e2e backend runs
no worker), so every row the surfaces read is the row
production makes.

The windows (e2e/data/demo-windows.json.gz) are `make demo`'s: memcached 1.6.18 at -m 64, the
demo's Zipf 0.9 traffic over 400k keys, the agent on its defaults (20 s windows, ghost factor 5)
attached before memcached's first eviction, from an empty memcached through its fill and ~16
minutes past it. `record DIR` made them from the agent's --snapshot-dir (the breakdown, TTL
what-if and diagnostics left out: no sizing answer reads them). A replay moves every window by
one offset so that the last one ended a few seconds ago.

States (cluster name: what it holds):
- filling: memcached about 60 % full (no eviction yet)
- just-full: the first full windows, a few evictions (the ghost has seen little past today)
- steady: every recorded window
- quiet: steady plus a newest window with almost no reads
- lossy: steady plus a newest window that lost 30 % of its events (flagged)
- multi-node: three servers each replaying every window, one cluster
Every cluster targets 90 % at $4 per GiB-month; "steady" is also the single-server cluster.

Usage: consistency_states.py seed [EMAIL [STATE,STATE...]]   (HITCURVE_DATABASE_URL names the e2e
database) prints one JSON line: {"email", "password", "token", "states": {name: {"cluster_id",
"server_ids"}}}. EMAIL: the account's (another spec seeds an account of its own in the same e2e
database); STATE,...: only those states (all by default).
"""

from __future__ import annotations

import copy
import gzip
import json
import sys
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

FIXTURE = Path(__file__).parent / "data" / "demo-windows.json.gz"
EMAIL = "consistency@example.com"
PASSWORD = "one answer everywhere"  # noqa: S105 (a seeded test account)
TARGET = 0.9
# Fields of an upload no sizing answer reads (the breakdown, the TTL what-if, diagnostics).
UNREAD = (
    "diagnostics",
    "prefixes",
    "hot_keys",
    "hot_keys_by_bytes",
    "hot_keys_hashed",
    "prefix_other",
    "prefix_rule",
    "ttl",
    "ttl_points",
    "ttl_whatif_ttls_s",
)


def record(snapshot_dir: Path) -> None:
    """The fixture from an agent's --snapshot-dir, oldest window first."""
    docs = [json.loads(p.read_text()) for p in sorted(snapshot_dir.glob("snapshot-*.json"))]
    docs.sort(key=lambda d: d["window"]["end"])
    for d in docs:
        for k in UNREAD:
            d.pop(k, None)
        for c in d["classes"]:
            c["curve"].pop("ttl_points", None)
    FIXTURE.parent.mkdir(exist_ok=True)
    FIXTURE.write_bytes(gzip.compress(json.dumps(docs, separators=(",", ":")).encode()))
    print(f"{len(docs)} windows -> {FIXTURE} ({FIXTURE.stat().st_size} bytes)")


def _parse(ts: str) -> datetime:
    return datetime.fromisoformat(ts.replace("Z", "+00:00"))


def _iso(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def windows() -> list[dict[str, Any]]:
    return list(json.loads(gzip.decompress(FIXTURE.read_bytes())))


def first_index(docs: list[dict[str, Any]], pred: Any) -> int:
    return next(i for i, d in enumerate(docs) if pred(d))


def quiet(doc: dict[str, Any]) -> dict[str, Any]:
    """The same window with almost no reads (traffic stopped)."""
    d = copy.deepcopy(doc)
    m = d["measured"]
    hits = 40
    m.update(cmd_get=60, get_hits=hits, get_misses=20, hit_ratio=hits / 60, cmd_set=20)
    for c in d["classes"]:
        c["requests"] = 60
        c["hits_observed"] = hits
    return d


def lossy(doc: dict[str, Any]) -> dict[str, Any]:
    """The same window, 30 % of its events lost (over the agent's threshold: flagged)."""
    d = copy.deepcopy(doc)
    seen = int(d["loss"]["events_seen"])
    lost = int(seen * 0.3 / 0.7)
    d["loss"].update(stream_skipped=lost, loss_ratio=lost / (seen + lost), flagged=True)
    return d


def plan(docs: list[dict[str, Any]]) -> dict[str, list[list[dict[str, Any]]]]:
    """Each state's servers, each a list of windows (oldest first)."""
    full = first_index(docs, lambda d: d["memory"]["full"])
    filling = first_index(
        docs, lambda d: d["memory"]["total_malloced"] >= 0.6 * d["memory"]["limit_maxbytes"]
    )
    last = docs[-1]
    nxt = copy.deepcopy(last)
    step = _parse(last["window"]["end"]) - _parse(docs[-2]["window"]["end"])
    return {
        "filling": [docs[: filling + 1]],
        "just-full": [docs[: full + 2]],
        "steady": [docs],
        "quiet": [[*docs, _later(quiet(nxt), step)]],
        "lossy": [[*docs, _later(lossy(nxt), step)]],
        "multi-node": [docs, docs, docs],
    }


def _later(doc: dict[str, Any], step: timedelta) -> dict[str, Any]:
    for k in ("start", "end"):
        doc["window"][k] = _iso(_parse(doc["window"][k]) + step)
    return doc


def seed(email: str = EMAIL, only: list[str] | None = None) -> None:
    from sqlalchemy import select

    from hitcurve.core.db import get_sessionmaker
    from hitcurve.core.principal import Principal
    from hitcurve.core.security import AGENT_KEY_PREFIX, API_TOKEN_PREFIX, new_secret, sha256_hex
    from hitcurve.crud.accounts import create_account
    from hitcurve.crud.ingest import store_snapshot
    from hitcurve.models import AgentKey, ApiToken, Cluster, Server
    from hitcurve.schemas import agent as proto
    from hitcurve_worker.drain_tasks import _settle as settle
    from hitcurve_worker.snapshot_tasks import process

    Session = get_sessionmaker()
    states = {n: runs for n, runs in plan(windows()).items() if not only or n in only}
    token = new_secret(API_TOKEN_PREFIX)
    with Session() as db:
        user, org = create_account(db, email, PASSWORD, "Consistency", "One answer")
        key = AgentKey(
            org_id=org.id,
            name="replay",
            prefix="hca_replay",
            key_hash=sha256_hex(new_secret(AGENT_KEY_PREFIX)),
            created_by=user.id,
        )
        db.add(key)
        db.add(
            ApiToken(
                org_id=org.id,
                name="autoscaler",
                scope="read",
                prefix=token[:10],
                token_hash=sha256_hex(token),
                created_by=user.id,
            )
        )
        clusters = {}
        for name in states:
            c = Cluster(
                org_id=org.id,
                name=name,
                price_per_gb_month=4.0,
                target_hit_ratio=TARGET,
                node_size_bytes=64 << 20,
            )
            db.add(c)
            clusters[name] = c
        db.commit()
        org_id, key_id = org.id, key.id
        cluster_ids = {n: c.id for n, c in clusters.items()}

    agent = Principal(kind="agent_key", org_id=org_id, key_id=key_id)
    now = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
    # Each window is stored, then processed, in window order, a state's members in turn, as the
    # agents' uploads reach a worker that keeps up: storing every window first and processing them
    # afterwards let a cluster's answer for a warm-up window read its members' later, full windows
    # (their fill and evictions), call its curve seen whole, and open memory_short on the healthy
    # demo's three-node cluster five times.
    prepared: dict[str, list[list[str]]] = {}  # state -> each member's raw uploads, window order
    out: dict[str, Any] = {}
    n = 0
    for name, servers in states.items():
        members = []
        for runs in servers:
            n += 1
            addr = f"10.9.0.{n}:11211"
            shift = now - _parse(runs[-1]["window"]["end"])
            raws = []
            for doc in runs:
                d = copy.deepcopy(doc)
                d["snapshot_id"] = str(uuid.uuid4())
                d["server"]["address"] = addr
                d["server"]["instance_id"] = f"{d['server']['instance_id']}-{n}"
                for k in ("start", "end"):
                    d["window"][k] = _iso(_parse(d["window"][k]) + shift)
                raws.append(json.dumps(d))
            members.append(raws)
        prepared[name] = members

    def upload(raw: str) -> None:
        snap = proto.Snapshot.model_validate_json(raw)
        store_snapshot(agent, snap, raw)
        result = process(uuid.UUID(str(snap.snapshot_id)))
        assert result["status"] == "processed", result

    # the first window of each member registers its server, which then joins the state's cluster
    for name, members in prepared.items():
        for raws in members:
            upload(raws[0])
        with Session() as db:
            sids, addrs = [], []
            for raws in members:
                addr = json.loads(raws[0])["server"]["address"]
                s = db.execute(
                    select(Server).where(Server.org_id == org_id, Server.address == addr)
                ).scalar_one()
                s.cluster_id = cluster_ids[name]
                sids.append(str(s.id))
                addrs.append(addr)
            db.commit()
        out[name] = {"cluster_id": str(cluster_ids[name]), "server_ids": sids, "addresses": addrs}

    # Then window by window, every server's next window in one batch, as the worker's drain takes
    # them when uploads arrive together (hitcurve_worker.drain_tasks: one window per server per
    # batch, its inputs loaded once, each cluster updated once after its members): the members of
    # a state's cluster stay in lock step, and the seed takes about half the CPU of a task per upload.
    queues = [raws for members in prepared.values() for raws in members]
    for i in range(1, max(len(r) for r in queues)):
        keys = []
        for raws in queues:
            if i < len(raws):
                snap = proto.Snapshot.model_validate_json(raws[i])
                store_snapshot(agent, snap, raws[i])
                keys.append((uuid.UUID(str(snap.snapshot_id)), snap.window.end))
        done, parked, failed = settle(keys)
        assert (done, parked, failed) == (len(keys), 0, 0), (i, done, parked, failed)
    print(json.dumps({"email": email, "password": PASSWORD, "token": token, "states": out}))


if __name__ == "__main__":
    if sys.argv[1:2] == ["record"]:
        record(Path(sys.argv[2]))
    elif sys.argv[1:2] == ["seed"]:
        seed(*sys.argv[2:3], only=sys.argv[3].split(",") if len(sys.argv) > 3 else None)
    else:
        sys.exit(__doc__)
