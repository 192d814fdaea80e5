"""run_simulation: replay a server's (or a cluster's) sampled trace chunks through replacement
policies at the requested sizes, fanned out one policy per task, with progress 0..1 on the run
row and one result row per (run, policy, size). The run and each of its policies are units of the
organization's fair queue (hitcurve.core.fairqueue, fair_tasks): a worker takes them round-robin
across organizations, so one organization's large runs never queue another's small one behind
them; the policy that completes the run marks it done.

The agent samples keys spatially at rate R (SHARDS-style), so a cache of S bytes is simulated at
S*R bytes on the sample (miniature simulation, Waldspurger et al. ATC'17) and reported at S.
Several servers of a cluster share a keyspace through consistent hashing: their samples are
merged in time order and simulated as one cache of the cluster's total size.

Reliability: results are upserted on (run, policy, size), so a policy that runs twice changes
nothing; a dispatch skips policies already complete, so re-dispatching a run whose policy task was
lost (worker killed) only redoes what is missing. Bad requests (unknown policy, no trace in the
window) fail the run with a clear error and are not retried.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from celery import Task
from sqlalchemy import func, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.orm import Session

from hitcurve.core import task_names as names
from hitcurve.models import Server, SimulationResult, SimulationRun
from hitcurve_worker import trace_chunks
from hitcurve_worker.celery_app import app
from hitcurve_worker.correction_tasks import sample_read_ratio
from hitcurve_worker.fair_tasks import queue as fair_queue
from hitcurve_worker.policy_correction import MIN_SAMPLED_GETS
from hitcurve_worker.reliability import MAX_ATTEMPTS, RETRY_OPTS, PoisonInput, describe, now, session
from hitcurve_worker.simulation_period import RECOMPUTE, SIM_WARMUP, filled_since
from hitcurve_worker.trace_data import Trace, assemble, sim_module

__all__ = ["Trace", "assemble", "load_trace", "sim_module", "simulate"]

log = logging.getLogger("hitcurve.worker.simulation")

# Fewer sampled requests than this: the run is refused (its hit rates would be noise). Below the
# policy correction's minimum (policy_correction.MIN_SAMPLED_GETS) a run is done but warns.
MIN_SIMULATION_REQUESTS = 1000


def _subject_servers(db: Session, run: SimulationRun) -> list[uuid.UUID]:
    if run.server_id is not None:
        return [run.server_id]
    return list(
        db.execute(
            select(Server.id).where(Server.org_id == run.org_id, Server.cluster_id == run.cluster_id)
        ).scalars()
    )


def load_trace(db: Session, run: SimulationRun) -> Trace:
    servers = _subject_servers(db, run)
    if not servers:
        raise PoisonInput("the cluster has no servers")
    full, period_note = filled_since(db, run.org_id, servers, run.window_start, run.window_end)
    start = max(run.window_start, full) if full is not None else run.window_start
    chunks, bad = trace_chunks.load(
        db, run.org_id, servers, trace_chunks.SIMULATION_STATUSES, start, run.window_end
    )
    since_us = int(start.timestamp() * 1e6) if full is not None else None
    trace = assemble([c.cols for c in chunks], [c.rate for c in chunks], since_us)
    if period_note:
        trace.notes.append(period_note)
    n = len(trace.keys)
    if n < MIN_SIMULATION_REQUESTS:
        raise PoisonInput(
            f"only {n:,} sampled requests in the window: a simulation needs at least "
            f"{MIN_SIMULATION_REQUESTS:,} (wait for more trace chunks, or raise the agent's --trace-rate)"
        )
    if n < MIN_SAMPLED_GETS:
        trace.notes.append(
            f"small sample: {n:,} sampled requests, fewer than the {MIN_SAMPLED_GETS:,} the worker "
            "trusts for memcached's own curve; the hit rates may be off by several pp"
        )
    if bad:
        trace.notes.append(f"{bad} undecodable chunks left out")
    kept = [c for c in chunks if c.rate == trace.sample_rate]
    ratio, why = sample_read_ratio(
        db, run.org_id, [(c.server_id, c.start, c.end, c.rate, c.reads) for c in kept]
    )
    trace.read_ratio = ratio
    if why:
        trace.notes.append(why)
    return trace


def adjust(hit_ratio: float, read_ratio: float | None) -> float:
    """SHARDS_adj of a sampled hit ratio: the sample's misses over the reads it should have held
    (sampled reads / read_ratio), i.e. 1 - (1 - h) * read_ratio. Hot keys that fell in or out of
    the sample account for most of the difference, and they hit at any useful size."""
    if read_ratio is None:
        return hit_ratio
    return min(1.0, max(0.0, 1.0 - (1.0 - hit_ratio) * read_ratio))


def simulate(trace: Trace, policy: str, sizes_bytes: list[int]) -> list[dict[str, Any]]:
    """Miniature simulation: the agent's trace is a spatial key sample at rate R, so a cache of S
    bytes is simulated at S*R on it. The simulator is told the trace is already sampled
    (presampled) so it scales memcached's 1 MiB slab pages by R as well (mcslru); without that a
    tiny simulated cache would hand every slab class a whole page and look the same at every size."""
    hs = sim_module()
    out = hs.simulate(
        trace.keys,
        [policy],
        sizes_bytes,
        object_sizes=trace.sizes,
        costs=trace.costs,
        ops=trace.ops.tobytes(),
        unit="bytes",
        sample_rate=trace.sample_rate,
        presampled=True,
        warmup=SIM_WARMUP,
    )
    by_size = {int(r["size"]): r for r in out}
    results = []
    for s in sizes_bytes:
        r = dict(by_size[s], size_bytes=s)
        r["hit_ratio_unadjusted"], r["byte_hit_ratio_unadjusted"] = r["hit_ratio"], r["byte_hit_ratio"]
        r["hit_ratio"] = adjust(r["hit_ratio"], trace.read_ratio)
        r["byte_hit_ratio"] = adjust(r["byte_hit_ratio"], trace.read_ratio)  # as if bytes sampled alike
        results.append(r)
    return results


def _complete_policies(db: Session, run: SimulationRun) -> set[str]:
    rows = db.execute(
        select(SimulationResult.policy, func.count())
        .where(SimulationResult.run_id == run.id)
        .group_by(SimulationResult.policy)
    ).all()
    n = len(set(run.sizes_bytes))
    return {p for p, c in rows if c >= n}


def _set_progress(db: Session, run: SimulationRun) -> None:
    done = len(_complete_policies(db, run) & set(run.policies))
    p = 0.05 + 0.9 * done / max(1, len(set(run.policies)))
    db.execute(
        update(SimulationRun)
        .where(SimulationRun.id == run.id, SimulationRun.status == "running")
        .values(progress=func.greatest(SimulationRun.progress, p))
    )


def _fail(run_id: uuid.UUID, error: str) -> None:
    with session() as db:
        db.execute(
            update(SimulationRun)
            .where(SimulationRun.id == run_id, SimulationRun.status.in_(("pending", "running")))
            .values(status="failed", error=error[:4000], finished_at=now())
        )
        db.commit()


@app.task(name=names.RUN_SIMULATION, bind=True, **RETRY_OPTS)
def run_simulation(self: Task, run_id: str) -> dict[str, Any]:
    """Validate the run, mark it running and dispatch one task per policy still missing."""
    try:
        rid = uuid.UUID(str(run_id))
    except ValueError:
        return {"status": "bad-id"}
    with session() as db:
        attempts = db.execute(
            update(SimulationRun)
            .where(SimulationRun.id == rid, SimulationRun.status.in_(("pending", "running")))
            .values(attempts=SimulationRun.attempts + 1)
            .returning(SimulationRun.attempts)
        ).scalar_one_or_none()
        db.commit()
    if attempts is None:
        return {"status": "nothing-to-do"}
    if attempts > MAX_ATTEMPTS:
        _fail(rid, f"gave up after {attempts - 1} attempts")
        return {"status": "failed"}
    with session() as db:
        run = db.get(SimulationRun, rid)
        assert run is not None
        known = {name for name, _ in sim_module().policies()}
        unknown = [p for p in run.policies if p not in known]
        try:
            if unknown:
                raise PoisonInput(
                    f"unknown policies: {', '.join(unknown)} (known: {', '.join(sorted(known))})"
                )
            if not run.sizes_bytes or any(s <= 0 for s in run.sizes_bytes):
                raise PoisonInput("sizes must be positive byte counts")
            if run.window_end <= run.window_start:
                raise PoisonInput("the window ends before it starts")
            n_chunks = trace_chunks.count(
                db,
                run.org_id,
                _subject_servers(db, run),
                trace_chunks.SIMULATION_STATUSES,
                run.window_start,
                run.window_end,
            )
            if not n_chunks:
                raise PoisonInput(
                    "no trace chunks for this subject in the window: the agent uploads them "
                    "when trace sampling is on"
                )
        except PoisonInput as exc:
            db.rollback()
            _fail(rid, str(exc))
            return {"status": "failed", "error": str(exc)}
        db.execute(
            update(SimulationRun)
            .where(SimulationRun.id == rid)
            .values(
                status="running",
                started_at=func.coalesce(SimulationRun.started_at, now()),
                enqueued_at=now(),
                progress=func.greatest(SimulationRun.progress, 0.05),
                error=None,
            )
        )
        missing = [p for p in dict.fromkeys(run.policies) if p not in _complete_policies(db, run)]
        org_id = run.org_id
        db.commit()
    if not missing:
        return finish_simulation.run(str(rid))
    for p in missing:
        fair_queue(org_id, names.SIMULATE_POLICY, rid, p)
    return {"status": "dispatched", "policies": missing}


@app.task(name=names.SIMULATE_POLICY, bind=True, **RETRY_OPTS)
def simulate_policy(self: Task, run_id: str, policy: str) -> dict[str, Any]:
    rid = uuid.UUID(run_id)
    with session() as db:
        run = db.get(SimulationRun, rid)
        if run is None or run.status != "running":
            return {"status": "skipped"}
        if policy in _complete_policies(db, run):
            return {"status": "already-done"}
        try:
            trace = load_trace(db, run)
            sizes = sorted(set(int(s) for s in run.sizes_bytes))
            results = simulate(trace, policy, sizes)
        except (PoisonInput, ValueError) as exc:
            db.rollback()
            _fail(rid, f"{policy}: {describe(exc)}")
            return {"status": "failed"}
        at = now()
        for r in results:
            values = dict(
                org_id=run.org_id,
                run_id=rid,
                policy=policy,
                size_bytes=r["size_bytes"],
                hit_ratio=float(r["hit_ratio"]),
                byte_hit_ratio=float(r["byte_hit_ratio"]),
                # the simulator already scaled the sample's cost total by 1/R
                recompute_cost_total_us=float(r.get("miss_cost_total", 0.0)),
                recompute_cost_p99_us=float(r.get("miss_cost_p99", 0.0)),
                requests=int(round(int(r["requests"]) / trace.sample_rate)),
                details={
                    "sample_rate": trace.sample_rate,
                    "sampled_requests": int(r["requests"]),
                    "simulated_size_bytes": r["simulated_size"],
                    "read_ratio": trace.read_ratio,
                    "hit_ratio_unadjusted": float(r["hit_ratio_unadjusted"]),
                    "hits": int(r.get("hits", 0)),
                    "evictions": int(r.get("evictions", 0)),
                    "seconds": float(r.get("seconds", 0.0)),
                    "chunks": trace.chunks,
                    "sampled_keys": trace.distinct_keys,
                    "span_seconds": trace.span_seconds,
                    # what the figures cover: the replayed period, the share that only warmed the
                    # simulated caches, the sample's footprint, what the recompute time sums
                    "period_start_us": trace.start_us,
                    "period_end_us": trace.end_us,
                    "sim_warmup": SIM_WARMUP,
                    "footprint_bytes": trace.footprint_bytes,
                    "recompute": RECOMPUTE,
                    "notes": trace.notes,
                },
                computed_at=at,
            )
            db.execute(
                pg_insert(SimulationResult)
                .values(**values)
                .on_conflict_do_update(
                    constraint="uq_simulation_results_cell",
                    set_={
                        k: v
                        for k, v in values.items()
                        if k not in ("run_id", "policy", "size_bytes", "org_id")
                    },
                )
            )
        db.flush()
        _set_progress(db, run)
        db.commit()
    # the last policy to commit sees every result and marks the run done (both, when two finish
    # together: the update is conditional, so that is harmless)
    finished = finish_simulation.run(run_id)
    return {"status": "done", "policy": policy, "sizes": len(results), "run": finished["status"]}


@app.task(name=names.FINISH_SIMULATION, bind=True, **RETRY_OPTS)
def finish_simulation(self: Task, run_id: str) -> dict[str, Any]:
    rid = uuid.UUID(run_id)
    with session() as db:
        run = db.get(SimulationRun, rid)
        if run is None or run.status != "running":
            return {"status": run.status if run else "missing"}
        missing = set(run.policies) - _complete_policies(db, run)
        if missing:  # still running, or a policy task was lost (the housekeeping job re-dispatches)
            return {"status": "incomplete", "missing": sorted(missing)}
        db.execute(
            update(SimulationRun)
            .where(SimulationRun.id == rid, SimulationRun.status == "running")
            .values(status="done", progress=1.0, finished_at=now(), error=None)
        )
        db.commit()
    return {"status": "done"}
