"""What one snapshot task costs the worker without Celery: the task's whole path (in-order
check, attempt claim, processing, commit; hitcurve.process_snapshot's body) run in this process on
real PostgreSQL, for servers x windows stored snapshots of 30 classes a minute apart. Printed: this
process's CPU and the wall time per task, per round. Set against the fleet's worker CPU per curve
(bench/fleet/run.sh), the difference is what the Celery worker adds around each task (message,
prefork hand-off, result, logging). Needs HITCURVE_DATABASE_URL of a migrated private instance
(e.g. `scripts/services.sh start test` then `alembic upgrade head`).
--mode both alternates rounds of that path with rounds of hitcurve.drain_snapshots' body (claims of
up to 50 pending snapshots, one per server, each batch one transaction; drain_tasks.drain) on the
same kind of data, for an A/B at equal load.
Also printed: PostgreSQL's CPU per snapshot (every process of the instance: backends, WAL writer,
checkpointer; so run it on a private instance nothing else uses), and the round trips to
PostgreSQL per snapshot (statements sent through SQLAlchemy, an executemany counted once: psycopg
pipelines it; and the commits), so the SQL of a change is counted as well as timed (fifth pass).
Usage: .venv/bin/python bench/fleet/task_cost.py [--servers 6] [--windows 10] [--rounds 3]
       [--mode task|drain|both]"""

import argparse
import json
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from fleet import children, cpu_seconds
from sqlalchemy import event, text

from hitcurve.core.db import get_engine
from hitcurve.core.principal import Principal
from hitcurve.crud.ingest import store_snapshot
from hitcurve.schemas import agent as proto
from hitcurve_testing.snapshots import make_snapshot
from hitcurve_worker import snapshot_tasks as st
from hitcurve_worker.drain_tasks import drain


def stored(org: uuid.UUID, servers: int, windows: int, batch: int) -> list[tuple[str, str]]:
    """servers x windows pending snapshots (new servers per batch); (id, window end) each, in
    the order their uploads arrived."""
    agent = Principal(kind="agent_key", org_id=org)
    start = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=windows + 5)
    out = []
    for w in range(windows):
        for s in range(servers):
            doc = make_snapshot(
                f"10.{batch}.{s}.1:11211", n_classes=30, end=start + timedelta(minutes=w), seed=s
            )
            raw = json.dumps(doc)
            snap = proto.Snapshot.model_validate_json(raw)
            store_snapshot(agent, snap, raw)
            out.append((doc["snapshot_id"], snap.window.end.isoformat()))
    return out


def postgresql_cpu_s() -> float:
    """CPU seconds of the instance's processes so far: the postmaster's children (this machine's
    /proc; the database must run here), as bench/fleet/fleet.py counts them."""
    with get_engine().connect() as conn:
        backend = int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())
    postmaster = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
    return cpu_seconds(children([postmaster]))


class RoundTrips:
    """Statements and commits through the engine's connections while counting."""

    def __init__(self, engine: Any) -> None:
        self.statements = self.commits = 0
        event.listen(engine, "before_cursor_execute", self._statement)
        event.listen(engine, "commit", self._commit)

    def _statement(self, *_: Any) -> None:
        self.statements += 1

    def _commit(self, *_: Any) -> None:
        self.commits += 1

    def take(self) -> tuple[int, int]:
        out = (self.statements, self.commits)
        self.statements = self.commits = 0
        return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--servers", type=int, default=6)
    ap.add_argument("--windows", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--mode", choices=("task", "drain", "both"), default="task")
    a = ap.parse_args()
    org = uuid.uuid4()
    with get_engine().begin() as c:
        c.execute(text("INSERT INTO organizations (id, name) VALUES (:o, 'task cost')"), {"o": org})
    trips = RoundTrips(get_engine())
    modes = ["task", "drain"] if a.mode == "both" else [a.mode]
    for batch in range(1, a.rounds * len(modes) + 1):
        mode = modes[(batch - 1) % len(modes)]
        tasks = stored(org, a.servers, a.windows, batch)
        trips.take()
        c0, w0, p0 = time.process_time(), time.perf_counter(), postgresql_cpu_s()
        n = len(tasks)
        if mode == "task":
            for sid, end in tasks:
                assert st.process_snapshot.run(sid, end)["status"] == "processed"
        else:  # (a database with other pending snapshots: they are drained and counted too)
            n = drain()["processed"]
            assert n >= len(tasks), n
        cpu = (time.process_time() - c0) / n * 1e3
        wall = (time.perf_counter() - w0) / n * 1e3
        pg = (postgresql_cpu_s() - p0) / n * 1e3
        statements, commits = trips.take()
        print(
            f"round {batch} ({mode}): {n} snapshots, CPU {cpu:.2f} ms each (PostgreSQL {pg:.2f} ms),"
            f" wall {wall:.2f} ms,"
            f" {statements / n:.2f} statements and {commits / n:.2f} commits each"
        )


if __name__ == "__main__":
    main()
