"""Bounded work per upload: physical limits on every number an agent sends, each
refused with a 422 that names its place and stores nothing; a flood of invalid trace records
refused at its first error; decoding done in a decoder process, not in the API process."""

import gzip
import json
import os
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select

from conftest import bearer
from hitcurve.core.db import get_sessionmaker
from hitcurve.ingest import uploads
from hitcurve.models import Snapshot, TraceChunk
from hitcurve.schemas import agent as proto
from hitcurve_testing.snapshots import make_snapshot, make_trace_chunk


def _post(account: Any, path: str, doc: dict[str, Any]) -> Any:
    key = account.extra.get("agent_key") or account.agent_key()
    account.extra["agent_key"] = key
    return account.client.post(f"/api/v1/agent/{path}", json=doc, headers=bearer(key))


def _count(model: Any, obj_id: str) -> int:
    with get_sessionmaker()() as db:
        return int(
            db.execute(
                select(func.count()).select_from(model).where(model.id == uuid.UUID(obj_id))
            ).scalar_one()
        )


def _set(doc: dict[str, Any], path: list[Any], value: Any) -> None:
    for p in path[:-1]:
        doc = doc[p]
    doc[path[-1]] = value


SNAPSHOT_CASES = [
    (["classes", 0, "curve", "points", 99, 0], 1e308),  # the probe: a curve size of 1e308 items
    (["classes", 0, "curve", "current_items"], 2**41),
    (["classes", 0, "items"], 2**63 - 1),
    (["classes", 0, "chunk_size"], 2**31 - 1),
    (["classes", 0, "pages"], 2**31 - 1),
    (["classes", 0, "requests"], 2**60),
    (["classes", 0, "cost_us", "p99"], 1e12),
    (["server", "limit_maxbytes"], 2**60),
    (["measured", "bytes"], 2**55),
    (["measured", "curr_items"], 2**45),
    (["measured", "cmd_get"], 2**62),
    (["loss", "events_seen"], 2**62),
]


@pytest.mark.parametrize(
    ("path", "value"), SNAPSHOT_CASES, ids=[".".join(map(str, p)) for p, _ in SNAPSHOT_CASES]
)
def test_snapshot_numbers_past_physical_limits_are_refused_where_they_are(account, path, value) -> None:  # type: ignore[no-untyped-def]
    snap = make_snapshot("10.1.2.3:11211", n_classes=2)
    snap["classes"][0]["cost_us"] = {"count": 3, "mean": 10.0, "p50": 9.0, "p90": 12.0, "p99": 20.0}
    _set(snap, path, value)
    r = _post(account, "snapshots", snap)
    assert r.status_code == 422, r.text
    body = r.json()
    assert body["code"] == "invalid_payload"
    locs = [e["loc"] for e in body["detail"]]
    assert path in locs, locs
    assert "less than or equal" in body["detail"][locs.index(path)]["msg"]
    assert _count(Snapshot, snap["snapshot_id"]) == 0


def test_physical_limits_leave_real_fleets_room(account) -> None:  # type: ignore[no-untyped-def]
    """A 1 TiB memcached with 4 billion small items and a week of a busy server's counters."""
    snap = make_snapshot("10.1.2.4:11211", n_classes=1)
    snap["server"]["limit_maxbytes"] = 2**40
    snap["measured"].update(bytes=2**40 - 1, curr_items=4_000_000_000, cmd_get=10**14, get_hits=9 * 10**13)
    assert _post(account, "snapshots", snap).status_code == 202


TRACE_CASES = [("size", 2**31), ("ttl", 2**40), ("ts_us", 2**60), ("cost_us", 1e308)]


@pytest.mark.parametrize(("column", "value"), TRACE_CASES, ids=[c for c, _ in TRACE_CASES])
def test_trace_record_numbers_past_physical_limits_are_refused(account, column, value) -> None:  # type: ignore[no-untyped-def]
    chunk = make_trace_chunk("10.1.2.5:11211", records=50)
    chunk["records"][column][7] = value
    r = _post(account, "traces", chunk)
    assert r.status_code == 422, r.text
    assert ["records", column, 7] in [e["loc"] for e in r.json()["detail"]]
    assert _count(TraceChunk, chunk["chunk_id"]) == 0


