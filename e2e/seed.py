"""Seed data for the Playwright checks (run by scripts/e2e-server.sh after `alembic upgrade head`).

Creates, once (a second run changes nothing):
- organization "Demo Org", owner demo@hitcurve.test / password "demo-password-123"
- cluster "web-cache" (target 92 %, $3.50 per GB-month, 1 GiB nodes) with server 10.0.0.7:11211
- 24 snapshots over the last 2 hours, stored through the same code path as agent uploads and
  processed by the worker's own task (hitcurve_worker.snapshot_tasks.process, in process): server
  curves, accuracy records, the cluster curve and the alerts its rules open are the rows
  production makes; a finished simulation run (lru, gdwheel, nbq-clock).

The dashboard engineer may extend this file; keep it idempotent.

Dashboard checks (`seed_dashboard` below) add, also once:
- e2e@example.com / "correct horse battery staple", owner of "Hitcurve Demo" and an empty "Staging"
- clusters web-cache (85 %, $4.50/GiB-month), sessions (80 %), "analytics (new)" (no servers)
- servers 10.0.0.7 (40 slab classes, 24 snapshots over 6 days), .8 (12 classes), .9 (6 classes),
  .10 (silent for 2 hours, no curve), every upload processed by the worker's task; a stale-agent
  alert and a resolved stream-loss alert besides the worker's own; a finished and a running
  simulation; keys, a token and a report subscription made through the API itself.
"""

import bisect
import json
import math
import random
import sys
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from sqlalchemy import select  # noqa: E402

from hitcurve.core.db import get_sessionmaker  # noqa: E402
from hitcurve.core.principal import Principal  # noqa: E402
from hitcurve.core.security import AGENT_KEY_PREFIX, new_secret, sha256_hex  # noqa: E402
from hitcurve.crud.accounts import create_account  # noqa: E402
from hitcurve.crud.curves import latest_server_curve  # noqa: E402
from hitcurve.crud.ingest import store_snapshot  # noqa: E402
from hitcurve.models import (  # noqa: E402
    AgentKey,
    Alert,
    Cluster,
    Server,
    SimulationResult,
    SimulationRun,
    User,
)
from hitcurve.schemas import agent as proto  # noqa: E402
from hitcurve_testing.snapshots import add_breakdown, make_snapshot  # noqa: E402
from hitcurve_worker.snapshot_tasks import process  # noqa: E402


def process_all(*servers: list[dict[str, Any]]) -> None:
    """Run the worker's process_snapshot on each uploaded snapshot (in process, no broker), each
    server's in window order, servers side by side as a worker pool would: the rows the
    dashboard reads are the rows production makes."""

    def one(snaps: list[dict[str, Any]]) -> None:
        for snap in sorted(snaps, key=lambda s: s["window"]["end"]):
            result = process(uuid.UUID(snap["snapshot_id"]))
            assert result["status"] == "processed", result

    with ThreadPoolExecutor(max_workers=len(servers)) as pool:
        for done in [pool.submit(one, snaps) for snaps in servers]:
            done.result()


EMAIL = "demo@hitcurve.test"
PASSWORD = "demo-password-123"  # noqa: S105 - seed data for local browser checks
ADDRESS = "10.0.0.7:11211"
SNAPSHOTS = 24


