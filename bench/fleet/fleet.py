"""Fleet simulator: N simulated agents upload snapshots (20-40 slab classes, 100-point
curves, gzip at the agent's level, as the agent sends them; bench/fleet/bodies.py) at a jittered
interval, some also trace chunks, against the real stack (API, ingest and batch workers, beat,
PostgreSQL, Redis) that bench/fleet/run.sh starts. Prints, every `--report` seconds, the offered
and accepted uploads/s, curves/s, the queues' depths (messages: one drain stands for many
uploads), the pending uploads and the oldest; at the end sustained uploads/s, p50/p95/p99
upload->curve latency, CPU per upload of each process group and of this simulator itself, database
bytes per upload and per agent per day, and the loss check (every accepted upload stored; every
processed one exactly one curve).

Modes: `steady` (the load for --duration), `catch-up` (the ingest workers stopped at --stop-at
for --stop-for seconds under the same load, then started; waits until the backlog is gone).

Upload -> curve latency: from the moment the request was sent to the moment a poll (every
--poll seconds) finds the snapshot processed -- an upper bound, off by at most the poll period
(a poll asks about the POLL_IDS oldest uploads not yet found, by primary key; every
FULL_POLL_EVERY-th about all of them); `server` is processed_at - received_at in the database
(excludes the HTTP round trip and the processing itself).

The simulator shares the machine with the stack, so it is built to cost little (~0.3-0.6 ms of
CPU per upload here, against ~3-6 ms with httpx and per-upload serialisation and gzip): bodies
from pre-deflated class windows (bodies.py), a keep-alive HTTP/1.1 pool on httptools and uvloop
(http_pool.py), one cheap poll a second. Its own CPU is printed as its own line."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import heapq
import itertools
import json
import os
import random
import statistics
import subprocess
import sys
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pg_report
import psycopg
import redis
import uvloop
from bodies import Template, head_parts, make_templates, snapshot_body, trace_body
from http_pool import HttpError, Pool
from sqlalchemy import text

from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine

ROOT = Path(__file__).resolve().parents[2]

TABLES = (
    "snapshots",
    "server_curves",
    "accuracy_records",
    "cluster_curves",
    "trace_chunks",
    "alerts",
    "servers",
)
TICK = os.sysconf("SC_CLK_TCK")
# Unseen uploads a poll asks about (the oldest first: drains take the oldest pending window
# first); every FULL_POLL_EVERY-th poll asks about all of them.
POLL_IDS = 5000
FULL_POLL_EVERY = 10
# Agent headers besides the key and the idempotency key (profiler-agent/src/agent/upload.c).
AGENT_HEADERS = (
    b"Content-Type: application/json\r\nContent-Encoding: gzip\r\nUser-Agent: hitcurve-agent/0.1.0\r\n"
)


# --------------------------------------------------------------------------- the stack
def make_orgs(n: int, tag: str) -> list[str]:
    """n organizations with one agent key each, written directly (as make_org in the tests)."""
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.core.security import sha256_hex
    from hitcurve.models import AgentKey, Organization

    keys = []
    with get_sessionmaker()() as db:
        for i in range(n):
            secret = "hca_" + uuid.uuid4().hex + uuid.uuid4().hex
            org = Organization(name=f"fleet {tag} {i}")
            db.add(org)
            db.flush()
            db.add(AgentKey(org_id=org.id, name="fleet", prefix=secret[:8], key_hash=sha256_hex(secret)))
            keys.append(secret)
        db.commit()
    return keys


def parents() -> dict[int, int]:
    """Every process's parent (from /proc)."""
    parent: dict[int, int] = {}
    for p in Path("/proc").iterdir():
        if p.name.isdigit():
            try:
                fields = (p / "stat").read_text().rsplit(")", 1)[1].split()
                parent[int(p.name)] = int(fields[1])
            except (OSError, IndexError, ValueError):
                continue
    return parent


