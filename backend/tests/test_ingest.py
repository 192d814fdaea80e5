"""Agent uploads: protocol validation, limits, idempotency, storage, hand-off to Celery."""

import base64
import gzip
import json
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select

from conftest import bearer
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.ingest import tracecodec
from hitcurve.ingest.classpack import unpack
from hitcurve.models import Server, Snapshot, TraceChunk
from hitcurve_testing.snapshots import make_snapshot, make_stats_only_snapshot, make_trace_chunk

SNAP = "/api/v1/agent/snapshots"
TRACE = "/api/v1/agent/traces"


def _post(
    client: Any,
    url: str,
    key: str,
    body: Any,
    *,
    gz: bool = True,
    raw: bytes | None = None,
    headers: dict[str, str] | None = None,
) -> Any:
    data = raw if raw is not None else json.dumps(body).encode()
    h = {**bearer(key), "Content-Type": "application/json"}
    if gz:
        data = gzip.compress(data, compresslevel=1)
        h["Content-Encoding"] = "gzip"
    return client.post(url, content=data, headers={**h, **(headers or {})})


def _counts() -> tuple[int, int, int, int]:
    with get_sessionmaker()() as db:
        return (
            db.scalar(select(func.count()).select_from(Snapshot)) or 0,
            sum(len(unpack(k)) for k in db.scalars(select(Snapshot.classes)) if k is not None),
            db.scalar(select(func.count()).select_from(TraceChunk)) or 0,
            db.scalar(select(func.count()).select_from(Server)) or 0,
        )


@pytest.fixture
def key(account) -> str:
    return account.agent_key()


def test_snapshot_stored_server_registered_and_duplicate_is_200(account, anon, key, keep_payloads) -> None:
    snap = make_snapshot("10.1.2.3:11211")
    r = _post(anon, SNAP, key, snap)
    assert r.status_code == 202, r.text
    assert r.json() == {"id": snap["snapshot_id"], "status": "accepted"}
    again = _post(anon, SNAP, key, snap, gz=False)
    assert again.status_code == 200
    assert again.json() == {"id": snap["snapshot_id"], "status": "duplicate"}
    with get_sessionmaker()() as db:
        row = db.get(Snapshot, uuid.UUID(snap["snapshot_id"]))
        assert row is not None and str(row.org_id) == account.org_id
        assert row.status == "pending" and json.loads(gzip.decompress(row.payload_gzip or b"")) == snap
        assert row.measured_hit_ratio == snap["measured"]["hit_ratio"]
        mem = snap["memory"]
        assert (
            row.total_malloced,
            row.memory_full,
            row.evictions_total,
            row.hash_bytes,
            row.curr_connections,
        ) == (
            mem["total_malloced"],
            True,
            mem["evictions_total"],
            mem["hash_bytes"],
            mem["curr_connections"],
        )
        server = db.get(Server, row.server_id)
        assert server is not None
        assert (
            server.address,
            server.version,
            server.limit_maxbytes,
            server.hostname,
            server.agent_version,
        ) == ("10.1.2.3:11211", "1.6.18", snap["server"]["limit_maxbytes"], "cache-07", "0.1.0")
        assert server.settings == snap["server"]["settings"]
        classes = unpack(row.classes or b"")
        assert [c.class_id for c in classes] == sorted(c["id"] for c in snap["classes"])
        # every class carries exactly its own curve and counters, value for value (the packing is
        # lossless), and the snapshot the sums of its timed lookups
        for row_c, sent in zip(classes, sorted(snap["classes"], key=lambda c: c["id"]), strict=True):
            assert row_c.sizes_items == [p[0] for p in sent["curve"]["points"]]
            assert row_c.hit_ratios == [p[1] for p in sent["curve"]["points"]]
            assert (row_c.chunk_size, row_c.pages, row_c.items, row_c.evictions, row_c.requests) == (
                sent["chunk_size"],
                sent["pages"],
                sent["items"],
                sent["evictions"],
                sent["requests"],
            )
            assert row_c.current_items == sent["curve"]["current_items"]
            cost = sent.get("cost_us") or {}
            assert (row_c.cost_count, row_c.cost_mean_us, row_c.cost_p50_us, row_c.cost_p90_us) == (
                cost.get("count"),
                cost.get("mean"),
                cost.get("p50"),
                cost.get("p90"),
            )
            assert row_c.cost_p99_us == cost.get("p99")
        timed = [c["cost_us"] for c in snap["classes"] if (c.get("cost_us") or {}).get("count")]
        assert row.cost_count == (sum(k["count"] for k in timed) or None)
        assert row.cost_us_total == pytest.approx(sum(k["count"] * k["mean"] for k in timed) or None)
    # the second upload of the same server reuses its row
    _post(anon, SNAP, key, make_snapshot("10.1.2.3:11211"))
    assert len(account.get("/api/v1/servers").json()) == 1


