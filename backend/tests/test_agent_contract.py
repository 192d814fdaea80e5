"""The agent protocol as a checked contract: the real C agent, beside a real memcached under
load, writes its snapshots and trace chunks (--snapshot-dir); each goes through the backend's
Pydantic model (hitcurve.ingest.uploads.parse) and the real upload path (POST /api/v1/agent/...:
decoder, hitcurve.crud.ingest) into PostgreSQL.

Fails when a field the agent writes is dropped by the backend's model (every JSON key,
recursively, must be a model field or one of schemas.agent.PAYLOAD_ONLY, which are kept in the
stored payload), when a field the model requires is missing (the parse fails), or when a stored
column differs from what the agent wrote. The first tests show the check itself can fail.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import typing
import uuid
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from pydantic import BaseModel, create_model

from conftest import bearer
from hitcurve.core.db import get_sessionmaker
from hitcurve.ingest.classpack import unpack
from hitcurve.ingest.tracecodec import decode_records
from hitcurve.ingest.uploads import parse
from hitcurve.models import Server, Snapshot, TraceChunk
from hitcurve.schemas import agent as proto

HARNESS = Path(__file__).resolve().parents[2] / "profiler-agent" / "tests" / "agent"


# --- the check --------------------------------------------------------------------------------
def _models(annotation: Any) -> list[type[BaseModel]]:
    """The Pydantic models inside an annotation (through Optional, list, Annotated, tuple)."""
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return [annotation]
    return [m for arg in typing.get_args(annotation) for m in _models(arg)]


def dropped_fields(doc: dict[str, Any], model: type[BaseModel], path: str = "") -> set[str]:
    """Paths of the keys in `doc` that `model` has no field for, recursively ("classes[].x")."""
    out: set[str] = set()
    for key, value in doc.items():
        where = f"{path}.{key}" if path else key
        field = model.model_fields.get(key)
        if field is None:
            out.add(where)
            continue
        inner = _models(field.annotation)
        if not inner:
            continue
        items, where = (value, f"{where}[]") if isinstance(value, list) else ([value], where)
        for item in items:
            if isinstance(item, dict):
                out |= dropped_fields(item, inner[0], where)
    return out


def unexplained(doc: dict[str, Any], model: type[BaseModel]) -> set[str]:
    """Dropped fields that PAYLOAD_ONLY does not name (a listed key covers its subtree)."""
    return {
        p
        for p in dropped_fields(doc, model)
        if not any(p == k or p.startswith(k + ".") for k in proto.PAYLOAD_ONLY)
    }


def _without(model: type[BaseModel], name: str) -> type[BaseModel]:
    """A copy of `model` without the field `name`, as a careless edit of the schema would leave."""
    fields: dict[str, Any] = {k: (f.annotation, f) for k, f in model.model_fields.items() if k != name}
    return create_model(f"{model.__name__}Without_{name}", __config__=model.model_config, **fields)


# --- the check can fail -----------------------------------------------------------------------
AGENT_LIKE = {
    "measured": {"cmd_get": 5, "get_expired": 1},
    "classes": [{"id": 1, "requests": 3, "hits_observed": 2}],
    "diagnostics": {"anything": {"deep": 1}},
    "brand_new": 1,
}


def test_check_finds_a_field_the_model_drops() -> None:
    assert dropped_fields(AGENT_LIKE, proto.Snapshot) == {
        "measured.get_expired",
        "classes[].hits_observed",
        "diagnostics",
        "brand_new",
    }
    assert unexplained(AGENT_LIKE, proto.Snapshot) == {"brand_new"}
    # a field removed from a copy of the model is reported, at any depth
    measured = _without(proto.Measured, "cmd_set")
    assert dropped_fields({"cmd_set": 1, "cmd_get": 2}, measured) == {"cmd_set"}
    slab = _without(proto.SlabClass, "requests")
    snapshot = create_model(
        "SnapshotCopy",
        __config__=proto.Snapshot.model_config,
        classes=(list[slab], ...),  # type: ignore[valid-type]
    )
    assert dropped_fields({"classes": [{"id": 1, "requests": 3}]}, snapshot) == {"classes[].requests"}


def test_check_finds_a_required_field_missing() -> None:
    """A field the model requires and the agent does not write fails the parse (422, named)."""
    stricter = create_model(
        "MeasuredPlus",
        __base__=proto.Measured,
        get_touched=(int, ...),
    )
    doc = {
        "cmd_get": 1,
        "get_hits": 1,
        "get_misses": 0,
        "cmd_set": 0,
        "evictions": 0,
        "bytes": 1,
        "curr_items": 1,
        "hit_ratio": 1.0,
    }
    proto.Measured.model_validate(doc)
    with pytest.raises(ValueError, match="get_touched"):
        stricter.model_validate(doc)


def test_payload_only_fields_are_documented_and_not_modelled() -> None:
    text = (Path(__file__).resolve().parents[2] / "docs" / "agent-protocol.md").read_text()
    for path in proto.PAYLOAD_ONLY:
        last = path.rsplit(".", 1)[-1]
        assert re.search(rf"`([\w.]*\.)?{last}\b", text), f"{path} is not in docs/agent-protocol.md"
        # a listed field that the model reads after all is no longer payload-only: fix the list
        probe: dict[str, Any] = {}
        node: Any = probe
        parts = path.replace("[]", "").split(".")
        for part in parts[:-1]:
            node[part] = [{}] if f"{part}[]" in path else {}
            node = node[part][0] if isinstance(node[part], list) else node[part]
        node[parts[-1]] = 0
        assert dropped_fields(probe, proto.Snapshot) == {path}, path


# --- the real agent ---------------------------------------------------------------------------
@pytest.fixture(scope="module")
def agent_output(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Snapshots and trace chunks of a live run: the agent beside memcached (16 MiB, so classes
    evict) under a Zipf load from loadgen, until two windows with reads were written."""
    sys.path.insert(0, str(HARNESS))
    from agent_harness import Agent, Memcached, kill_leftovers, loadgen_bin

    tmp = tmp_path_factory.mktemp("contract")
    mc = Memcached(mem_mb=16)
    try:
        agent = Agent(tmp, mc.addr, "--interval", "1", "--trace-rate", "0.5", "--hot-keys-clear", "1")
        agent.wait_log("watch_connected", timeout=120)
        load = ["--dist", "zipf", "--alpha", "0.9", "--keys", "40000", "--value-size", "400"]
        for seed in (3, 4):  # two bursts: at least two windows see reads, whatever the timing
            subprocess.run(
                [loadgen_bin(), "--server", mc.addr, *load, "--requests", "60000", "--seed", str(seed)],
                check=True,
                capture_output=True,
            )
            n = agent.log().count("msg=window")
            agent.wait_log("msg=window", count=n + 2, timeout=300)
        assert agent.stop() == 0
    finally:
        mc.stop()
        kill_leftovers()
    return agent.snap_dir