def children(pids: Iterable[int], parent: dict[int, int] | None = None) -> set[int]:
    """The processes and all their descendants (parent: a `parents()` table, else read now)."""
    parent = parents() if parent is None else parent
    out = set(pids)
    grew = True
    while grew:
        more = {c for c, pp in parent.items() if pp in out and c not in out}
        out |= more
        grew = bool(more)
    return out


def cpu_seconds(pids: Iterable[int]) -> float:
    total = 0
    for pid in pids:
        try:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            total += int(fields[11]) + int(fields[12])  # utime + stime
        except (OSError, IndexError, ValueError):
            continue
    return total / TICK


class Stack:
    """The supervised programs and services of the run's instance, for CPU accounting and the
    catch-up mode's stop/start."""

    def __init__(self, inst: str) -> None:
        self.inst = inst
        self.run = ROOT / ".run" / inst

    def ctl(self, *args: str) -> str:
        out = subprocess.run(
            ["bash", str(ROOT / "scripts/supervise.sh"), "ctl", self.inst, *args],
            capture_output=True,
            text=True,
            check=False,
        )
        return out.stdout

    def program_pid(self, name: str) -> int:
        try:
            return int(self.ctl("pid", name).strip() or 0)
        except ValueError:
            return 0

    def groups(self) -> dict[str, set[int]]:
        g: dict[str, set[int]] = {}
        pids = {name: self.program_pid(name) for name in ("api", "worker", "worker-batch", "beat")}
        table = parents()
        for name, pid in pids.items():
            g[name] = children([pid], table) if pid else set()
        # PostgreSQL: the parent of a backend is the postmaster; Redis names its own pid
        with get_engine().connect() as conn:
            backend = int(conn.execute(text("SELECT pg_backend_pid()")).scalar_one())
        postmaster = int(Path(f"/proc/{backend}/stat").read_text().rsplit(")", 1)[1].split()[1])
        g["postgresql"] = children([postmaster], table)
        r = redis.Redis.from_url(get_settings().redis_url)
        g["redis"] = {int(r.info("server")["process_id"])}
        r.close()
        g["load generator"] = children([os.getpid()], table)
        return g


# --------------------------------------------------------------------------- the run
@dataclass
class Stats:
    sent: dict[str, float] = field(default_factory=dict)  # snapshot id -> time sent
    accepted: set[str] = field(default_factory=set)
    # accepted and not yet found processed: id -> window end (the agent's clock), in sending order
    unseen: dict[str, float] = field(default_factory=dict)
    errors: dict[str, int] = field(default_factory=dict)
    seen: dict[str, float] = field(default_factory=dict)  # snapshot id -> latency (s)
    server_lag: dict[str, float] = field(default_factory=dict)  # processed_at - received_at (s)
    traces_sent: int = 0
    spooled: int = 0  # windows an agent could not send during the run (the API was saturated)
    traces_accepted: int = 0
    late_s: list[float] = field(default_factory=list)  # how late an upload was sent (due -> sent)
    # of which: the simulator's own lag (due -> its coroutine ran: this machine did not run the
    # generator on time) and the wait for a free connection (the stack answered slower than offered)
    own_late_s: list[float] = field(default_factory=list)
    conn_wait_s: list[float] = field(default_factory=list)
    polls: int = 0
    connections: int = 0  # HTTP connections the simulator opened (kept alive, reused)
    postgresql: dict[str, Any] = field(default_factory=dict)  # pg_report.end
    own_cpu: dict[str, float] = field(default_factory=dict)  # this process: user, system (s)
    series: list[dict[str, Any]] = field(default_factory=list)

    def error(self, what: str) -> None:
        self.errors[what] = self.errors.get(what, 0) + 1


@dataclass(slots=True)
class Agent:
    headers: bytes  # its key's header line and the agent's fixed headers
    address: str
    tpl: Template
    hit: float
    trace: bool
    window: int  # which of its shape's prepared windows comes next
    head: tuple[str, ...] = ()  # its document around snapshot_id and window (bodies.head_parts)
    seq: int = 0