@pytest.mark.parametrize("keep", [None, "flagged", "none", "all"])
def test_the_agents_document_is_kept_as_the_setting_says(keep, anon, key, monkeypatch) -> None:
    """By default (flagged) only a window the agent flagged keeps its document; `none` keeps
    none, `all` every one. The classes and the answers' columns are stored either way."""
    if keep is not None:
        monkeypatch.setenv("HITCURVE_STORE_PAYLOADS", keep)
    get_settings.cache_clear()
    try:
        plain, flagged = make_snapshot("10.1.9.1:11211", seed=1), make_snapshot("10.1.9.1:11211", seed=2)
        flagged["loss"].update(loss_ratio=0.2, flagged=True)
        for snap in (plain, flagged):
            assert _post(anon, SNAP, key, snap).status_code == 202
        with get_sessionmaker()() as db:
            rows = [db.get(Snapshot, uuid.UUID(s["snapshot_id"])) for s in (plain, flagged)]
            kept = [r is not None and r.payload_gzip is not None for r in rows]
            assert all(r is not None and len(unpack(r.classes or b"")) == len(plain["classes"]) for r in rows)
    finally:
        monkeypatch.delenv("HITCURVE_STORE_PAYLOADS", raising=False)
        get_settings.cache_clear()
    want = {None: [False, True], "flagged": [False, True], "none": [False, False], "all": [True, True]}
    assert kept == want[keep]
    if keep == "all":
        assert json.loads(gzip.decompress(rows[1].payload_gzip)) == flagged


@pytest.mark.parametrize("estimator", ["rounder", "stacker"])
def test_snapshot_names_its_estimator(estimator, anon, key, keep_payloads) -> None:
    snap = make_snapshot()
    snap["agent"]["estimator"] = estimator
    r = _post(anon, SNAP, key, snap)
    assert r.status_code == 202, r.text
    with get_sessionmaker()() as db:
        row = db.get(Snapshot, uuid.UUID(snap["snapshot_id"]))
        assert row is not None
        assert json.loads(gzip.decompress(row.payload_gzip or b""))["agent"]["estimator"] == estimator


def test_uncompressed_upload_is_stored_gzip_compressed(anon, key, keep_payloads) -> None:
    snap = make_snapshot("10.1.2.4:11211", n_classes=3)
    snap["classes"][1].pop("cost_us", None)  # a class without recompute costs
    assert _post(anon, SNAP, key, snap, gz=False).status_code == 202
    with get_sessionmaker()() as db:
        row = db.get(Snapshot, uuid.UUID(snap["snapshot_id"]))
        assert row is not None and row.payload_gzip is not None
        assert json.loads(gzip.decompress(row.payload_gzip)) == snap
        costs = [(c.class_id, c.cost_count) for c in unpack(row.classes or b"")]
    assert [c[1] is None for c in costs] == [c.get("cost_us") is None for c in snap["classes"]]


def test_snapshot_without_classes_is_stored(anon, key) -> None:
    snap = make_snapshot("10.1.2.5:11211", n_classes=0)
    assert _post(anon, SNAP, key, snap).status_code == 202, "a server with no active class yet"
    with get_sessionmaker()() as db:
        row = db.get(Snapshot, uuid.UUID(snap["snapshot_id"]))
        assert row is not None and row.classes is not None
        assert unpack(row.classes) == []


def test_snapshots_handed_to_celery_as_one_drain(account, anon, key, private_queue) -> None:
    import redis

    from hitcurve.core.tasks import drain_flag_key

    redis.Redis.from_url(get_settings().redis_url).delete(drain_flag_key())
    snaps = [make_snapshot(f"10.9.9.{i}:11211") for i in range(3)]
    for snap in snaps:
        assert _post(anon, SNAP, key, snap).status_code == 202
    # one hitcurve.drain_snapshots for the three (it claims every pending snapshot: no arguments),
    # to run HITCURVE_DRAIN_DELAY_S after the first upload
    messages = private_queue()
    assert [m["headers"]["task"] for m in messages] == ["hitcurve.drain_snapshots"], messages
    assert json.loads(base64.b64decode(messages[0]["body"]))[0] == []
    assert messages[0]["headers"]["eta"] is not None
    with get_sessionmaker()() as db:
        for snap in snaps:
            row = db.get(Snapshot, uuid.UUID(snap["snapshot_id"]))
            assert row is not None and row.status == "pending" and row.enqueued_at is not None


