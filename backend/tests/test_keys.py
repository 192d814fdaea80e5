"""Agent keys and API tokens: shown once, stored as SHA-256, revocable, last-used time, scopes."""

import time

from sqlalchemy import select

from conftest import bearer
from hitcurve.core.db import get_sessionmaker
from hitcurve.core.security import sha256_hex
from hitcurve.models import AgentKey, ApiToken
from hitcurve_testing.snapshots import make_snapshot


def test_agent_key_lifecycle(account, anon) -> None:
    r = account.post("/api/v1/agent-keys", json={"name": "rack 7"})
    assert r.status_code == 201
    created = r.json()
    secret = created["key"]
    assert secret.startswith("hca_") and len(secret) > 40 and created["prefix"] == secret[:10]
    listed = account.get("/api/v1/agent-keys").json()
    assert [k["id"] for k in listed] == [created["id"]] and "key" not in listed[0]
    assert listed[0]["last_used_at"] is None
    with get_sessionmaker()() as db:
        row = db.execute(select(AgentKey)).scalars().all()
        mine = next(k for k in row if str(k.id) == created["id"])
        assert mine.key_hash == sha256_hex(secret)
        assert all(secret not in (k.key_hash + k.prefix + k.name) or k.prefix == secret[:10] for k in row)
    assert (
        anon.post("/api/v1/agent/snapshots", json=make_snapshot(), headers=bearer(secret)).status_code == 202
    )
    assert account.get("/api/v1/agent-keys").json()[0]["last_used_at"] is not None
    # the agent key cannot read anything
    for url in ("/api/v1/servers", "/api/v1/clusters", "/api/v1/agent-keys", "/api/v1/alerts"):
        r = anon.get(url, headers=bearer(secret))
        assert r.status_code == 403 and r.json()["code"] == "agent_key_upload_only"
    assert account.delete(f"/api/v1/agent-keys/{created['id']}").status_code == 204
    assert account.get("/api/v1/agent-keys").json()[0]["revoked_at"] is not None
    r = anon.post("/api/v1/agent/snapshots", json=make_snapshot(), headers=bearer(secret))
    assert r.status_code == 401 and "revoked" in r.json()["detail"]


def test_api_token_scopes_and_revocation(account, anon) -> None:
    r = account.post("/api/v1/api-tokens", json={"name": "hpa", "scope": "read"})
    assert r.status_code == 201
    tok = r.json()
    assert tok["token"].startswith("hct_") and tok["scope"] == "read"
    with get_sessionmaker()() as db:
        row = db.execute(select(ApiToken).where(ApiToken.token_hash == sha256_hex(tok["token"]))).scalar_one()
        assert str(row.id) == tok["id"]
    h = bearer(tok["token"])
    assert anon.get("/api/v1/servers", headers=h).status_code == 200
    assert anon.get("/api/v1/api-tokens", headers=h).status_code == 403  # management is for sessions
    assert anon.post("/api/v1/clusters", json={"name": "x"}, headers=h).status_code == 403
    sim = {"server_id": "00000000-0000-0000-0000-000000000001", "policies": ["lru"], "sizes_bytes": [1 << 30]}
    r = anon.post("/api/v1/simulations", json=sim, headers=h)
    assert r.status_code == 403 and "scope read" in r.json()["detail"]
    rw = account.api_token("read_write")
    assert (
        anon.post("/api/v1/simulations", json=sim, headers=bearer(rw)).status_code == 404
    )  # allowed; no server
    assert account.get("/api/v1/api-tokens").json()[0]["last_used_at"] is not None
    assert account.delete(f"/api/v1/api-tokens/{tok['id']}").status_code == 204
    time.sleep(0.01)
    r = anon.get("/api/v1/servers", headers=h)
    assert r.status_code == 401 and "revoked" in r.json()["detail"]
    bad = account.post("/api/v1/api-tokens", json={"name": "x", "scope": "admin"})
    assert bad.status_code == 422


def test_keys_are_per_org_and_foreign_ids_404(account, other) -> None:
    key_id = account.post("/api/v1/agent-keys", json={"name": "a"}).json()["id"]
    tok_id = account.post("/api/v1/api-tokens", json={"name": "a"}).json()["id"]
    assert other.get("/api/v1/agent-keys").json() == []
    assert other.get("/api/v1/api-tokens").json() == []
    assert other.delete(f"/api/v1/agent-keys/{key_id}").status_code == 404
    assert other.delete(f"/api/v1/api-tokens/{tok_id}").status_code == 404
    assert account.get("/api/v1/agent-keys").json()[0]["revoked_at"] is None


def test_audit_log_records_key_actions(account) -> None:
    key_id = account.post("/api/v1/agent-keys", json={"name": "a"}).json()["id"]
    account.delete(f"/api/v1/agent-keys/{key_id}")
    log = account.get("/api/v1/audit-log").json()
    actions = [e["action"] for e in log]
    assert "agent_key.created" in actions and "agent_key.revoked" in actions
    assert all(e["details"].get("key") is None for e in log)
    filtered = account.get("/api/v1/audit-log", params={"action": "agent_key.revoked"}).json()
    assert [e["target_id"] for e in filtered] == [key_id]