def conninfo() -> str:
    """The instance's database URL for psycopg (the settings' URL names SQLAlchemy's driver)."""
    return get_settings().database_url.replace("postgresql+psycopg://", "postgresql://", 1)


async def run(args: argparse.Namespace) -> dict[str, Any]:
    s = get_settings()
    tag = uuid.uuid4().hex[:6]
    keys = make_orgs(args.orgs, tag)
    templates = make_templates(16, args.seed)
    rng = random.Random(args.seed)
    nrng = np.random.default_rng(args.seed)
    n = args.agents
    agents = [
        Agent(
            headers=f"Authorization: Bearer {keys[a % len(keys)]}\r\n".encode() + AGENT_HEADERS,
            address=f"10.{(a >> 16) & 255}.{(a >> 8) & 255}.{a & 255}:11211",
            tpl=templates[a % len(templates)],
            hit=0.5 + 0.45 * rng.random(),
            trace=rng.random() < args.trace_share,
            window=rng.randrange(1 << 16),
        )
        for a in range(n)
    ]
    for ag in agents:
        ag.head = head_parts(ag.tpl, ag.address, ag.hit)
    stack = Stack(args.instance)
    stats = Stats()
    red = redis.Redis.from_url(s.redis_url)
    engine = get_engine()
    sizes0 = table_bytes(engine)
    base = "/api/v1/agent"
    pool = Pool("127.0.0.1", args.port, timeout=120.0)
    sem = asyncio.Semaphore(args.connections)
    db = await psycopg.AsyncConnection.connect(conninfo(), autocommit=True)

    t_start = time.time()
    t_end = t_start + args.duration
    # first uploads spread over one interval (agents start at random times), then every
    # interval +- jitter
    heap = [(t_start + args.interval * rng.random(), a) for a in range(n)]
    heapq.heapify(heap)
    pending: set[asyncio.Task[None]] = set()
    busy: set[int] = set()

    async def post(a: int, due: float) -> None:
        ag = agents[a]
        ran = time.time()
        async with sem:
            if time.time() >= t_end:  # the run is over before a connection was free
                stats.spooled += 1
                return
            end = time.time()
            stats.own_late_s.append(ran - due)
            stats.conn_wait_s.append(end - ran)
            ag.window += 1
            sid, body = snapshot_body(
                ag.tpl, ag.address, end - args.interval, end, ag.hit, ag.window, ag.head
            )
            headers = ag.headers + f"Idempotency-Key: {sid}\r\n".encode()
            stats.late_s.append(end - due)
            stats.sent[sid] = time.time()
            try:
                status, _ = await pool.post(f"{base}/snapshots", body, headers)
                if status in (200, 202):
                    stats.accepted.add(sid)
                    stats.unseen[sid] = end
                else:
                    stats.error(str(status))
            except HttpError as exc:
                stats.error(f"{type(exc).__name__}: {str(exc).split(':')[0]}")
            if ag.trace:
                ag.seq += 1
                tb = trace_body(ag.address, ag.seq, end - args.interval, end, args.trace_records, nrng)
                stats.traces_sent += 1
                try:
                    status, _ = await pool.post(f"{base}/traces", tb, ag.headers)
                    stats.traces_accepted += status in (200, 202)
                except HttpError as exc:
                    stats.error(f"trace {type(exc).__name__}")

    poll_stop = asyncio.Event()
    # The poll: accepted uploads not yet found, by primary key and bounded on the partition column
    # (a few hundred index probes a second at the fleet's steady state; its rows are the stack's
    # CPU too, counted under PostgreSQL).
    found_q = (
        "SELECT id::text FROM snapshots WHERE id = ANY(CAST(%s AS uuid[])) AND window_end >= %s"
        " AND status = 'processed'"
    )

    async def poll_once() -> None:
        if not stats.unseen:
            return
        stats.polls += 1
        ids = (
            list(stats.unseen)
            if stats.polls % FULL_POLL_EVERY == 0
            else list(itertools.islice(stats.unseen, POLL_IDS))
        )
        for i in range(0, len(ids), POLL_IDS):
            chunk = ids[i : i + POLL_IDS]
            lo = datetime.fromtimestamp(min(stats.unseen[k] for k in chunk) - 1, UTC)
            # the ids as one array literal (psycopg adapts a list element by element, in Python)
            cur = await db.execute(found_q, ("{" + ",".join(chunk) + "}", lo))
            rows = await cur.fetchall()
            found = time.time()
            for (sid,) in rows:
                if stats.unseen.pop(sid, None) is not None:
                    stats.seen[sid] = found - stats.sent[sid]

    async def poller() -> None:
        """Find processed snapshots: latency = found - sent (upper bound, +- the poll period; for
        an upload beyond the POLL_IDS oldest unseen, +- FULL_POLL_EVERY polls)."""
        while not poll_stop.is_set():
            await poll_once()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(poll_stop.wait(), args.poll)

    async def reporter() -> None:
        last_t, last_sent, last_ok, last_seen = t_start, 0, 0, 0
        while not poll_stop.is_set():
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(poll_stop.wait(), args.report)
            now = time.time()
            dt = max(now - last_t, 1e-6)
            waiting, oldest = await oldest_pending(db)
            row = {
                "t": round(now - t_start),
                "offered/s": round((len(stats.sent) - last_sent) / dt, 1),
                "accepted/s": round((len(stats.accepted) - last_ok) / dt, 1),
                "curves/s": round((len(stats.seen) - last_seen) / dt, 1),
                "ingest depth": int(red.llen(s.celery_ingest_queue)),
                "batch depth": int(red.llen(s.celery_batch_queue)),
                # the backlog: since drains (one message for many snapshots) the depth is not it
                "pending": waiting,
                "oldest pending s": round(oldest, 1),
                "in flight": len(pending),
                "load1": round(os.getloadavg()[0], 1),
            }
            stats.series.append(row)
            print("  " + "  ".join(f"{k} {v}" for k, v in row.items()), flush=True)
            last_t, last_sent, last_ok, last_seen = now, len(stats.sent), len(stats.accepted), len(stats.seen)

    pg0 = pg_report.begin(conninfo())
    cpu0 = {k: cpu_seconds(v) for k, v in stack.groups().items()}
    own0 = os.times()
    poll_task = asyncio.create_task(poller())
    report_task = asyncio.create_task(reporter())
    stopped_at = started_at = None
    print(
        f"fleet: {n} agents, interval {args.interval:g} s +-{args.jitter:.0%}"
        f" (offered {n / args.interval:.1f}"
        f" uploads/s), {args.duration:g} s, {sum(a.trace for a in agents)} agents with trace chunks,"
        f" mode {args.mode}",
        flush=True,
    )
    while True:
        now = time.time()
        if args.mode == "catch-up":
            if stopped_at is None and now >= t_start + args.stop_at:
                stack.ctl("stop", "worker")
                stopped_at = time.time()
                print(f"  -- ingest workers stopped at t={stopped_at - t_start:.0f} s", flush=True)
            elif stopped_at is not None and started_at is None and now >= stopped_at + args.stop_for:
                stack.ctl("start", "worker")
                started_at = time.time()
                print(f"  -- ingest workers started at t={started_at - t_start:.0f} s", flush=True)
        if now >= t_end:
            break
        if heap and heap[0][0] <= now:
            due, a = heapq.heappop(heap)
            if a in busy:
                # like the agent: one upload at a time, a window that comes due meanwhile waits
                # in its spool (sent after the run, not counted as sent)
                stats.spooled += 1
            else:
                busy.add(a)
                task = asyncio.create_task(post(a, due))
                pending.add(task)
                task.add_done_callback(pending.discard)
                task.add_done_callback(lambda _t, a=a: busy.discard(a))
            nxt = due + args.interval * (1 + args.jitter * (2 * rng.random() - 1))
            heapq.heappush(heap, (nxt, a))
            continue
        await asyncio.sleep(min(0.05, max(0.0, heap[0][0] - now)) if heap else 0.05)
    if pending:
        await asyncio.gather(*pending, return_exceptions=True)
    t_load_end = time.time()
    if args.mode == "catch-up" and started_at is None:
        stack.ctl("start", "worker")
        started_at = time.time()
    # drain: until every accepted upload is processed or the drain timeout passes
    drain_deadline = time.time() + args.drain
    while time.time() < drain_deadline and stats.unseen:
        await asyncio.sleep(1)
    t_drained = time.time()
    cpu1 = {k: cpu_seconds(v) for k, v in stack.groups().items()}
    own1 = os.times()
    stats.own_cpu = {"user": own1.user - own0.user, "system": own1.system - own0.system}
    stats.postgresql = pg_report.end(conninfo(), pg0, len(stats.accepted))
    poll_stop.set()
    await asyncio.gather(poll_task, report_task)
    pool.close()
    stats.connections = pool.opened
    await db.close()
    sizes1 = table_bytes(engine)
    check = loss_check(engine, stats)
    red.close()
    return summarize(
        args, stats, cpu0, cpu1, sizes0, sizes1, check, t_start, t_load_end, t_drained, stopped_at, started_at
    )