def _files(d: Path, kind: str) -> list[Path]:
    return sorted(d.glob(f"{kind}-*.json"))


@pytest.mark.live
def test_every_agent_snapshot_fits_the_model_and_is_stored_as_written(
    account, agent_output: Path, keep_payloads: None
) -> None:
    files = _files(agent_output, "snapshot")
    docs = [json.loads(f.read_bytes()) for f in files]
    assert any(d["measured"]["cmd_get"] > 0 and d["classes"] for d in docs), "no window saw reads"
    key = account.agent_key()
    for f, doc in zip(files, docs, strict=True):
        raw = f.read_bytes()
        snap: proto.Snapshot = parse(raw, proto.Snapshot)  # a required field missing: 422 here
        assert unexplained(doc, proto.Snapshot) == set(), f"{f.name}: fields the backend model drops"
        # and on this real document, a model that lost a field is caught
        assert unexplained(doc, _without(proto.Snapshot, "loss")) == {"loss"}
        r = account.client.post(
            "/api/v1/agent/snapshots",
            content=raw,
            headers={**bearer(key), "Content-Type": "application/json"},
        )
        assert r.status_code == 202, (f.name, r.text)
        _check_stored_snapshot(doc, snap)
        # the ghost's resolution is reported (the band reads it): on the agent's defaults, K = 5,
        # F = 1 + 8 (K - 1) filters (profiler-agent/src/core/profile.h, hc_ghost_filters_for)
        for d, c in zip(doc["classes"], snap.classes, strict=True):
            assert d["curve"]["ghost_filters"] == c.curve.ghost_filters == 1 + 8 * (5 - 1)
            # ...and whether every evicted key it lacks lies beyond K x N: then the
            # curve is measured to its end (the reach is K x N); it may have dropped keys beyond
            # K x N (a flush while the newer entries cover (K-1) x N), so dropped is any count
            curve = d["curve"]
            assert curve["ghost_complete"] is c.curve.ghost_complete
            assert curve["ghost_dropped_items"] == c.curve.ghost_dropped_items >= 0
            if curve["ghost_complete"]:
                assert curve["ghost_reach_items"] == pytest.approx(curve["points"][-1][0], abs=1)
            else:
                assert curve["ghost_reach_items"] <= curve["points"][-1][0] + 1
    # memcached started beside the agent here (no eviction before it attached): its classes'
    # ghosts hold every key it evicted (the dropping cases: profiler-agent/tests/test_profile.c)
    assert any(c["curve"]["ghost_complete"] for d in docs for c in d["classes"])
    # the TTL what-if: the agent's grid and each prefix's columns reach the model whole
    whatif = [(d, i) for d in docs for i, p in enumerate(d.get("prefixes") or []) if p.get("ttl_whatif")]
    assert whatif, "no window carried a prefix's ttl_whatif"
    for d, i in whatif:
        snap = parse(json.dumps(d).encode(), proto.Snapshot)
        tw = snap.prefixes[i].ttl_whatif if snap.prefixes else None
        assert tw is not None and snap.ttl_whatif_ttls_s == d["ttl_whatif_ttls_s"]
        assert len(tw.hit_ratio) == len(tw.live_byte_s) == len(d["ttl_whatif_ttls_s"]) + 1
        assert (list(tw.hit_ratio), list(tw.live_byte_s)) == (
            d["prefixes"][i]["ttl_whatif"]["hit_ratio"],
            d["prefixes"][i]["ttl_whatif"]["live_byte_s"],
        )
        assert unexplained(d, _without(proto.Snapshot, "ttl_whatif_ttls_s")) == {"ttl_whatif_ttls_s"}


