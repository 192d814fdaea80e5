"""The breakdown pages read what was extracted at ingest (snapshots.breakdown), never the stored
upload: a stored payload that costs seconds to decode does not slow a breakdown view, its
what-ifs or /health (real PostgreSQL, the real upload and read APIs).

Measured as ratios within one run (this machine is shared): the same views of a server whose
stored payloads are poisoned against a server whose payloads are clean."""

from __future__ import annotations

import gzip
import json
import statistics
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import text

from conftest import Account, bearer
from hitcurve.core.db import get_engine
from hitcurve_testing.snapshots import add_breakdown, make_snapshot

pytestmark = pytest.mark.slow  # views timed against each other: a minute or more on a shared machine

WINDOWS = 4  # stored windows per server; the newest three are loss-flagged, so a reader that
# decodes payloads decodes every one of them before it finds the good window
POISON_ITEMS = 250_000  # ~4 MiB of JSON in a ~15 KB gzip: ~0.2-1 s for json.loads alone


def _poison(doc: dict[str, Any]) -> bytes:
    """The stored upload with a field nothing reads, made to cost seconds to decode."""
    heavy = dict(doc, diagnostics={"padding": [{"a": i % 7, "b": [i % 3]} for i in range(POISON_ITEMS)]})
    return gzip.compress(json.dumps(heavy, separators=(",", ":")).encode(), compresslevel=9)


def _server(account: Account, address: str) -> str:
    return str(next(s["id"] for s in account.get("/api/v1/servers").json() if s["address"] == address))


def _store(account: Account, address: str, poisoned: bool) -> str:
    key = account.extra.get("agent_key") or account.agent_key()
    account.extra["agent_key"] = key
    now = datetime.now(UTC).replace(microsecond=0)
    for i in range(WINDOWS):
        snap = add_breakdown(make_snapshot(address, seed=20 + i, end=now - timedelta(minutes=WINDOWS - i)))
        if i > 0:
            snap["loss"].update(loss_ratio=0.2, flagged=True)
        r = account.client.post("/api/v1/agent/snapshots", json=snap, headers=bearer(key))
        assert r.status_code == 202, r.text
        if poisoned:
            with get_engine().begin() as c:
                c.execute(
                    text("UPDATE snapshots SET payload_gzip = :p WHERE id = :id"),
                    {"p": _poison(snap), "id": snap["snapshot_id"]},
                )
    return _server(account, address)


def _median_s(account: Account, url: str, params: dict[str, Any], n: int = 5) -> float:
    times = []
    for _ in range(n):
        t = time.perf_counter()
        r = account.get(url, params=params)
        times.append(time.perf_counter() - t)
        assert r.status_code == 200, r.text
    return statistics.median(times)


def test_a_poisoned_stored_upload_does_not_slow_the_breakdown_views(account: Account) -> None:
    clean = _store(account, "10.0.3.1:11211", poisoned=False)
    poisoned = _store(account, "10.0.3.2:11211", poisoned=True)
    # the poison is there: decoding one stored payload costs far more than a clean view
    with get_engine().connect() as c:
        blob = c.execute(
            text("SELECT payload_gzip FROM snapshots WHERE server_id = :s ORDER BY window_end DESC LIMIT 1"),
            {"s": poisoned},
        ).scalar_one()
    t = time.perf_counter()
    json.loads(gzip.decompress(blob))
    decode_s = time.perf_counter() - t
    base = _median_s(account, f"/api/v1/servers/{clean}/breakdown", {})
    assert decode_s > 5 * base, (decode_s, base)

    for path, params in (("", {}), ("/split", {"prefix": "feed"}), ("/ttl", {"prefix": "sess", "ttl_s": 60})):
        a = _median_s(account, f"/api/v1/servers/{clean}/breakdown{path}", params)
        b = _median_s(account, f"/api/v1/servers/{poisoned}/breakdown{path}", params)
        assert b < 2 * a + 0.2 * decode_s, (path, a, b, decode_s)

    # the answers rest on the newest good window, as before, whatever its stored payload
    got = account.get(f"/api/v1/servers/{poisoned}/breakdown").json()
    assert got["windows_note"] == "3 newer windows left out (stream loss)"
    assert [p["prefix"] for p in got["prefixes"]][:4] == ["user", "sess", "feed", "cfg"]