async def oldest_pending(db: psycopg.AsyncConnection[Any]) -> tuple[int, float]:
    """Snapshots waiting for the worker, and the age of the oldest (s)."""
    cur = await db.execute(
        "SELECT count(*), extract(epoch FROM now() - min(received_at)) FROM snapshots"
        " WHERE status IN ('pending','failed')"
    )
    row = await cur.fetchone()
    assert row is not None
    return int(row[0]), float(row[1] or 0.0)


# A partitioned table (one partition per day) holds nothing itself: its size is its
# partitions' (pg_partition_tree lists a plain table as itself).
_TABLE_BYTES = (
    "SELECT coalesce(sum(pg_total_relation_size(relid)), 0) FROM pg_partition_tree(CAST(:t AS regclass))"
)


def table_bytes(engine: Any) -> dict[str, int]:
    with engine.connect() as conn:
        return {t: int(conn.execute(text(_TABLE_BYTES), {"t": t}).scalar() or 0) for t in TABLES}


def loss_check(engine: Any, stats: Stats) -> dict[str, int]:
    """Every accepted upload stored; every processed one exactly one curve. Also each processed
    one's processed_at - received_at into stats.server_lag (read here once, not by the poll)."""
    ids = list(stats.accepted)
    out = {
        "accepted": len(ids),
        "stored": 0,
        "processed": 0,
        "pending": 0,
        "failed_or_parked": 0,
        "curves": 0,
        "snapshots_with_other_than_one_curve": 0,
    }
    with engine.connect() as conn:
        for i in range(0, len(ids), 5000):
            chunk = ids[i : i + 5000]
            rows = conn.execute(
                text(
                    "SELECT s.id::text, s.status, count(c.id),"
                    " extract(epoch FROM s.processed_at - s.received_at) FROM snapshots s"
                    " LEFT JOIN server_curves c ON c.snapshot_id = s.id AND c.window_end = s.window_end"
                    " WHERE s.id = ANY(CAST(:ids AS uuid[]))"
                    " GROUP BY s.id, s.status, s.processed_at, s.received_at"
                ),
                {"ids": chunk},
            ).all()
            for sid, status, curves, lag in rows:
                out["stored"] += 1
                if lag is not None:
                    stats.server_lag[sid] = float(lag)
                out["curves"] += int(curves)
                if status == "processed":
                    out["processed"] += 1
                    out["snapshots_with_other_than_one_curve"] += int(curves) != 1
                elif status == "pending":
                    out["pending"] += 1
                else:
                    out["failed_or_parked"] += 1
    return out


