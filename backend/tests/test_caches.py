"""The hot-path caches (token lookups, fitted sizing curves) with a time to live: revocation still
takes effect at once in the revoking process, and a cached curve is the same answer, re-aged."""

import time

import pytest

from conftest import bearer, insert_server_curve, upload_snapshot
from hitcurve.core.config import get_settings


@pytest.fixture
def ttl(monkeypatch) -> float:
    monkeypatch.setattr(get_settings(), "hot_cache_ttl_s", 30.0)
    return 30.0


def test_revoked_token_is_refused_at_once_despite_the_cache(ttl, account, anon) -> None:
    tok = account.post("/api/v1/api-tokens", json={"name": "t"}).json()
    h = bearer(tok["token"])
    assert anon.get("/api/v1/servers", headers=h).status_code == 200  # now cached
    assert anon.get("/api/v1/servers", headers=h).status_code == 200
    assert account.delete(f"/api/v1/api-tokens/{tok['id']}").status_code == 204
    assert anon.get("/api/v1/servers", headers=h).status_code == 401


def test_revoked_agent_key_is_refused_at_once_despite_the_cache(ttl, account, anon) -> None:
    from hitcurve_testing.snapshots import make_snapshot

    created = account.post("/api/v1/agent-keys", json={"name": "k"}).json()
    h = bearer(created["key"])
    assert anon.post("/api/v1/agent/snapshots", json=make_snapshot(), headers=h).status_code == 202
    assert account.delete(f"/api/v1/agent-keys/{created['id']}").status_code == 204
    assert anon.post("/api/v1/agent/snapshots", json=make_snapshot(), headers=h).status_code == 401


def test_cached_curve_answers_the_same_and_ages(ttl, account) -> None:
    sid, snap = upload_snapshot(account)
    url = f"/api/v1/sizing/servers/{sid}/memory"
    assert account.get(url, params={"target_hit_ratio": 0.5}).status_code == 409  # no curve: cached too
    insert_server_curve(account.org_id, sid, snap, [1e9, 2e9], [0.4, 0.8])
    assert account.get(url, params={"target_hit_ratio": 0.5}).status_code == 409  # within the TTL
    get_settings().hot_cache_ttl_s = 29.0  # a new TTL starts an empty cache
    first = account.get(url, params={"target_hit_ratio": 0.5}).json()
    time.sleep(1.1)
    second = account.get(url, params={"target_hit_ratio": 0.5}).json()
    assert first["memory_bytes"] == second["memory_bytes"]
    assert second["curve"]["age_seconds"] >= first["curve"]["age_seconds"] + 1
    # other organizations never see the cached entry
    from conftest import new_account

    stranger = new_account(account.client.app, org_name="Stranger")
    assert stranger.get(url, params={"target_hit_ratio": 0.5}).status_code == 404