def main() -> None:
    Session = get_sessionmaker()
    with Session() as db:
        if db.execute(select(User.id).where(User.email == EMAIL)).first():
            print(f"seed: {EMAIL} exists, nothing to do")
            return
        user, org = create_account(db, EMAIL, PASSWORD, "Demo User", "Demo Org")
        cluster = Cluster(
            org_id=org.id,
            name="web-cache",
            price_per_gb_month=3.5,
            target_hit_ratio=0.92,
            node_size_bytes=2**30,
        )
        key = AgentKey(
            org_id=org.id,
            name="demo agent",
            prefix="hca_demo00",
            key_hash=sha256_hex(new_secret(AGENT_KEY_PREFIX)),
            created_by=user.id,
        )
        db.add_all([cluster, key])
        db.commit()
        org_id, cluster_id, key_id, user_id = org.id, cluster.id, key.id, user.id

    agent = Principal(kind="agent_key", org_id=org_id, key_id=key_id)
    now = datetime.now(UTC).replace(second=0, microsecond=0)
    snaps = []
    for i in range(SNAPSHOTS):
        end = now - timedelta(minutes=5 * (SNAPSHOTS - 1 - i)) - timedelta(seconds=30)
        hr = 0.78 + 0.04 * ((i % 12) / 12)  # a gentle daily-looking wave
        snap = make_snapshot(ADDRESS, end=end, seed=7, hit_ratio=hr)
        raw = json.dumps(snap)
        store_snapshot(agent, proto.Snapshot.model_validate_json(raw), raw)
        snaps.append(snap)

    with Session() as db:
        server = db.execute(
            select(Server).where(Server.org_id == org_id, Server.address == ADDRESS)
        ).scalar_one()
        server.cluster_id = cluster_id
        db.commit()
    # What the worker makes of the uploads: its own task, in window order (server curves,
    # accuracy records, the cluster curve and the alerts its rules open).
    process_all(snaps)
    with Session() as db:
        server = db.execute(
            select(Server).where(Server.org_id == org_id, Server.address == ADDRESS)
        ).scalar_one()
        latest = latest_server_curve(db, org_id, server.id)
        assert latest is not None and latest.hit_ratio_calibrated is not None
        xs, cal = latest.sizes_bytes, latest.hit_ratio_calibrated
        run = SimulationRun(
            org_id=org_id,
            server_id=server.id,
            policies=["lru", "gdwheel", "nbq-clock"],
            sizes_bytes=[int(xs[len(xs) // 4]), int(xs[len(xs) // 2]), int(xs[3 * len(xs) // 4])],
            window_start=now - timedelta(hours=4),
            window_end=now,
            status="done",
            progress=1.0,
            requested_by=user_id,
            started_at=now,
            finished_at=now,
        )
        db.add(run)
        db.flush()
        for policy, lift in (("lru", 0.0), ("gdwheel", -0.001), ("nbq-clock", 0.014)):
            for size in run.sizes_bytes:
                base = _interp(xs, cal, size)
                db.add(
                    SimulationResult(
                        org_id=org_id,
                        run_id=run.id,
                        policy=policy,
                        size_bytes=size,
                        hit_ratio=min(1.0, base + lift),
                        byte_hit_ratio=min(1.0, base + lift - 0.02),
                        recompute_cost_total_us=(1 - base) * 1e9 * (0.2 if policy == "gdwheel" else 1.0),
                        recompute_cost_p99_us=9000.0,
                        requests=1_000_000,
                    )
                )
        db.commit()
    print(
        f"seed: {EMAIL} / {PASSWORD}, org Demo Org, cluster web-cache, server {ADDRESS},"
        f" {SNAPSHOTS} snapshots"
    )


# --- dashboard data ---------------------------------------------------------------------------
# User actions go through the API in-process (TestClient), uploads through store_snapshot (the
# agent upload path), curves through the worker's task (process_all). The measured hit ratios of the
# synthetic uploads are made from a proportional join of their class curves (_join), a little
# above the LRU model as memcached's segmented LRU is.
E2E_EMAIL = "e2e@example.com"
E2E_PASSWORD = "correct horse battery staple"  # noqa: S105 (a seeded test account)
GiB = 2**30
MiB = 2**20


def _interp(xs: list[float], ys: list[float], x: float) -> float:
    """Linear interpolation from (0, 0), flat past the last point."""
    if x <= 0:
        return 0.0
    i = bisect.bisect_left(xs, x)
    if i == len(xs):
        return ys[-1]
    px, py = (0.0, 0.0) if i == 0 else (xs[i - 1], ys[i - 1])
    return py + (x - px) / (xs[i] - px) * (ys[i] - py)


def _join(snap: dict[str, Any]) -> tuple[list[float], list[float], float, float]:
    """(sizes, hit ratios, bytes today, model hit ratio today): every class at the same fraction f
    of its size today, weighted by its requests; f up to 2 (the agent's ghost factor)."""
    classes = snap["classes"]
    current = sum(c["curve"]["current_items"] * c["chunk_size"] for c in classes)
    total = sum(c["requests"] for c in classes)
    cols = [
        (
            [p[0] for p in c["curve"]["points"]],
            [p[1] for p in c["curve"]["points"]],
            c["requests"],
            c["curve"]["current_items"],
        )
        for c in classes
    ]

    def at(f: float) -> float:
        return sum(r * _interp(xs, ys, f * n) for xs, ys, r, n in cols) / total

    fs = [2.0 * (k + 1) / 100 for k in range(100)]
    return [f * current for f in fs], [at(f) for f in fs], float(current), at(1.0)


class _Api:
    def __init__(self) -> None:
        from fastapi.testclient import TestClient

        from hitcurve.main import create_app

        self.c = TestClient(create_app())

    def _h(self) -> dict[str, str]:
        return {"X-CSRF-Token": self.c.cookies.get("hitcurve_csrf") or ""}

    def post(self, url: str, body: Any, expect: int = 201) -> Any:
        r = self.c.post("/api/v1" + url, json=body, headers=self._h())
        assert r.status_code == expect, f"POST {url}: {r.status_code} {r.text}"
        return r.json() if r.content else None

    def patch(self, url: str, body: Any) -> Any:
        r = self.c.patch("/api/v1" + url, json=body, headers=self._h())
        assert r.status_code == 200, f"PATCH {url}: {r.status_code} {r.text}"
        return r.json()

    def get(self, url: str) -> Any:
        r = self.c.get("/api/v1" + url)
        assert r.status_code == 200, f"GET {url}: {r.status_code} {r.text}"
        return r.json()


def seed_dashboard() -> None:
    Session = get_sessionmaker()
    with Session() as db:
        if db.execute(select(User.id).where(User.email == E2E_EMAIL)).first():
            print(f"seed: {E2E_EMAIL} exists, nothing to do")
            return
    rnd = random.Random(7)
    now = datetime.now(UTC).replace(microsecond=0)
    api = _Api()
    # the operator's account, confirmed from the start (a sign-up through the API waits for its
    # mailed link; e2e/tests/interactions.spec.ts goes that way)
    with Session() as db:
        create_account(db, E2E_EMAIL, E2E_PASSWORD, "E2E", "Hitcurve Demo")
        db.commit()
    me = api.post("/auth/login", {"email": E2E_EMAIL, "password": E2E_PASSWORD}, expect=200)
    org_id = uuid.UUID(me["org_id"])
    api.post("/orgs", {"name": "Staging"})
    web = api.post(
        "/clusters",
        {"name": "web-cache", "price_per_gb_month": 4.5, "target_hit_ratio": 0.85, "node_size_bytes": GiB},
    )
    sessions = api.post("/clusters", {"name": "sessions", "price_per_gb_month": 3.0, "target_hit_ratio": 0.8})
    api.post("/clusters", {"name": "analytics (new)", "price_per_gb_month": 2.0, "target_hit_ratio": 0.8})
    key = api.post("/agent-keys", {"name": "cache fleet"})
    api.post("/api-tokens", {"name": "autoscaler", "scope": "read"})
    api.post(
        "/report-subscriptions", {"email": E2E_EMAIL, "cluster_id": web["id"], "weekday": 0, "hour_utc": 8}
    )
    agent = Principal(kind="agent_key", org_id=org_id, key_id=uuid.UUID(key["id"]))

    def upload(address: str, breakdown: bool = False, **kw: Any) -> dict[str, Any]:
        doc = make_snapshot(address, **kw)
        if breakdown:  # the breakdown's fields, on the latest window of the sessions server
            add_breakdown(doc, hashed=False)
            if address == "10.0.0.8:11211":  # ... and a window whose keys share one prefix,
                doc["prefixes"] = doc["prefixes"][:1]  # without TTLs (expiry moves no curve)
                doc["prefix_other"] = dict(doc["prefix_other"], requests=10)
                doc["ttl"]["oblivious_points"] = doc["ttl_points"]
        raw = json.dumps(doc)
        store_snapshot(agent, proto.Snapshot.model_validate_json(raw), raw)
        return json.loads(raw)

    # (address, classes, cluster, snapshots 6 h apart, random seed)
    fleet = [
        ("10.0.0.7:11211", 40, web["id"], 24, 11),  # the 40-class server of the render benchmark
        ("10.0.0.8:11211", 12, web["id"], 8, 12),
        ("10.0.0.9:11211", 6, sessions["id"], 8, 13),
    ]
    servers: dict[str, dict[str, Any]] = {}
    uploads: dict[str, list[dict[str, Any]]] = {}
    for address, n_classes, cluster_id, n_snaps, seed in fleet:
        snaps = []
        for i in range(n_snaps):
            end = now - timedelta(hours=6 * (n_snaps - 1 - i), seconds=30)
            probe = make_snapshot(address, n_classes=n_classes, seed=seed, end=end)
            join = _join(probe)  # the same classes as the upload below (same seed)
            # memcached's segmented LRU does a little better than the LRU model, with noise.
            measured = min(0.999, join[3] * (1.02 + 0.012 * math.sin(i / 3)) + rnd.uniform(-0.004, 0.004))
            pages = sum(c["pages"] for c in probe["classes"])
            snap = upload(
                address,
                breakdown=address in ("10.0.0.9:11211", "10.0.0.8:11211") and i == n_snaps - 1,
                n_classes=n_classes,
                seed=seed,
                end=end,
                hit_ratio=measured,
                limit_maxbytes=math.ceil(pages / 64) * 64 * MiB,
            )
            snaps.append(snap)
        sid = next(s["id"] for s in api.get("/servers") if s["address"] == address)
        api.patch(f"/servers/{sid}", {"cluster_id": cluster_id})
        uploads[address] = snaps
        servers[address] = {"id": sid}
    process_all(*uploads.values())  # the worker's own task
    for address, server in servers.items():
        sid = server["id"]
        with Session() as db:
            latest = latest_server_curve(db, org_id, uuid.UUID(sid))
            assert latest is not None and latest.hit_ratio_calibrated is not None
            servers[address] = {
                "id": sid,
                "xs": latest.sizes_bytes,
                "cal": latest.hit_ratio_calibrated,
                "current": float(latest.current_bytes),
            }

    # A server whose agent went quiet two hours ago, with no curve yet.
    quiet_at = now - timedelta(hours=2)
    upload("10.0.0.10:11211", n_classes=4, seed=14, end=quiet_at)
    with Session() as db:
        quiet = db.execute(
            select(Server).where(Server.org_id == org_id, Server.address == "10.0.0.10:11211")
        ).scalar_one()
        quiet.last_seen_at = quiet.last_snapshot_at = quiet_at
        quiet_id = quiet.id

        big = servers["10.0.0.7:11211"]
        db.add_all(
            [
                Alert(
                    org_id=org_id,
                    server_id=quiet_id,
                    kind="stale_agent",
                    severity="critical",
                    message="no snapshot from 10.0.0.10:11211 for 2 hours",
                    details={},
                    first_seen_at=now - timedelta(hours=1, minutes=50),
                    last_seen_at=now - timedelta(minutes=1),
                ),
                Alert(
                    org_id=org_id,
                    server_id=uuid.UUID(big["id"]),
                    kind="stream_loss",
                    severity="info",
                    message="watch stream lost 0.8 % of events on 10.0.0.7:11211 (below the 5 % threshold)",
                    details={},
                    state="resolved",
                    first_seen_at=now - timedelta(days=2),
                    last_seen_at=now - timedelta(days=2),
                    resolved_at=now - timedelta(days=1, hours=20),
                ),
            ]
        )

        # A finished policy simulation on the big server, and one still running on its neighbour.
        sizes = [int(big["current"] * f) // MiB * MiB for f in (0.25, 0.5, 0.75, 1.0, 1.25, 1.5, 1.75, 2.0)]
        run = SimulationRun(
            org_id=org_id,
            server_id=uuid.UUID(big["id"]),
            policies=["lru", "gdwheel", "nbq-clock"],
            sizes_bytes=sizes,
            window_start=now - timedelta(days=1),
            window_end=now,
            status="done",
            progress=1.0,
            created_at=now - timedelta(minutes=30),
            started_at=now - timedelta(minutes=29),
            finished_at=now - timedelta(minutes=20),
        )
        db.add(run)
        db.flush()
        requests = 2_400_000
        for size in sizes:
            lru = _interp(big["xs"], big["cal"], size) * 0.97
            for policy, hit, cost in (
                ("lru", lru, 1.0),
                ("gdwheel", lru - 0.0007, 0.22),
                ("nbq-clock", min(0.999, lru + 0.014), 0.93),
            ):
                db.add(
                    SimulationResult(
                        org_id=org_id,
                        run_id=run.id,
                        policy=policy,
                        size_bytes=size,
                        hit_ratio=hit,
                        byte_hit_ratio=None,
                        recompute_cost_total_us=requests * (1 - hit) * 2100.5 * cost,
                        recompute_cost_p99_us=9000.0 * cost,
                        requests=requests,
                        details={
                            "sample_rate": 0.01,
                            "sampled_requests": requests // 100,
                            "sampled_keys": 3100,
                            "span_seconds": 86400.0,
                            "notes": [],
                        },
                    )
                )
        # an earlier run stays listed
        db.add(
            SimulationRun(
                org_id=org_id,
                server_id=uuid.UUID(big["id"]),
                policies=["lru"],
                sizes_bytes=sizes,
                window_start=now - timedelta(days=3),
                window_end=now - timedelta(days=2),
                status="failed",
                error="no trace chunks for this subject in the window",
                progress=0.0,
                created_at=now - timedelta(days=2),
            )
        )
        neighbour = servers["10.0.0.8:11211"]
        db.add(
            SimulationRun(
                org_id=org_id,
                server_id=uuid.UUID(neighbour["id"]),
                policies=["lru", "clockpro"],
                sizes_bytes=[int(neighbour["current"])],
                window_start=now - timedelta(days=1),
                window_end=now,
                status="running",
                progress=0.42,
                created_at=now - timedelta(minutes=2),
                started_at=now - timedelta(minutes=1),
            )
        )
        db.commit()
    print(f"seed: {E2E_EMAIL} / {E2E_PASSWORD}, orgs Hitcurve Demo + Staging, 4 servers, 3 clusters")


def seed_up_period() -> None:
    """The seeded history came in while a backend was up (its windows were uploaded over the past
    days): the backend's up period starts before them, as it would have on a backend that ran
    through them, so a server silent for 2 h is the agent's silence, not a restart's. The marker
    outlives this script by 10 minutes; the e2e server's first beat keeps the period going."""
    import redis

    from hitcurve.core import accepting
    from hitcurve.core.config import get_settings

    client = redis.Redis.from_url(get_settings().redis_url)
    try:
        began = (datetime.now(UTC) - timedelta(days=8)).timestamp()
        client.set(accepting.ALIVE_KEY, repr(began), px=600_000)
        client.set(accepting.SINCE_KEY, repr(began))
    finally:
        client.close()


if __name__ == "__main__":
    main()
    seed_dashboard()
    seed_up_period()