def _check_stored_snapshot(doc: dict[str, Any], snap: proto.Snapshot) -> None:
    sid = uuid.UUID(doc["snapshot_id"])
    with get_sessionmaker()() as db:
        row = db.get(Snapshot, sid)
        assert row is not None
        payload = row.payload_gzip  # deferred: read while the session is open
        srv = db.get(Server, row.server_id)
        classes = unpack(row.classes or b"")  # deferred: read while the session is open
    # the whole document, PAYLOAD_ONLY fields included, is kept as written
    assert json.loads(gzip.decompress(payload)) == doc
    m, loss, s = doc["measured"], doc["loss"], doc["server"]
    at = datetime.fromisoformat
    assert (row.instance_id, row.limit_maxbytes, row.curve_points) == (
        s["instance_id"],
        s["limit_maxbytes"],
        doc["curve_points"],
    )
    assert (row.window_start, row.window_end) == (at(doc["window"]["start"]), at(doc["window"]["end"]))
    assert (row.cmd_get, row.get_hits, row.get_misses, row.bytes_used, row.curr_items) == (
        m["cmd_get"],
        m["get_hits"],
        m["get_misses"],
        m["bytes"],
        m["curr_items"],
    )
    assert row.measured_hit_ratio == m["hit_ratio"]
    assert (row.loss_ratio, row.flagged) == (loss["loss_ratio"], loss["flagged"])
    mem = doc.get("memory")
    if mem is not None:
        assert (row.total_malloced, row.memory_full, row.evictions_total) == (
            mem["total_malloced"],
            mem["full"],
            mem["evictions_total"],
        )
    assert srv is not None
    assert (srv.address, srv.version, srv.settings) == (s["address"], s["version"], s["settings"])
    assert (srv.hostname, srv.agent_version) == (doc["agent"]["hostname"], doc["agent"]["version"])
    assert [c.class_id for c in classes] == [c["id"] for c in doc["classes"]]
    for c, d in zip(classes, doc["classes"], strict=True):
        assert (c.chunk_size, c.pages, c.items, c.evictions, c.requests) == (
            d["chunk_size"],
            d["pages"],
            d["items"],
            d["evictions"],
            d["requests"],
        )
        assert c.current_items == d["curve"]["current_items"]
        # value for value: the packing is lossless on what the agent writes
        assert list(c.sizes_items) == [p[0] for p in d["curve"]["points"]]
        assert list(c.hit_ratios) == [p[1] for p in d["curve"]["points"]]
        ttl = d["curve"].get("ttl_points")
        assert (c.ttl_sizes_items, c.ttl_hit_ratios) == (
            (None, None) if ttl is None else ([p[0] for p in ttl], [p[1] for p in ttl])
        )
        assert (c.ghost_reach_items, c.ghost_filters) == (
            d["curve"].get("ghost_reach_items"),
            d["curve"].get("ghost_filters"),
        )
        cost = d.get("cost_us")
        if cost is not None:
            assert (c.cost_count, c.cost_mean_us, c.cost_p99_us) == (cost["count"], cost["mean"], cost["p99"])
    assert len(classes) == len(snap.classes)


@pytest.mark.live
def test_every_agent_trace_chunk_fits_the_model_and_is_stored_as_written(account, agent_output: Path) -> None:
    files = _files(agent_output, "trace")
    assert files, "the agent wrote no trace chunk"
    key = account.agent_key()
    for f in files:
        doc = json.loads(f.read_bytes())
        parse(f.read_bytes(), proto.TraceChunk)
        assert unexplained(doc, proto.TraceChunk) == set(), f"{f.name}: fields the backend model drops"
        r = account.client.post(
            "/api/v1/agent/traces",
            content=f.read_bytes(),
            headers={**bearer(key), "Content-Type": "application/json"},
        )
        assert r.status_code == 202, (f.name, r.text)
        with get_sessionmaker()() as db:
            row = db.get(TraceChunk, uuid.UUID(doc["chunk_id"]))
        assert row is not None
        assert (row.instance_id, row.seq, row.sample_rate) == (
            doc["server"]["instance_id"],
            doc["seq"],
            doc["sample_rate"],
        )
        rec = doc["records"]
        assert row.record_count == len(rec["ts_us"])
        got = decode_records(row.data)
        assert got["ts_us"].tolist() == rec["ts_us"]
        assert [f"{k:016x}" for k in got["key"].astype(np.uint64).tolist()] == [k.lower() for k in rec["key"]]
        for col in ("op", "size", "clsid", "ttl"):
            assert got[col].tolist() == rec[col], col
