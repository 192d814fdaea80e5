"""The hot-path caches (token lookups, fitted sizing curves) with a time to live: revocation still
takes effect at once in the revoking process, and a cached curve is the same answer, re-aged."""

import time

import pytest

from conftest import bearer, insert_server_curve, upload_snapshot
from hitcurve.core.config import get_settings
from hitcurve_testing.waiting import wait_until


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


@pytest.fixture
def long_ttl(monkeypatch) -> float:
    """An hour: an entry made due stays far from expiring while a test waits for its refresh."""
    monkeypatch.setattr(get_settings(), "hot_cache_ttl_s", 3600.0)
    return 3600.0


def _make_due(cache, key) -> None:  # type: ignore[no-untyped-def]
    """Age a cached entry into the second half of its life (as time would)."""
    expires, value = cache._data[key]  # noqa: SLF001 - the cache's own entry
    cache._data[key] = (time.monotonic() + cache.ttl_s / 3, value)  # noqa: SLF001


def _wait_until(what: str, done) -> None:  # type: ignore[no-untyped-def]
    wait_until(done, what, interval=0.05)  # the refresh runs in a thread of a loaded machine


def test_entries_are_due_once_in_the_second_half_of_their_life() -> None:
    from hitcurve.core.ttlcache import TTLCache

    c = TTLCache(30.0)
    c.put("k", 1)
    assert not c.due("k") and not c.due("missing")
    _make_due(c, "k")
    assert c.due("k") and not c.due("k")  # once, until refreshed
    c.refreshed("k")
    assert c.due("k")
    off = TTLCache(0.0)
    off.put("k", 1)
    assert not off.due("k")


def test_a_due_token_is_looked_up_again_in_the_background_and_dropped_if_revoked(
    long_ttl, account, anon
) -> None:
    """Refresh ahead: the request that finds the entry due is answered from it at once; the
    background lookup then sees the revocation (made in the database, as another API process
    would) and drops the entry, so the next request is refused (long before the entry expires:
    only the refresh can have dropped it)."""
    from datetime import UTC, datetime

    from sqlalchemy import update

    from hitcurve.api.deps import principal_cache
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.core.security import sha256_hex
    from hitcurve.models import ApiToken

    tok = account.post("/api/v1/api-tokens", json={"name": "t"}).json()
    sid, _ = upload_snapshot(account)
    url = f"/api/v1/sizing/servers/{sid}/memory"
    h = bearer(tok["token"])
    assert anon.get(url, params={"target_hit_ratio": 0.5}, headers=h).status_code == 409  # cached now
    digest = sha256_hex(tok["token"])
    with get_sessionmaker()() as db:
        db.execute(update(ApiToken).where(ApiToken.token_hash == digest).values(revoked_at=datetime.now(UTC)))
        db.commit()
    assert anon.get(url, params={"target_hit_ratio": 0.5}, headers=h).status_code == 409  # within its ttl
    _make_due(principal_cache(), digest)
    assert anon.get(url, params={"target_hit_ratio": 0.5}, headers=h).status_code == 409  # answered at once
    _wait_until("the background lookup", lambda: principal_cache().get(digest) is None)
    assert anon.get(url, params={"target_hit_ratio": 0.5}, headers=h).status_code == 401


def test_an_agent_key_revoked_by_another_process_is_refused_once_its_entry_is_refreshed(
    monkeypatch, account, anon
) -> None:
    """Agent keys have their own, longer cache (Settings.agent_key_cache_ttl_s): a key revoked in
    the database (as another API process would) keeps uploading until its entry's background
    lookup, at the latest after the ttl, then is refused; the upload that found it due was
    answered at once."""
    from datetime import UTC, datetime

    from sqlalchemy import update

    from hitcurve.api.deps import agent_key_cache
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.core.security import sha256_hex
    from hitcurve.models import AgentKey
    from hitcurve_testing.snapshots import make_snapshot

    monkeypatch.setattr(get_settings(), "agent_key_cache_ttl_s", 3600.0)
    monkeypatch.setattr(get_settings(), "hot_cache_ttl_s", 0.0)  # the tokens' cache is not the one
    created = account.post("/api/v1/agent-keys", json={"name": "k"}).json()
    h = bearer(created["key"])
    assert anon.post("/api/v1/agent/snapshots", json=make_snapshot(), headers=h).status_code == 202  # cached
    digest = sha256_hex(created["key"])
    with get_sessionmaker()() as db:
        db.execute(update(AgentKey).where(AgentKey.key_hash == digest).values(revoked_at=datetime.now(UTC)))
        db.commit()
    assert anon.post("/api/v1/agent/snapshots", json=make_snapshot(), headers=h).status_code == 202  # within
    _make_due(agent_key_cache(), digest)
    assert anon.post("/api/v1/agent/snapshots", json=make_snapshot(), headers=h).status_code == 202  # at once
    _wait_until("the background lookup", lambda: agent_key_cache().get(digest) is None)
    assert anon.post("/api/v1/agent/snapshots", json=make_snapshot(), headers=h).status_code == 401


def test_a_due_curve_is_refreshed_in_the_background(long_ttl, account) -> None:
    from hitcurve.sizing.basis import Basis
    from hitcurve.sizing.cache import basis_cache

    sid, snap = upload_snapshot(account)
    url = f"/api/v1/sizing/servers/{sid}/memory"
    assert account.get(url, params={"target_hit_ratio": 0.5}).status_code == 409  # "no curve" cached
    insert_server_curve(account.org_id, sid, snap, [1e9, 2e9], [0.4, 0.8])
    (key,) = [k for k in basis_cache()._data if sid in str(k)]  # noqa: SLF001
    _make_due(basis_cache(), key)
    assert account.get(url, params={"target_hit_ratio": 0.5}).status_code == 409  # the cached answer, at once
    _wait_until("the background refresh", lambda: isinstance(basis_cache().get(key), Basis))
    r = account.get(url, params={"target_hit_ratio": 0.5})
    assert r.status_code == 200 and r.json()["memory_bytes"] > 0


def test_start_up_builds_the_routes_so_no_request_does(monkeypatch) -> None:
    """FastAPI builds a router's route state at the first request reaching it, on the event loop
    (0.7 s under load at the first upload, bench/stall): the app's start-up builds it instead."""
    from fastapi import routing
    from fastapi.testclient import TestClient

    from conftest import _fresh_app

    built: list[str] = []
    real = routing._EffectiveRouteContext.from_api_route

    def counting(*a, **kw):  # type: ignore[no-untyped-def]
        built.append("route")
        return real(*a, **kw)

    with TestClient(_fresh_app()) as c:
        monkeypatch.setattr(routing._EffectiveRouteContext, "from_api_route", staticmethod(counting))
        assert c.get("/api/v1/health").status_code in (200, 503)
        assert c.get("/api/v1/sizing/servers/00000000-0000-0000-0000-000000000000/memory").status_code == 401
        assert c.post("/api/v1/agent/snapshots", content=b"{}").status_code in (401, 415)
    assert built == []