def pct(xs: list[float], q: float) -> float:
    if not xs:
        return float("nan")
    ys = sorted(xs)
    return ys[min(len(ys) - 1, int(q * (len(ys) - 1) + 0.5))]


def summarize(
    args: argparse.Namespace,
    stats: Stats,
    cpu0: dict[str, float],
    cpu1: dict[str, float],
    sizes0: dict[str, int],
    sizes1: dict[str, int],
    check: dict[str, int],
    t_start: float,
    t_load_end: float,
    t_drained: float,
    stopped_at: float | None,
    started_at: float | None,
) -> dict[str, Any]:
    load_s = t_load_end - t_start
    processed = check["processed"]
    lat = [stats.seen[k] for k in stats.seen if k in stats.accepted]
    srv = [stats.server_lag[k] for k in stats.seen if k in stats.server_lag]
    cpu = {k: cpu1.get(k, 0.0) - cpu0.get(k, 0.0) for k in cpu1}
    db_delta = {t: sizes1[t] - sizes0[t] for t in TABLES}
    db_total = sum(db_delta.values())
    per_upload_bytes = db_total / max(1, check["stored"])
    uploads_per_agent_day = 86400 / args.interval
    out: dict[str, Any] = {
        "agents": args.agents,
        "interval_s": args.interval,
        "mode": args.mode,
        "load_s": round(load_s, 1),
        "offered_uploads_per_s": round(args.agents / args.interval, 1),
        "sent_uploads_per_s": round(len(stats.sent) / load_s, 1),
        "accepted_uploads_per_s": round(len(stats.accepted) / load_s, 1),
        "generator_late_p95_s": round(pct(stats.late_s, 0.95), 2),
        "generator_own_late_p95_s": round(pct(stats.own_late_s, 0.95), 2),
        "connection_wait_p95_s": round(pct(stats.conn_wait_s, 0.95), 2),
        "connections": args.connections,
        "windows_left_in_agent_spools": stats.spooled,
        "errors": stats.errors,
        "traces": {"sent": stats.traces_sent, "accepted": stats.traces_accepted},
        "curves_per_s_during_load": round(
            sum(1 for k in stats.seen if stats.sent[k] + stats.seen[k] <= t_load_end) / load_s, 1
        ),
        "upload_to_curve_s": {
            "n": len(lat),
            "p50": round(pct(lat, 0.5), 2),
            "p95": round(pct(lat, 0.95), 2),
            "p99": round(pct(lat, 0.99), 2),
            "max": round(max(lat), 2) if lat else None,
            "server_p50": round(pct(srv, 0.5), 2),
            "server_p95": round(pct(srv, 0.95), 2),
        },
        "drain_s_after_load": round(t_drained - t_load_end, 1),
        "loss_check": check,
        "cpu_s": {k: round(v, 1) for k, v in cpu.items()},
        "cpu_ms_per_upload": {k: round(1000 * v / max(1, len(stats.accepted)), 2) for k, v in cpu.items()},
        "worker_cpu_ms_per_curve": round(1000 * cpu.get("worker", 0.0) / max(1, processed), 2),
        # the simulator's own process (bodies, HTTP, polls, reports), which shares the machine
        "simulator_cpu_ms_per_upload": round(
            1000 * cpu.get("load generator", 0.0) / max(1, len(stats.accepted)), 3
        ),
        "simulator_cpu_s_user_system": [round(stats.own_cpu.get(k, 0.0), 2) for k in ("user", "system")],
        "simulator_polls": stats.polls,
        "simulator_http_connections": stats.connections,
        "postgresql": stats.postgresql,
        "db_bytes_delta": db_delta,
        "db_bytes_per_upload": round(per_upload_bytes),
        "db_bytes_per_agent_per_day_raw": round(per_upload_bytes * uploads_per_agent_day),
        "loadavg_at_end": [round(x, 2) for x in os.getloadavg()],
        "series": stats.series,
    }
    if stopped_at is not None:
        out["workers_stopped_s"] = round((started_at or t_load_end) - stopped_at, 1)
    if lat:
        out["upload_to_curve_s"]["mean"] = round(statistics.fmean(lat), 2)
    return out


