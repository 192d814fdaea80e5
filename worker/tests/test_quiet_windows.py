"""Quiet windows end to end: uploads through the backend's agent API, a real Celery worker
computing the curves, and the sizing API answering. Traffic stops for two windows, then the agent
restarts and its first window lost 20 % of the events: the answers before, during and after stay
within 1 pp; the quiet windows are said so (servers list, curve page, answer) and never graded;
the window after them is graded against the last good curve, not the flat quiet one."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from worker_helpers import Org, WorkerProc, start_worker, upload, wait_for

from hitcurve.core.db import get_sessionmaker
from hitcurve.core.security import sha256_hex
from hitcurve.models import AccuracyRecord, ApiToken, Snapshot
from hitcurve_testing.snapshots import synthetic_snapshot

pytestmark = [pytest.mark.live, pytest.mark.slow]

MIB = 1 << 20
PAGES = 128  # today: 128 MiB


@pytest.fixture(scope="module")
def worker(private_env: dict[str, str]) -> Iterator[WorkerProc]:
    w = start_worker(private_env, "quiet")
    yield w
    w.stop()


def token(org: Org) -> str:
    secret = "hct_" + uuid.uuid4().hex + uuid.uuid4().hex
    with get_sessionmaker()() as db:
        db.add(
            ApiToken(org_id=org.id, name="t", scope="read", prefix=secret[:8], token_hash=sha256_hex(secret))
        )
        db.commit()
    return secret


def processed(snap: dict[str, Any]) -> None:
    sid = uuid.UUID(snap["snapshot_id"])

    def done() -> bool:
        with get_sessionmaker()() as db:
            return db.execute(select(Snapshot.status).where(Snapshot.id == sid)).scalar_one() == "processed"

    wait_for(done, what="snapshot processed")


@pytest.fixture
def no_answer_cache(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every answer from the database (the hot cache would keep one for 2 s)."""
    from hitcurve.core.config import get_settings

    monkeypatch.setenv("HITCURVE_HOT_CACHE_TTL_S", "0")
    get_settings.cache_clear()
    yield
    monkeypatch.undo()
    get_settings.cache_clear()


def test_quiet_and_lossy_windows_keep_the_answer(
    worker: WorkerProc, client: Any, org: Org, no_answer_cache: None
) -> None:
    auth = {"Authorization": f"Bearer {token(org)}"}
    address = "10.7.0.1:11211"
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)

    def window(
        minute: int, *, reads: int | None = None, loss: float = 0.0, scale: float = 1.0
    ) -> dict[str, Any]:
        # the same traffic every window (seed 5): a stationary workload
        snap = synthetic_snapshot(
            address=address, n_classes=12, total_pages=PAGES, end=end + timedelta(minutes=minute), seed=5
        )
        if reads is not None:  # traffic stopped: a few reads, nothing hits
            snap["measured"].update(cmd_get=reads, get_hits=0, get_misses=reads, hit_ratio=0.0)
            scale = 0.0
            for c in snap["classes"]:
                c["requests"] = 1
        for c in snap["classes"]:
            c["curve"]["points"] = [[x, y * scale] for x, y in c["curve"]["points"]]
        if loss:
            snap["loss"].update(loss_ratio=loss, flagged=True, worker_dropped=int(loss * 1_000_000))
        assert upload(client, org, snap).status_code == 202
        processed(snap)
        return snap

    def answers() -> tuple[dict[str, Any], dict[str, Any]]:
        base = f"/api/v1/sizing/servers/{sid}"
        at = client.get(f"{base}/hit-ratio", params={"memory_bytes": 2 * PAGES * MIB}, headers=auth)
        need = client.get(f"{base}/memory", params={"target_hit_ratio": 0.75}, headers=auth)
        assert at.status_code == need.status_code == 200, (at.text, need.text)
        return at.json(), need.json()

    good = [window(m) for m in range(5)]
    sid = next(s["id"] for s in client.get("/api/v1/servers", headers=auth).json() if s["address"] == address)
    before, need_before = answers()
    assert before["status"] == need_before["status"] == "ok"

    # Traffic stops for two windows.
    quiet = [window(5, reads=0), window(6, reads=12)]
    during, need_during = answers()
    assert abs(during["hit_ratio"] - before["hit_ratio"]) <= 0.01, (during, before)
    assert abs(need_during["memory_bytes"] / need_before["memory_bytes"] - 1) <= 0.01
    assert during["status"] == "ok" and "2 newer windows left out (quiet)" in during["message"]
    row = next(s for s in client.get("/api/v1/servers", headers=auth).json() if s["id"] == sid)
    assert row["quiet"] is True and row["status"] == "ok" and "quiet" in row["status_note"]
    merged = client.get(f"/api/v1/servers/{sid}/curve", headers=auth).json()["merged"]
    assert merged["snapshot_id"] == good[-1]["snapshot_id"]  # the chart draws the curve the answer uses
    assert "left out (quiet)" in merged["windows_note"]

    # The agent restarts: its first window lost 20 % of the events and reads 20 % low.
    window(7, loss=0.2, scale=0.8)
    after, need_after = answers()
    assert abs(after["hit_ratio"] - before["hit_ratio"]) <= 0.01, (after, before)
    assert abs(need_after["memory_bytes"] / need_before["memory_bytes"] - 1) <= 0.01
    assert "stream loss" in after["message"]
    assert need_after["recommended_memory_limit_bytes"] == need_before["recommended_memory_limit_bytes"]

    # Traffic is back: the next window is graded against the last good curve, not a quiet one.
    back = window(8)
    again, _ = answers()
    assert abs(again["hit_ratio"] - before["hit_ratio"]) <= 0.01
    assert client.get("/api/v1/servers", headers=auth).json()[0]["quiet"] is False
    with get_sessionmaker()() as db:
        quiet_ids = [uuid.UUID(s["snapshot_id"]) for s in quiet]
        graded = db.execute(
            select(func.count()).select_from(AccuracyRecord).where(AccuracyRecord.snapshot_id.in_(quiet_ids))
        ).scalar_one()
        assert graded == 0  # a hit ratio of a dozen reads says nothing about the curve
        rec = db.execute(
            select(AccuracyRecord).where(AccuracyRecord.snapshot_id == uuid.UUID(back["snapshot_id"]))
        ).scalar_one()
        assert str(rec.predicted_from_snapshot_id) == good[-1]["snapshot_id"]
        assert abs(rec.error_pp) < 1.0
