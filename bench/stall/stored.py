"""A poisoned stored snapshot for the stall benchmark (bench/stall/run.sh): breakdown windows of a
server of their own whose stored uploads (snapshots.payload_gzip) are rewritten to cost seconds
to decode, and viewers that read that server's breakdown in a loop meanwhile. A read path that
decodes stored uploads stalls the API (and /health) for everyone; one that reads the rows
extracted at ingest does not.

    poison(base, agent_key, database_url) -> server id     viewers(...) -> view latencies (s)
"""

from __future__ import annotations

import contextlib
import gzip
import json
import threading
import time
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from sqlalchemy import create_engine, text

from hitcurve_testing.snapshots import add_breakdown, make_snapshot

ADDRESS = "10.99.0.1:11211"
WINDOWS = 4  # the newest three loss-flagged: a reader of stored uploads decodes all four
ITEMS = 1_000_000  # ~16 MiB of ignored JSON per payload in ~60 KB of gzip
VIEWERS = 4


def _poisoned(doc: dict[str, Any]) -> bytes:
    heavy = dict(doc, diagnostics={"padding": [{"a": i % 7, "b": [i % 3]} for i in range(ITEMS)]})
    return gzip.compress(json.dumps(heavy, separators=(",", ":")).encode(), compresslevel=9)


def poison(base: str, agent_key: str, token: str, database_url: str) -> str:
    """Upload WINDOWS breakdown windows for ADDRESS, rewrite their stored payloads; the server id."""
    now = datetime.now(UTC).replace(microsecond=0)
    engine = create_engine(database_url)
    with httpx.Client(base_url=base, timeout=60) as c:
        for i in range(WINDOWS):
            end = now - timedelta(minutes=WINDOWS - i)
            snap = add_breakdown(make_snapshot(ADDRESS, seed=40 + i, end=end))
            if i > 0:
                snap["loss"].update(loss_ratio=0.2, flagged=True)
            r = c.post("/api/v1/agent/snapshots", json=snap, headers={"Authorization": f"Bearer {agent_key}"})
            r.raise_for_status()
            with engine.begin() as db:
                db.execute(
                    text("UPDATE snapshots SET payload_gzip = :p WHERE id = :id"),
                    {"p": _poisoned(snap), "id": snap["snapshot_id"]},
                )
        servers = c.get("/api/v1/servers", headers={"Authorization": f"Bearer {token}"}).json()
    engine.dispose()
    return str(next(s["id"] for s in servers if s["address"] == ADDRESS))


def viewers(
    base: str, token: str, server_id: str, until: float
) -> tuple[list[threading.Thread], list[float]]:
    """VIEWERS threads reading the poisoned server's breakdown until `until` (started)."""
    out: list[float] = []

    def view() -> None:
        with httpx.Client(base_url=base, timeout=60, headers={"Authorization": f"Bearer {token}"}) as c:
            while time.monotonic() < until:
                t = time.monotonic()
                with contextlib.suppress(httpx.HTTPError):  # counted with its full wait
                    c.get(f"/api/v1/servers/{server_id}/breakdown").raise_for_status()
                out.append(time.monotonic() - t)

    threads = [threading.Thread(target=view) for _ in range(VIEWERS)]
    for t in threads:
        t.start()
    return threads, out
