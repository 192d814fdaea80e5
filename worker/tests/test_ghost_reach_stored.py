"""The agent's per-class ghost reach and filters (`curve.ghost_reach_items`, `curve.ghost_filters`)
travel from the upload through the stored classes (snapshots.classes) to the worker (they had no columns: the
worker's calibration never carried ghost_reach_bytes outside the TTL path, so a flat tail past the
ghost's reach read as a measured plateau). Real backend, real PostgreSQL, the worker's own task in
process (hitcurve_worker.snapshot_tasks.process); the answers' rules are test_ghost_reach's."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from types import SimpleNamespace
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select
from test_sizing_basis import process, read_token, server_id
from worker_helpers import Org, upload

from hitcurve.core.db import get_sessionmaker
from hitcurve.ingest.classpack import unpack
from hitcurve.models import ServerCurve, Snapshot
from hitcurve_testing.snapshots import make_snapshot

REACH = 1.25  # the ghost sees 1.25 N in every class (its curve runs to 2 N)
FILTERS = 33


def _ghost_still_filling(doc: dict[str, Any]) -> dict[str, Any]:
    """Each class as the agent sends it while its ghost fills: the reach and filters said, the
    points past the reach held flat at the reach's hit ratio."""
    for c in doc["classes"]:
        curve = c["curve"]
        reach = int(REACH * curve["current_items"])
        flat = max(y for x, y in curve["points"] if x <= reach)
        curve["points"] = [[x, y if x <= reach else flat] for x, y in curve["points"]]
        curve["ghost_reach_items"] = reach
        curve["ghost_filters"] = FILTERS
    return doc


def test_the_ghost_reach_sent_reaches_the_calibration_and_the_answer(client: Any, org: Org) -> None:
    from hitcurve.sizing.cache import basis_cache
    from hitcurve_worker import snapshot_loads
    from hitcurve_worker.merge import class_from_protocol
    from hitcurve_worker.snapshot_tasks import _classes

    token = read_token(org)
    h = {"Authorization": f"Bearer {token}"}
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=4)
    address = f"10.14.7.1:{uuid.uuid4().int % 60000}"
    docs = [
        _ghost_still_filling(make_snapshot(address, end=end + timedelta(minutes=m), hit_ratio=0.7))
        for m in range(3)
    ]
    for doc in docs:
        assert upload(client, org, doc).status_code == 202
        assert process(doc["snapshot_id"])["status"] == "processed"
    last = docs[-1]
    sid_uuid = uuid.UUID(last["snapshot_id"])
    with get_sessionmaker()() as db:
        packed = db.scalar(select(Snapshot.classes).where(Snapshot.id == sid_uuid))
        stored = [(c.class_id, c.ghost_reach_items, c.ghost_filters) for c in unpack(packed or b"")]
        assert stored == [
            (c["id"], c["curve"]["ghost_reach_items"], FILTERS) for c in last["classes"]
        ]
        # the worker's classes from the rows are the bench's from the JSON (one ClassRow layout)
        window_end = datetime.fromisoformat(last["window"]["end"].replace("Z", "+00:00"))
        key = SimpleNamespace(id=sid_uuid, window_end=window_end)
        from_rows = _classes(snapshot_loads.class_rows(db, [key])[sid_uuid])
        from_json = [class_from_protocol(c) for c in last["classes"]]
        for a, b in zip(from_rows, from_json, strict=True):
            assert (a.class_id, a.ghost_reach_items, a.ghost_filters) == (
                b.class_id,
                b.ghost_reach_items,
                b.ghost_filters,
            )
            assert np.array_equal(a.sizes, b.sizes) and np.array_equal(a.hits, b.hits)
        curve = db.execute(select(ServerCurve).where(ServerCurve.snapshot_id == sid_uuid)).scalar_one()
        today = float(curve.current_bytes)
        reach_bytes = curve.calibration["ghost_reach_bytes"]
        # on the calibrated axis: above today's memory the calibration moves the ghost's sizes by
        # a fixed offset (calibrate.py, ghost_above), so the reach moves by it too
        offset = curve.calibration["offset_above_bytes"]
        assert offset is not None and curve.calibration["method"] == "size-scale"
        assert offset == pytest.approx((curve.calibration["scale"] - 1) * today)
        assert reach_bytes == pytest.approx(REACH * today - offset, rel=1e-3), (reach_bytes, today)
        assert curve.calibration["ghost_filters"] == FILTERS
        top = float(curve.sizes_bytes[-1])
    assert top > 1.4 * reach_bytes  # the curve runs past the reach (held flat there)

    basis_cache().clear()
    sid = server_id(client, token, address)
    # a target beyond what the ghost has seen: unknown until it sees further (the flat part past
    # the reach is held, not measured), neither a bound nor "unreachable"
    a = client.get(
        f"/api/v1/sizing/servers/{sid}/memory", params={"target_hit_ratio": 0.99}, headers=h
    ).json()
    assert a["status"] == "unknown", a
    assert a["memory_bytes"] is None and a["memory_bytes_at_least"] is None
    assert a["seen_up_to_bytes"] == pytest.approx(reach_bytes, abs=1.0)
    assert "unknown until the agent has seen further" in a["unknown_until"]
    assert "-m " not in a["message"] and "more than" not in a["message"], a["message"]
    # memory past the reach: the hit rate there is at least the flat tail's
    r = client.get(
        f"/api/v1/sizing/servers/{sid}/hit-ratio", params={"memory_bytes": int(1.6 * today)}, headers=h
    ).json()
    assert r["status"] == "above_curve", r
    assert "ghost sees so far" in r["message"]