def test_trace_chunk_stored_columnar_and_idempotent(account, anon, key) -> None:
    chunk = make_trace_chunk("10.1.2.4:11211", records=500)
    r = _post(anon, TRACE, key, chunk)
    assert r.status_code == 202, r.text
    assert _post(anon, TRACE, key, chunk).json()["status"] == "duplicate"
    with get_sessionmaker()() as db:
        row = db.get(TraceChunk, uuid.UUID(chunk["chunk_id"]))
        assert row is not None and row.record_count == 500 and row.data_format == "npz-v1"
        cols = tracecodec.decode_records(row.data)
    rec = chunk["records"]
    assert cols["ts_us"].tolist() == rec["ts_us"]
    assert [f"{k:016x}" for k in cols["key"].tolist()] == rec["key"]
    assert cols["op"].tolist() == rec["op"] and cols["ttl"].tolist() == rec["ttl"]
    assert [None if c != c else c for c in cols["cost_us"].tolist()] == rec["cost_us"]


def test_trace_before_snapshot_registers_server(account, anon, key) -> None:
    assert _post(anon, TRACE, key, make_trace_chunk("10.7.7.7:11211", records=3)).status_code == 202
    servers = account.get("/api/v1/servers").json()
    assert [s["address"] for s in servers] == ["10.7.7.7:11211"] and servers[0]["version"] is None


def test_same_snapshot_id_from_another_org_is_refused(account, other, anon, key) -> None:
    snap = make_snapshot()
    assert _post(anon, SNAP, key, snap).status_code == 202
    r = _post(anon, SNAP, other.agent_key(), snap)
    assert r.status_code == 409 and r.json()["code"] == "id_conflict"
    assert other.get("/api/v1/servers").json() == []


def _mutate(path: str, value: Any) -> dict[str, Any]:
    snap = make_snapshot()
    target: Any = snap
    parts = path.split(".")
    for p in parts[:-1]:
        target = target[int(p)] if p.isdigit() else target[p]
    last = parts[-1]
    if value is _DELETE:
        del target[last]
    else:
        target[int(last) if last.isdigit() else last] = value
    return snap


_DELETE = object()


def _decreasing() -> dict[str, Any]:
    snap = make_snapshot()
    pts = snap["classes"][0]["curve"]["points"]
    pts[50][1], pts[51][1] = 0.9, 0.1
    return snap


def _unsorted_sizes() -> dict[str, Any]:
    snap = make_snapshot()
    pts = snap["classes"][0]["curve"]["points"]
    pts[10][0] = pts[9][0]
    return snap


def _many_classes(n: int) -> bytes:
    """A snapshot with n classes (valid ones, 100 points each), serialised quickly as raw JSON."""
    snap = make_snapshot(n_classes=1)
    one = json.dumps({k: v for k, v in snap["classes"][0].items() if k != "id"})
    snap["classes"] = []
    head = json.dumps(snap)[: -len("[]}")]
    classes = ",".join(f'{{"id": {i % 256}, {one[1:]}' for i in range(n))
    return (head + "[" + classes + "]}").encode()


def _dup_class() -> dict[str, Any]:
    snap = make_snapshot(n_classes=2)
    snap["classes"][1]["id"] = snap["classes"][0]["id"]
    return snap


def _short_coverage() -> dict[str, Any]:
    snap = make_snapshot()
    snap["classes"][0]["curve"]["current_items"] = int(snap["classes"][0]["curve"]["points"][-1][0]) + 1
    return snap


