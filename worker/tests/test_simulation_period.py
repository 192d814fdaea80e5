"""A policy simulation replays the period after memcached's warm-up (real PostgreSQL, the real
upload API): requests sampled while memcached was still filling are left out, the run says from
when it replays, and a window that is warm-up only is refused with the reason."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import select
from worker_helpers import Org, upload

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import Server, SimulationRun
from hitcurve_testing.snapshots import make_snapshot
from hitcurve_testing.workloads import zipf_keys
from hitcurve_worker.reliability import PoisonInput
from hitcurve_worker.simulation_tasks import load_trace

MINUTES = 10
FILLED_AT = 4  # windows 0..3 end with memcached still filling, 4.. full


def _chunk(address: str, start: datetime, seq: int, n: int = 4000) -> dict[str, Any]:
    keys = zipf_keys(3000, n, 1.0, seq)
    ops = np.random.default_rng(seq).choice([1, 2, 3], size=n, p=[0.7, 0.2, 0.1])
    t0 = int(start.timestamp() * 1e6)
    return {
        "schema_version": 1,
        "chunk_id": str(uuid.uuid4()),
        "server": {"address": address, "instance_id": "1795349000-4242"},
        "sample_rate": 0.1,
        "seq": seq,
        "start": start.isoformat(),
        "end": (start + timedelta(minutes=1)).isoformat(),
        "records": {
            "ts_us": [t0 + i * 10_000 for i in range(n)],
            "key": [f"{int(k):016x}" for k in keys],
            "op": [int(o) for o in ops],
            "size": [300 if o != 2 else 0 for o in ops],
            "clsid": [5] * n,
            "ttl": [-1] * n,
            "cost_us": [500.0 if o == 3 else None for o in ops],
        },
    }


def _server(client: Any, org: Org, filled_at: int | None) -> tuple[uuid.UUID, datetime]:
    """A server with MINUTES one-minute windows and trace chunks; memcached full from window
    filled_at on (None: never)."""
    address = f"10.7.0.1:{uuid.uuid4().int % 60000}"
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=MINUTES + 5)
    for i in range(MINUTES):
        full = filled_at is not None and i >= filled_at
        end = start + timedelta(minutes=i + 1)
        snap = make_snapshot(address, seed=i + 1, end=end, fill=1.0 if full else 0.6)
        assert upload(client, org, snap).status_code == 202
        chunk = _chunk(address, start + timedelta(minutes=i), i + 1)
        assert upload(client, org, chunk, "traces").status_code == 202
    with get_sessionmaker()() as db:
        q = select(Server.id).where(Server.org_id == org.id, Server.address == address)
        sid = db.execute(q).scalar_one()
    return sid, start


def _run(org: Org, server_id: uuid.UUID, start: datetime) -> SimulationRun:
    return SimulationRun(
        org_id=org.id,
        server_id=server_id,
        policies=["lru"],
        sizes_bytes=[1 << 20],
        window_start=start - timedelta(minutes=1),
        window_end=start + timedelta(minutes=MINUTES + 1),
    )


def test_the_warm_up_is_left_out_and_the_run_says_from_when(client: Any, org: Org) -> None:
    server_id, start = _server(client, org, FILLED_AT)
    with get_sessionmaker()() as db:
        trace = load_trace(db, _run(org, server_id, start))
    full_at = start + timedelta(minutes=FILLED_AT + 1)  # the first full window's end
    assert trace.start_us >= int(full_at.timestamp() * 1e6)
    assert trace.end_us < int((start + timedelta(minutes=MINUTES)).timestamp() * 1e6)
    # the requests of the full windows only: the chunks from the first full window's end on,
    # each 40 s of requests at the start of its minute
    assert abs(trace.span_seconds - ((MINUTES - FILLED_AT - 2) * 60 + 40)) < 1
    assert any(n.startswith(f"replayed from {full_at.isoformat(timespec='seconds')}") for n in trace.notes)
    assert trace.footprint_bytes > 0


def test_a_window_of_warm_up_only_is_refused(client: Any, org: Org) -> None:
    server_id, start = _server(client, org, None)
    refused = pytest.raises(PoisonInput, match="still filling until the end of the window")
    with get_sessionmaker()() as db, refused:
        load_trace(db, _run(org, server_id, start))