# What the generator must have done for a run to count: the stack's figures are only a measure of
# the offered rate if that rate was sent, on time, with nothing left waiting in the agents' spools.
SENT_SHARE_MIN = 0.98  # of the offered uploads/s
LATE_P95_MAX_SHARE = 0.10  # of the upload interval


def generator_shortfall(result: dict[str, Any]) -> list[str]:
    """Why this run does not measure the offered rate (empty when it does), and on whose side the
    lateness was: the simulator's own (this machine did not run it on time: a slow or busy
    machine, not a slow stack) or the wait for a connection (the stack answered slower)."""
    why = []
    offered, sent = result["offered_uploads_per_s"], result["sent_uploads_per_s"]
    if sent < SENT_SHARE_MIN * offered:
        why.append(f"sent {sent} uploads/s of the {offered} offered (< {SENT_SHARE_MIN:.0%})")
    late_max = LATE_P95_MAX_SHARE * result["interval_s"]
    if result["generator_late_p95_s"] > late_max:
        why.append(f"uploads went out {result['generator_late_p95_s']} s late at p95 (> {late_max:g} s)")
    own, wait = result["generator_own_late_p95_s"], result["connection_wait_p95_s"]
    if own > late_max:
        why.append(
            f"the simulator itself ran {own} s late at p95: this machine did not run the generator"
            " on time (its figures say nothing about the stack)"
        )
    if wait > late_max:
        why.append(
            f"uploads waited {wait} s at p95 for one of the {result['connections']} connections:"
            " the stack answered slower than the offered rate"
        )
    if result["windows_left_in_agent_spools"]:
        why.append(f"{result['windows_left_in_agent_spools']} windows were left in the agents' spools")
    return why


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agents", type=int, default=10_000)
    ap.add_argument("--interval", type=float, default=60.0, help="seconds between an agent's uploads")
    ap.add_argument("--jitter", type=float, default=0.1, help="+- share of the interval")
    ap.add_argument("--duration", type=float, default=600.0, help="seconds of load")
    ap.add_argument("--orgs", type=int, default=50)
    ap.add_argument(
        "--trace-share", type=float, default=0.01, help="share of agents also sending trace chunks"
    )
    ap.add_argument("--trace-records", type=int, default=2000)
    ap.add_argument("--connections", type=int, default=64)
    ap.add_argument("--poll", type=float, default=1.0)
    ap.add_argument("--report", type=float, default=10.0)
    ap.add_argument(
        "--drain", type=float, default=120.0, help="seconds to wait for the backlog after the load"
    )
    ap.add_argument("--mode", choices=("steady", "catch-up"), default="steady")
    ap.add_argument("--stop-at", type=float, default=60.0)
    ap.add_argument("--stop-for", type=float, default=300.0)
    ap.add_argument("--seed", type=int, default=19)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--instance", default="fleet")
    ap.add_argument("--json", type=Path, help="write the summary here")
    args = ap.parse_args()
    result = uvloop.run(run(args))
    series = result.pop("series")
    pg = result.pop("postgresql")
    print(json.dumps(result, indent=2))
    print("\n".join(pg_report.lines(pg)), flush=True)
    result["postgresql"] = pg
    print(
        f"simulator (this process): {result['cpu_s'].get('load generator', 0.0)} s of CPU,"
        f" {result['simulator_cpu_ms_per_upload']} ms per accepted upload",
        flush=True,
    )
    shortfall = generator_shortfall(result)
    result["generator_shortfall"] = shortfall
    if args.json:
        args.json.parent.mkdir(parents=True, exist_ok=True)
        args.json.write_text(json.dumps({**result, "series": series}, indent=2))
    if shortfall:
        print(
            "FAILED: the offered rate was not sent, so the figures above are for a lower rate: "
            + "; ".join(shortfall),
            flush=True,
        )
        sys.exit(1)


if __name__ == "__main__":
    main()
