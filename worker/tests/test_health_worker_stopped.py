"""/health while a real worker is stopped: a worker that still looks alive (its heartbeat has not
expired yet) but drains nothing makes /health degraded, saying why, once an upload has waited
longer than Settings.drain_stall_s with no snapshot processed meanwhile; when the worker goes
on, the waiting upload gets its curve and /health is ok again. Before, /health said ok for as
long as the heartbeat lived while no curve was made (after a worker crash, the drain flag's 31 s).

The worker is stopped with SIGSTOP (its whole process group: main process and pool), so it
neither drains nor refreshes its heartbeat; the heartbeat is given a long life here so that the
drain rule, not the heartbeat's expiry, is what /health reports."""

from __future__ import annotations

import os
import signal
import time
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import select, text
from worker_helpers import Org, start_worker, upload, wait_for

from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import Snapshot
from hitcurve_testing.snapshots import synthetic_snapshot

pytestmark = [pytest.mark.live, pytest.mark.slow]

STALL_S = 4.0  # Settings.drain_stall_s for this test (15 s by default)
HEARTBEAT_LIFE_S = 600  # Settings.worker_stale_s, the worker's and the API's


def _status(sid: uuid.UUID) -> str:
    with get_sessionmaker()() as db:
        return str(db.execute(select(Snapshot.status).where(Snapshot.id == sid)).scalar_one())


def _snapshot(i: int) -> dict[str, Any]:
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=1)
    return synthetic_snapshot(
        address=f"10.6.1.{i}:11211", n_classes=6, total_pages=64, end=end, hit_ratio=0.7, seed=i
    )


def test_health_is_degraded_while_a_stopped_worker_drains_nothing(
    private_env: dict[str, str], client: Any, org: Org, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(get_settings(), "drain_stall_s", STALL_S)
    monkeypatch.setattr(get_settings(), "worker_stale_s", float(HEARTBEAT_LIFE_S))
    worker = start_worker(
        {**private_env, "HITCURVE_WORKER_STALE_S": str(HEARTBEAT_LIFE_S)}, "drain-stop", concurrency=1
    )
    # This session's database is shared with the tests that ran before this one in its process:
    # uploads they left pending (API tests with no worker) would keep /health's queue check
    # failing here for their age alone. They are set aside; this test's org has none yet.
    with get_sessionmaker()() as s:
        s.execute(
            text(
                "UPDATE snapshots SET status = 'parked'"
                " WHERE status IN ('pending', 'failed') AND org_id <> :o"
            ),
            {"o": org.id},
        )
        s.execute(
            text(
                "UPDATE trace_chunks SET status = 'parked'"
                " WHERE status IN ('pending', 'failed') AND org_id <> :o"
            ),
            {"o": org.id},
        )
        s.execute(
            text("UPDATE simulation_runs SET status = 'failed' WHERE status = 'pending' AND org_id <> :o"),
            {"o": org.id},
        )
        s.commit()
    stopped = False
    try:
        first = _snapshot(1)
        assert upload(client, org, first).status_code == 202
        wait_for(lambda: _status(uuid.UUID(first["snapshot_id"])) == "processed", what="the first curve")
        health = wait_for(
            lambda: (b := client.get("/api/v1/health").json())["status"] == "ok" and b,
            what="/health ok with the worker draining",
        )
        assert health["checks"]["workers"]["alive"] >= 1, health

        os.killpg(worker.proc.pid, signal.SIGSTOP)
        stopped = True
        second = _snapshot(2)
        assert upload(client, org, second).status_code == 202
        uploaded = time.monotonic()

        def degraded() -> Any:
            body = client.get("/api/v1/health").json()
            return body["status"] == "degraded" and body

        body = wait_for(degraded, what="/health degraded while the worker is stopped")
        waited = time.monotonic() - uploaded
        queue, workers = body["checks"]["queue"], body["checks"]["workers"]
        assert queue["ok"] is False and "no worker has drained" in queue["error"], body
        assert f"{STALL_S:g} s" in queue["error"], queue  # it says for how long
        assert workers["ok"] is True, workers  # the heartbeat still lives: the drain rule spoke
        assert waited >= STALL_S * 0.9, waited  # not before the upload has waited that long
        assert _status(uuid.UUID(second["snapshot_id"])) == "pending"

        os.killpg(worker.proc.pid, signal.SIGCONT)
        stopped = False
        wait_for(lambda: _status(uuid.UUID(second["snapshot_id"])) == "processed", what="the second curve")
        wait_for(lambda: client.get("/api/v1/health").json()["status"] == "ok", what="/health ok again")
    finally:
        if stopped:
            os.killpg(worker.proc.pid, signal.SIGCONT)
        worker.stop()