def test_health_answers_while_poisoned_views_run(account: Account) -> None:
    """/health from another thread while four views of the poisoned server run: its typical answer
    (the median) stays far below one stored payload's decode time (a reader that decodes stored
    uploads holds the interpreter for the whole decode, so most polls wait that long)."""
    poisoned = _store(account, "10.0.3.3:11211", poisoned=True)
    with get_engine().connect() as c:
        blob = c.execute(
            text("SELECT payload_gzip FROM snapshots WHERE server_id = :s LIMIT 1"), {"s": poisoned}
        ).scalar_one()
    t = time.perf_counter()
    json.loads(gzip.decompress(blob))
    decode_s = time.perf_counter() - t
    stop = threading.Event()
    health: list[float] = []

    def poll() -> None:
        while not stop.is_set():
            t0 = time.perf_counter()
            assert account.client.get("/api/v1/health").status_code in (200, 503)
            health.append(time.perf_counter() - t0)
            time.sleep(0.01)

    def view() -> None:
        for _ in range(3):
            account.get(f"/api/v1/servers/{poisoned}/breakdown")

    views = [threading.Thread(target=view) for _ in range(4)]
    p = threading.Thread(target=poll)
    p.start()
    for v in views:
        v.start()
    for v in views:
        v.join()
    stop.set()
    p.join()
    assert len(health) >= 3 and statistics.median(health) < 0.25 * decode_s, (health, decode_s)


def test_an_answer_past_its_budget_is_a_503_with_retry_after(account: Account, monkeypatch: Any) -> None:
    from hitcurve.api.routes import breakdown as routes

    server = _store(account, "10.0.3.4:11211", poisoned=False)
    assert account.get(f"/api/v1/servers/{server}/breakdown").status_code == 200
    monkeypatch.setattr(routes, "BREAKDOWN_BUDGET_S", 1e-9)
    r = account.get(f"/api/v1/servers/{server}/breakdown")
    assert r.status_code == 503 and r.json()["code"] == "breakdown_busy", r.text
    assert r.headers["Retry-After"] == "5"


def test_memory_held_adds_up_to_what_memcached_stores(account: Account) -> None:
    """A window whose per-prefix estimates sum above memcached's stored bytes (older agents sent
    them so: 53.8 MB on a server storing 27.5 MB): each prefix holds its share of what memcached
    stores, the shares as estimated, and every answer reads the same figure; a window that adds
    up is shown as sent."""
    key = account.extra.get("agent_key") or account.agent_key()
    account.extra["agent_key"] = key
    snap = add_breakdown(make_snapshot("10.0.3.5:11211", seed=30))
    estimated = [p["bytes"] for p in snap["prefixes"]] + [snap["prefix_other"]["bytes"]]
    stored = sum(estimated) // 2
    snap["measured"]["bytes"] = stored
    assert account.client.post("/api/v1/agent/snapshots", json=snap, headers=bearer(key)).status_code == 202
    server = _server(account, "10.0.3.5:11211")
    b = account.get(f"/api/v1/servers/{server}/breakdown").json()
    held = [p["bytes"] for p in b["prefixes"]]
    assert b["stored_bytes"] == stored and sum(held) <= stored and sum(held) >= stored - len(held)
    for p, e in zip(b["prefixes"], estimated, strict=True):
        assert abs(p["memory_share"] - e / sum(estimated)) < 1e-6, p["prefix"]
    assert "split in proportion" in b["memory_rule"]
    assert set(b["memory_answers"]) == {"server", "prefix_alone", "ttl_model"}
    alone = [p["memory_for_target"] for p in b["prefixes"] if not p["other"]]
    assert b["prefixes_alone_bytes"] == (sum(alone) if None not in alone else None)
    sess = next(p for p in b["prefixes"] if p["prefix"] == "sess")
    t = account.get(f"/api/v1/servers/{server}/breakdown/ttl", params={"prefix": "sess", "ttl_s": 60}).json()
    assert t["held_bytes"] == sess["bytes"]

    fits = add_breakdown(make_snapshot("10.0.3.6:11211", seed=31))
    fits["measured"]["bytes"] = sum(estimated) + 1
    assert account.client.post("/api/v1/agent/snapshots", json=fits, headers=bearer(key)).status_code == 202
    b = account.get(f"/api/v1/servers/{_server(account, '10.0.3.6:11211')}/breakdown").json()
    assert [p["bytes"] for p in b["prefixes"]] == estimated