BAD_SNAPSHOTS = {
    "schema_version 2": (lambda: _mutate("schema_version", 2), "schema_version"),
    "string instead of int": (lambda: _mutate("measured.cmd_get", "1200000"), "cmd_get"),
    "float instead of int": (lambda: _mutate("classes.0.pages", 4.5), "pages"),
    "negative count": (lambda: _mutate("measured.get_hits", -1), "get_hits"),
    "hit ratio above 1": (lambda: _mutate("measured.hit_ratio", 1.5), "hit_ratio"),
    "missing field": (lambda: _mutate("loss", _DELETE), "loss"),
    "snapshot id not a uuid": (lambda: _mutate("snapshot_id", "abc"), "snapshot_id"),
    "99 curve points": (lambda: _mutate("curve_points", 99), "curve_points"),
    "decreasing curve": (_decreasing, "non-decreasing"),
    "sizes not increasing": (_unsorted_sizes, "strictly increasing"),
    # past the cheap guard (4 x 256 curves) and within the snapshot budget; 10 000 classes
    # (24 MB) are a 413 while inflating (test_upload_meaning)
    "1 100 classes": (lambda: _many_classes(1_100), "at most 256"),
    "300 classes": (lambda: _many_classes(300), "at most 256"),
    "class id 300": (lambda: _mutate("classes.0.id", 300), "id"),
    "duplicate class id": (_dup_class, "appears twice"),
    "curve does not cover current items": (_short_coverage, "current_items"),
    "window in the future": (lambda: _mutate("window.end", "2099-01-01T00:00:00Z"), "future"),
    "window 8 days old": (lambda: _mutate("window.start", "2020-01-01T00:00:00Z"), "7 days"),
    "naive timestamp": (lambda: _mutate("window.start", "2026-11-22T12:00:00"), "timezone"),
    "end before start": (
        lambda: _mutate("window.end", make_snapshot()["window"]["start"]),
        "end must be after",
    ),
    "unit bytes": (lambda: _mutate("classes.0.curve.unit", "bytes"), "unit"),
    "unknown estimator": (lambda: _mutate("agent.estimator", "lru"), "estimator"),
    "negative total_malloced": (
        lambda: _mutate(
            "memory", {"total_malloced": -1, "limit_maxbytes": 1, "evictions_total": 0, "full": False}
        ),
        "total_malloced",
    ),
    "memory full not a bool": (
        lambda: _mutate(
            "memory", {"total_malloced": 1, "limit_maxbytes": 1, "evictions_total": 0, "full": "yes"}
        ),
        "full",
    ),
    "body is a list": (lambda: [make_snapshot()], "JSON object"),
    "curve point is not a pair": (lambda: _mutate("classes.0.curve.points.0", [1.0]), "points"),
}


@pytest.mark.parametrize("case", sorted(BAD_SNAPSHOTS))
def test_bad_snapshot_gets_specific_422_and_stores_nothing(case, anon, key) -> None:
    make, words = BAD_SNAPSHOTS[case]
    before = _counts()
    body = make()
    r = _post(anon, SNAP, key, None, raw=body) if isinstance(body, bytes) else _post(anon, SNAP, key, body)
    assert r.status_code == 422, (case, r.status_code, r.text[:500])
    assert words.lower() in json.dumps(r.json()).lower(), (case, r.text[:800])
    assert _counts() == before


@pytest.mark.parametrize(
    "raw, words",
    [
        (b'{"schema_version": 1, "snapshot_id": ', "malformed JSON"),
        (b'{"a": NaN}', "NaN"),
        (b'{"a": Infinity}', "Infinity"),
        (b'{"a": -Infinity}', "Infinity"),
        (b"\xff\xfe not utf-8", "malformed JSON"),
    ],
)
def test_malformed_json_is_400(raw, words, anon, key) -> None:
    before = _counts()
    r = _post(anon, SNAP, key, None, raw=raw)
    assert r.status_code == 400, r.text
    assert words in r.json()["detail"]
    assert _counts() == before


def test_nan_inside_a_valid_snapshot_is_refused(anon, key) -> None:
    text = json.dumps(make_snapshot()).replace('"loss_ratio": 0.0', '"loss_ratio": NaN')
    r = _post(anon, SNAP, key, None, raw=text.encode())
    assert r.status_code == 400 and "NaN" in r.json()["detail"]


def test_nul_in_strings_is_refused(anon, key) -> None:
    r = _post(anon, SNAP, key, _mutate("agent.hostname", "cache\u0000-07"))
    assert r.status_code == 422 and "NUL" in r.json()["detail"]


def test_unicode_and_injection_strings_are_stored_verbatim(account, anon, key) -> None:
    address = "ŝérvèr-☃-'; DROP TABLE servers; --"
    assert _post(anon, SNAP, key, make_snapshot(address)).status_code == 202
    assert [s["address"] for s in account.get("/api/v1/servers").json()] == [address]


