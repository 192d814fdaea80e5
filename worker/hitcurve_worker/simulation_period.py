"""The period a policy simulation replays, and what its figures cover (shown with every run).

A policy comparison on traffic recorded while memcached was still filling compares cold misses:
every key is new, every policy misses it, and the curves meet (a demo run read "82 % ±0 pp" for
nine policies). So a run replays only the sampled requests since memcached last became full in
its window (snapshots.memory_full, the agent's fill at each window's end: the first full window
after the newest one still filling), and the simulated caches, which start empty, are warmed on
the first SIM_WARMUP of those requests before anything is counted.
"""

from __future__ import annotations

import uuid
from collections.abc import Sequence
from datetime import datetime

from sqlalchemy import text
from sqlalchemy.orm import Session

from hitcurve_worker.reliability import PoisonInput

# Share of the replayed (sampled) requests that warms the simulated caches and is not counted.
SIM_WARMUP = 0.2

RECOMPUTE = (
    "recompute time: the summed delay between each miss and its refill (measured by the agent per "
    "sampled key: miss to the client's set), over the misses the policy has in the counted requests, "
    "scaled by 1/R to all requests of the period"
)

# Per server: the newest window still filling in [start, end), then the first full one after it.
_FILLED = text(
    "SELECT s.sid, (SELECT max(window_end) FROM snapshots WHERE org_id = :o AND server_id = s.sid"
    " AND window_end > :a AND window_end <= :b AND memory_full IS false) AS filling,"
    " (SELECT count(*) FROM snapshots WHERE org_id = :o AND server_id = s.sid"
    " AND window_end > :a AND window_end <= :b AND memory_full IS NOT NULL) AS known"
    " FROM unnest(CAST(:s AS uuid[])) AS s(sid)"
)
_FIRST_FULL = text(
    "SELECT min(window_end) FROM snapshots WHERE org_id = :o AND server_id = :sid"
    " AND window_end > :a AND window_end <= :b AND memory_full IS true"
)


def filled_since(
    db: Session, org_id: uuid.UUID, servers: Sequence[uuid.UUID], start: datetime, end: datetime
) -> tuple[datetime | None, str | None]:
    """When the subject's memcached (every server of a cluster) was full from on within the run's
    window, and a note; None: no agent reported its fill (older agents), the whole window is
    replayed. PoisonInput when memcached was filling until the window's end."""
    latest: datetime | None = None
    unknown = 0
    for r in db.execute(_FILLED, {"o": org_id, "s": list(servers), "a": start, "b": end}):
        if not r.known:
            unknown += 1
            continue
        since = r.filling or start
        full = db.execute(_FIRST_FULL, {"o": org_id, "sid": r.sid, "a": since, "b": end}).scalar_one_or_none()
        if full is None:
            raise PoisonInput(
                "memcached was still filling until the end of the window (no full window after "
                f"{since.isoformat()}): a policy comparison on its warm-up compares cold misses only; "
                "run it again once memcached is full"
            )
        latest = full if latest is None else max(latest, full)
    if latest is None:
        return None, "the agent does not report memcached's fill: the whole window is replayed, warm-up too"
    note = None
    if latest > start:
        at = latest.isoformat(timespec="seconds")
        note = f"replayed from {at}, when memcached was full (its warm-up left out)"
    if unknown:
        note = (note or "") + f"; {unknown} server(s) do not report their fill"
    return latest, note