def test_a_flood_of_invalid_records_is_refused_at_its_first_error(account) -> None:  # type: ignore[no-untyped-def]
    """The issue's probe: 200k records, every key invalid, ~17 KB of gzip. Each column stops at
    its first bad element: the answer carries one error per bad column, not 200k."""
    n = proto.MAX_RECORDS
    chunk = make_trace_chunk("10.1.2.6:11211", records=1)
    rec = chunk["records"]
    chunk["records"] = {k: rec[k] * n for k in rec}
    chunk["records"]["key"] = ["zz"] * n
    chunk["records"]["op"] = [9] * n
    body = gzip.compress(json.dumps(chunk).encode(), 9)
    key = account.agent_key()
    r = account.client.post(
        "/api/v1/agent/traces",
        content=body,
        headers={**bearer(key), "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert r.status_code == 422, r.text
    assert sorted(tuple(e["loc"]) for e in r.json()["detail"]) == [
        ("records", "key", 0),
        ("records", "op", 0),
    ]
    assert _count(TraceChunk, chunk["chunk_id"]) == 0


def test_uploads_are_decoded_in_a_decoder_process(account) -> None:  # type: ignore[no-untyped-def]
    snap = make_snapshot("10.1.2.7:11211", n_classes=3)
    assert _post(account, "snapshots", snap).status_code == 202
    pool = uploads._pool
    assert pool is not None, "the upload was decoded without the decoder pool"
    pids = [p.pid for p in pool._processes.values()]  # noqa: SLF001 - the pool's own processes
    assert pids and os.getpid() not in pids
    assert all(os.getpriority(os.PRIO_PROCESS, pid) >= os.getpriority(os.PRIO_PROCESS, 0) + 1 for pid in pids)


def test_the_decoder_pool_starts_off_the_event_loop(account, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """Starting the forkserver and a decoder blocks its caller: the first upload of an API
    process must start them in a thread, or every other request of that process waits."""
    import asyncio

    started_on_loop: list[bool] = []
    real = uploads._start_pool

    def spy(workers: int):  # type: ignore[no-untyped-def]
        try:
            asyncio.get_running_loop()
            started_on_loop.append(True)
        except RuntimeError:
            started_on_loop.append(False)
        return real(workers)

    monkeypatch.setattr(uploads, "_start_pool", spy)
    monkeypatch.setattr(uploads, "_pool", None)
    assert _post(account, "snapshots", make_snapshot("10.1.2.8:11211", n_classes=3)).status_code == 202
    assert started_on_loop == [False]
    assert uploads._pool is not None
    uploads._pool.shutdown(wait=False)  # this test's own pool; the module's goes back on undo


def test_the_api_starts_its_decoders_at_start_up(app, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import time

    from fastapi.testclient import TestClient

    monkeypatch.setattr(uploads, "_pool", None)
    with TestClient(app):  # runs the app's start-up (lifespan), as each uvicorn process does
        deadline = time.monotonic() + 120  # generous: a loaded machine starts processes slowly
        while uploads._pool is None:
            assert time.monotonic() < deadline, "no decoder pool after start-up"
            time.sleep(0.05)
        pool = uploads._pool
    assert [p.pid for p in pool._processes.values()]  # noqa: SLF001 - a decoder is running
    pool.shutdown(wait=False)


def test_deep_nesting_is_a_clear_400(account) -> None:  # type: ignore[no-untyped-def]
    snap = make_snapshot("10.1.2.8:11211", n_classes=1)
    text = json.dumps(snap).replace(
        '"settings": {', '"settings": {"x": ' + "[" * 100_000 + "]" * 100_000 + ", ", 1
    )
    key = account.agent_key()
    r = account.client.post(
        "/api/v1/agent/snapshots", content=text, headers={**bearer(key), "Content-Type": "application/json"}
    )
    assert r.status_code == 400 and r.json()["code"] == "malformed_json", r.text
