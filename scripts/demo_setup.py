"""Demo tenant for `make demo`, made through the real HTTP API as a user would (idempotent).

    demo_setup.py account API_URL RUN_DIR     log in the demo owner (made in the database the first
                                              time: sign-ups wait for a mailed link), create the
                                              cluster and an agent key; write RUN_DIR/agent.key
                                              and RUN_DIR/demo-login.txt
    demo_setup.py assign API_URL RUN_DIR      wait for the demo agent's server to register,
                                              then put it into the demo cluster
"""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path

import httpx

EMAIL = "demo@hitcurve.dev"
PASSWORD = "hitcurve-demo-password"
CLUSTER = "demo-cluster"


def _session(api: str) -> httpx.Client:
    client = httpx.Client(base_url=api.rstrip("/") + "/api/v1", timeout=30)
    r = client.post("/auth/login", json={"email": EMAIL, "password": PASSWORD})
    made = r.status_code in (401, 429) and _account_in_database()
    if made and r.status_code == 401:
        r = client.post("/auth/login", json={"email": EMAIL, "password": PASSWORD})
    if r.status_code == 429:
        # Log-ins from this address are throttled (someone guessed passwords here): the setup
        # is the operator's own, so it opens its session through the database instead.
        client.cookies.set("hitcurve_session", _session_from_database())
        r = client.get("/auth/me")
    if r.status_code not in (200, 201):
        sys.exit(f"demo setup: log-in failed: {r.status_code} {r.text}")
    client.cookies.set("hitcurve_csrf", r.json()["csrf_token"])
    client.headers["X-CSRF-Token"] = r.json()["csrf_token"]
    return client


def _account_in_database() -> bool:
    """Make the demo owner's account if it does not exist (True when made). A sign-up through the
    API waits for its mailed confirmation link; the demo account is the operator's own, made with
    the database credentials in the environment (HITCURVE_DATABASE_URL), confirmed from the start."""
    from sqlalchemy import select

    from hitcurve.core.db import get_sessionmaker
    from hitcurve.crud.accounts import create_account
    from hitcurve.models import User

    with get_sessionmaker()() as db:
        if db.execute(select(User.id).where(User.email == EMAIL)).first():
            return False
        create_account(db, EMAIL, PASSWORD, "Demo owner", "Demo")
        db.commit()
    return True


def _session_from_database() -> str:
    """A browser session of the demo owner, written with the database credentials in the
    environment (HITCURVE_DATABASE_URL): no log-in, so no log-in throttle applies."""
    import secrets
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import select

    from hitcurve.core.db import get_sessionmaker
    from hitcurve.core.security import new_secret, sha256_hex
    from hitcurve.models import Membership, User, UserSession

    with get_sessionmaker()() as db:
        user = db.execute(select(User).where(User.email == EMAIL)).scalar_one()
        org_id = db.execute(select(Membership.org_id).where(Membership.user_id == user.id)
                            .order_by(Membership.created_at).limit(1)).scalar_one()
        secret = new_secret()
        db.add(UserSession(org_id=org_id, user_id=user.id, token_hash=sha256_hex(secret),
                           csrf_token=secrets.token_urlsafe(32), ip="demo-setup",
                           expires_at=datetime.now(UTC) + timedelta(hours=1)))
        db.commit()
    return secret


def _cluster_id(client: httpx.Client) -> str:
    for c in client.get("/clusters").raise_for_status().json():
        if c["name"] == CLUSTER:
            return str(c["id"])
    r = client.post("/clusters", json={"name": CLUSTER, "price_per_gb_month": 4.0,
                                       "target_hit_ratio": 0.9, "node_size_bytes": 64 << 20})
    return str(r.raise_for_status().json()["id"])


def account(api: str, run_dir: Path) -> None:
    client = _session(api)
    _cluster_id(client)
    # The demo is a self-hosted install on one machine: its channels may target a receiver on
    # loopback or the local network. Its owner is the install's administrator (demo.sh), who may
    # turn this off again on the alerts page; a choice made there is kept across demo runs.
    install = client.get("/install-settings").raise_for_status().json()
    if install["can_change"] and install["changed_at"] is None:
        client.patch("/install-settings", json={"allow_private_webhooks": True}).raise_for_status()
    key_file = run_dir / "agent.key"
    if not key_file.exists():
        r = client.post("/agent-keys", json={"name": "demo agent"}).raise_for_status().json()
        secret = r.get("secret") or r.get("key") or r.get("token")
        if not secret:
            sys.exit(f"demo setup: agent key answer has no secret: {json.dumps(r)}")
        key_file.write_text(secret + "\n")
        key_file.chmod(0o600)
    (run_dir / "demo-login.txt").write_text(f"  Log in as {EMAIL} / {PASSWORD}\n\n")


def assign(api: str, run_dir: Path, address: str) -> None:
    client = _session(api)
    cluster = _cluster_id(client)
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        for s in client.get("/servers").raise_for_status().json():
            if s["address"] == address:
                if s.get("cluster_id") != cluster:
                    client.patch(f"/servers/{s['id']}", json={"cluster_id": cluster}).raise_for_status()
                print(f"demo server {address} is in {CLUSTER}")
                return
        time.sleep(3)
    sys.exit(f"demo setup: no upload from the demo agent for {address} within 10 minutes")


if __name__ == "__main__":
    if len(sys.argv) < 4 or sys.argv[1] not in ("account", "assign"):
        sys.exit(__doc__)
    if sys.argv[1] == "account":
        account(sys.argv[2], Path(sys.argv[3]))
    else:
        assign(sys.argv[2], Path(sys.argv[3]), sys.argv[4])