def test_oversized_body_is_413(anon, key) -> None:
    before = _counts()
    big = b'{"pad": "' + b"x" * (get_settings().max_body_bytes + 10) + b'"}'
    r = _post(anon, SNAP, key, None, raw=big, gz=False)
    assert r.status_code == 413 and r.json()["code"] == "body_too_large"
    assert _counts() == before


def test_gzip_bomb_is_413_without_inflating_it(anon, key) -> None:
    # 256 MiB of zeros compress to about 256 KiB; the server must stop at 32 MiB.
    import zlib

    comp = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    block = b"\0" * (1 << 20)
    bomb = b"".join(comp.compress(block) for _ in range(256)) + comp.flush()
    assert len(bomb) < get_settings().max_body_bytes
    r = anon.post(
        SNAP,
        content=bomb,
        headers={**bearer(key), "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert r.status_code == 413 and r.json()["code"] == "decompressed_too_large"
    assert anon.get("/api/v1/health").status_code == 200


@pytest.mark.parametrize(
    "body, headers, status, code",
    [
        (b"\x1f\x8b\x08\x00garbage", {"Content-Encoding": "gzip"}, 400, "bad_gzip"),
        (gzip.compress(b'{"a": 1}', mtime=0)[:-6], {"Content-Encoding": "gzip"}, 400, "bad_gzip"),
        (b"{}", {"Content-Encoding": "br"}, 415, "unsupported_encoding"),
        (b"{}", {"Content-Type": "text/plain"}, 415, "unsupported_media_type"),
        (b"", {}, 400, "empty_body"),
    ],
)
def test_transport_errors(body, headers, status, code, anon, key) -> None:
    h = {**bearer(key), "Content-Type": "application/json", **headers}
    r = anon.post(SNAP, content=body, headers=h)
    assert (r.status_code, r.json()["code"]) == (status, code), r.text


BAD_TRACES = {
    "columns of different length": (lambda c: c["records"]["op"].pop(), "same length"),
    "op 9": (lambda c: c["records"]["op"].__setitem__(0, 9), "op"),
    "key not hex": (lambda c: c["records"]["key"].__setitem__(0, "zz" * 8), "key"),
    "sample rate 0": (lambda c: c.__setitem__("sample_rate", 0), "sample_rate"),
    "negative seq": (lambda c: c.__setitem__("seq", -1), "seq"),
    "chunk id not a uuid": (lambda c: c.__setitem__("chunk_id", "0b6c"), "chunk_id"),
}


@pytest.mark.parametrize("case", sorted(BAD_TRACES))
def test_bad_trace_gets_422(case, anon, key) -> None:
    chunk = make_trace_chunk(records=10)
    mutate, words = BAD_TRACES[case]
    mutate(chunk)
    before = _counts()
    r = _post(anon, TRACE, key, chunk)
    assert r.status_code == 422, r.text
    assert words in json.dumps(r.json())
    assert _counts() == before


def test_too_many_trace_records_is_422(anon, key) -> None:
    chunk = make_trace_chunk(records=1)
    for col in chunk["records"].values():
        col *= 200_001
    r = _post(anon, TRACE, key, chunk)
    assert r.status_code == 422 and "200000" in r.text


def test_uploads_need_a_live_agent_key(account, anon, key) -> None:
    snap = make_snapshot()
    assert anon.post(SNAP, json=snap).status_code == 401
    assert _post(anon, SNAP, "hca_" + "x" * 43, snap).status_code == 401
    assert _post(anon, SNAP, account.api_token(), snap).status_code == 403
    # a browser session is not an agent either
    r = account.post(SNAP, content=json.dumps(snap), headers={"Content-Type": "application/json"})
    assert r.status_code == 401
    key_id = account.get("/api/v1/agent-keys").json()[0]["id"]
    assert account.delete(f"/api/v1/agent-keys/{key_id}").status_code == 204
    assert _post(anon, SNAP, key, snap).status_code == 401


def test_broker_down_still_accepts_and_leaves_row_pending(monkeypatch, account) -> None:
    import socket

    from fastapi.testclient import TestClient

    from conftest import _fresh_app
    from hitcurve.core import tasks

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = s.getsockname()[1]
    key = account.agent_key()
    monkeypatch.setenv("HITCURVE_REDIS_URL", f"redis://127.0.0.1:{dead}/0")
    monkeypatch.setattr(tasks, "_down_until", 0.0)
    try:
        with TestClient(_fresh_app()) as c:
            snaps = [make_snapshot() for _ in range(3)]
            for snap in snaps:
                r = _post(c, SNAP, key, snap)
                assert r.status_code == 202, r.text
            r = _post(c, TRACE, key, make_trace_chunk())
            assert r.status_code == 202
        with get_sessionmaker()() as db:
            for snap in snaps:
                row = db.get(Snapshot, uuid.UUID(snap["snapshot_id"]))
                assert row is not None and row.status == "pending" and row.enqueued_at is None
    finally:
        monkeypatch.undo()
        tasks._down_until = 0.0
        _fresh_app()


@pytest.mark.parametrize(
    ("backing_off", "accepted", "recorded"),
    [
        (False, True, True),  # usual case: written with the row, kept
        (False, False, False),  # publish failed: cleared again
        (True, True, True),  # stored without it (broker thought down), recorded once accepted
        (True, False, False),
    ],
)
def test_snapshot_enqueued_at_tells_whether_the_broker_took_it(
    anon, key, monkeypatch, backing_off, accepted, recorded
) -> None:
    from hitcurve.crud import ingest, ingest_group

    published: list[str] = []

    def fake_request_drain() -> bool:
        published.append("drain")
        return accepted

    for stores in (ingest, ingest_group):  # a batch, and an upload stored alone
        monkeypatch.setattr(stores, "request_drain", fake_request_drain)
        monkeypatch.setattr(stores, "broker_backing_off", lambda: backing_off)
    snap = make_snapshot("10.7.7.7:11211")
    assert _post(anon, SNAP, key, snap).status_code == 202
    assert published == ["drain"]
    with get_sessionmaker()() as db:
        row = db.get(Snapshot, uuid.UUID(snap["snapshot_id"]))
        assert row is not None and row.status == "pending"
        assert (row.enqueued_at is not None) == recorded


# --- stats-only windows (memcached refused `watch`) ---------------------------------
def test_stats_only_snapshot_is_stored_with_its_basis_and_model(anon, key) -> None:
    snap = make_stats_only_snapshot("10.15.0.1:11211")
    r = _post(anon, SNAP, key, snap)
    assert r.status_code == 202, r.text
    watch = make_snapshot("10.15.0.2:11211")
    assert _post(anon, SNAP, key, watch).status_code == 202
    with get_sessionmaker()() as db:
        row = db.get(Snapshot, uuid.UUID(snap["snapshot_id"]))
        assert row is not None and row.basis == "stats_only"
        assert row.stats_model is not None and row.stats_model["fitted"] is True
        assert row.stats_model["points"] == snap["stats_model"]["points"]
        assert row.stats_model["current_items"] == 400_000.0
        other = db.get(Snapshot, uuid.UUID(watch["snapshot_id"]))
        assert other is not None and other.basis == "watch" and other.stats_model is None


def _stats_only_case(edit: Any) -> dict[str, Any]:
    s = make_stats_only_snapshot("10.15.0.3:11211")
    edit(s)
    return s


@pytest.mark.parametrize(
    "edit,words",
    [
        (lambda s: s.pop("stats_model"), "stats_model is required"),
        (lambda s: s.update(classes=make_snapshot()["classes"]), "classes must be empty"),
        (lambda s: s["stats_model"].pop("points"), "a fitted model needs points"),
        (lambda s: s["stats_model"].update(points=s["stats_model"]["points"][:50]), "expected exactly 100"),
        (lambda s: s["stats_model"]["points"][10].__setitem__(1, 0.0), "non-decreasing"),
        (
            lambda s: s["stats_model"].update(
                points=s["stats_model"]["points"][:19]
                + [[p[0] / 10, p[1]] for p in s["stats_model"]["points"][19:]]
            ),
            "strictly increasing",
        ),
        (lambda s: s.update(basis="watch"), "only sent with basis stats_only"),
        (lambda s: s.update(basis="guess"), "basis"),
        (lambda s: s["stats_model"].update(model="lru"), "model"),
    ],
)
def test_bad_stats_only_snapshot_gets_a_specific_422_and_stores_nothing(edit, words, anon, key) -> None:
    before = _counts()
    r = _post(anon, SNAP, key, _stats_only_case(edit))
    assert r.status_code == 422, r.text
    assert words in r.text
    assert _counts() == before


def test_unfitted_stats_only_snapshot_is_stored(anon, key) -> None:
    snap = make_stats_only_snapshot("10.15.0.4:11211", fitted=False)
    assert "points" not in snap["stats_model"]
    assert _post(anon, SNAP, key, snap).status_code == 202
