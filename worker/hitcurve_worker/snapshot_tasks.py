"""process_snapshot: load the inputs, compute the server curve and accuracy record
(hitcurve_worker.pipeline, pure), store them, then the cluster curve and alerts.

All writes for one snapshot happen in one transaction, keyed on natural keys (the snapshot id
for server curves and accuracy records, (cluster, window_end, basis) for cluster curves under an
advisory lock, the open-alert partial unique index for alerts), and the snapshot is marked
processed in the same transaction. Re-running the task therefore changes nothing, and a worker
killed half way leaves nothing behind: the snapshot stays pending and is re-enqueued.
Snapshots of one server are processed in window order (process_snapshot takes the server's
earlier pending windows first), so a backlog catches up in order per server.
"""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import Sequence
from datetime import datetime, timedelta
from typing import Any

from celery import Task
from sqlalchemy import select, text, update
from sqlalchemy.orm import Session

from hitcurve.core import task_names as names
from hitcurve.core.pgarray import decode_float8
from hitcurve.models import (
    Cluster,
    ClusterCurve,
    Server,
    Snapshot,
)
from hitcurve.notify import payloads as notify
from hitcurve.rules import alerts as rules
from hitcurve.rules import warmup, windows
from hitcurve.schemas.agent import MAX_PAST
from hitcurve_worker import snapshot_loads as loads
from hitcurve_worker import snapshot_store as store
from hitcurve_worker.celery_app import app
from hitcurve_worker.cluster_alerts import cluster_alerts
from hitcurve_worker.cluster_pipeline import ClusterInputs, ClusterSettings, compute_cluster
from hitcurve_worker.correction_tasks import usable_correction
from hitcurve_worker.merge import ClassCurve, ClassRow, MergeInputError, classes_from_rows
from hitcurve_worker.notification_tasks import enqueue_remembered
from hitcurve_worker.pipeline import (
    HISTORY_WINDOWS,
    Inputs,
    Previous,
    StatsModel,
    TtlCurve,
    Window,
    compute,
    compute_stats_only,
)
from hitcurve_worker.reliability import (
    RETRY_OPTS,
    PoisonInput,
    is_retryable,
    now,
    run_reliably,
    session,
)
from hitcurve_worker.settings import worker_settings

log = logging.getLogger("hitcurve.worker.snapshot")

ALERT_WINDOWS = 10  # accuracy records behind the curve-error alert
IN_ORDER_BATCH = 100  # earlier pending windows of the same server one task processes first
# How far back from a window the worker looks for the server's earlier curves, accuracy records and
# fill, and for a cluster member's curves: a bound on the partition column, so PostgreSQL plans and
# locks two day partitions, not every day's (docs/storage.md, "Known cost"). A curve more than a
# day older than the window does not grade it, nor enter the band's drift or a cluster curve.
LOOKBACK = timedelta(days=1)


def _test_pause() -> None:
    """Test hook: hold the transaction open so a test can kill the worker or the database
    mid-task (HITCURVE_WORKER_TEST_PAUSE_S; unset in production)."""
    pause = worker_settings().worker_test_pause_s
    if pause > 0:
        time.sleep(pause)


def _classes(rows: list[ClassRow] | None) -> list[ClassCurve]:
    """The snapshot's LRU class curves from its stored rows (snapshot_loads.class_rows). The
    TTL-aware ones (packed with them, snapshots.classes) are stored but not merged for sizing: on the
    TTL-heavy bench (profiler-agent/loadgen/bench_ttl.py) the worker's answer from them was
    5.8-8.9 pp off at M/2 and 2M, from the LRU curves (built on memcached's own hits and misses,
    where a read of an expired item is already a miss) 0.3-1.7 pp."""
    if not rows:
        raise PoisonInput("snapshot has no slab classes")
    for r in rows:
        if len(r[5]) != len(r[6]) or len(r[5]) == 0:
            raise PoisonInput(f"class {r[0]}: sizes and hit ratios differ in length")
    return classes_from_rows(rows)


def _ttl_curve(snap: Any) -> TtlCurve | None:
    """The agent's merged TTL-aware curve when the window's traffic carries TTLs
    (snapshots.ttl_aware, the rule in hitcurve/rules/ttl.py); None: size on the LRU class curves."""
    xs, ys = snap.ttl_sizes_bytes, snap.ttl_hit_ratios
    if not snap.ttl_aware or not xs or not ys:
        return None
    if len(xs) != len(ys):
        raise PoisonInput("the merged TTL-aware curve's sizes and hit ratios differ in length")
    return TtlCurve(xs, ys)


def _stats_model(snap: Any) -> StatsModel | None:
    """The agent's stats-only model of a window over memory, or None when it has no curve."""
    sm = snap.stats_model or {}
    pts = sm.get("points") or []
    if not sm.get("fitted") or len(pts) < 2 or not sm.get("current_items"):
        return None
    memory = float(snap.total_malloced or snap.limit_maxbytes)
    return StatsModel([p[0] for p in pts], [p[1] for p in pts], float(sm["current_items"]), memory)


def upsert_alert(
    db: Session,
    org_id: uuid.UUID,
    kind: str,
    firing: rules.Firing | None,
    *,
    cluster_id: uuid.UUID | None = None,
    server_id: uuid.UUID | None = None,
    at: datetime | None = None,
) -> None:
    """One alert of a subject opened/refreshed or resolved (snapshot_store.upsert_alerts)."""
    store.upsert_alerts(db, org_id, [(kind, firing)], at or now(), cluster_id=cluster_id, server_id=server_id)


def _previous(snap: Any, prev: Any) -> Previous | None:
    """The newest calibrated curve before this window of a window that was not quiet or
    loss-flagged (hitcurve.rules.windows: such a curve is never the answer, so it predicted nothing), if
    it is of the same memcached instance (prev: its row from snapshot_loads.previous_curves)."""
    if prev is None or prev.instance_id != snap.instance_id or prev.ys is None:
        return None
    xs, ys = decode_float8(prev.xs), decode_float8(prev.ys)
    if xs is None or ys is None or not len(ys):
        return None
    kept = {int(k): int(v) for k, v in prev.advised.items()} if isinstance(prev.advised, dict) else None
    return Previous(prev.snapshot_id, xs.tolist(), ys.tolist(), kept)


def update_cluster(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, at: datetime, since: datetime | None = None
) -> ClusterCurve | None:
    """Recompute the cluster curve from its members' recent curves and evaluate the cluster alerts:
    the members' inputs loaded at once (a statement per kind, whatever the number of members), the
    result computed (cluster_pipeline, pure), then stored. since: members' curves of windows ending
    from then on only (the processed window - LOOKBACK)."""
    db.execute(text("SELECT pg_advisory_xact_lock(hashtext(:k))"), {"k": f"cluster:{cluster_id}"})
    cluster = db.get(Cluster, cluster_id)
    if cluster is None:
        return None
    members = (
        db.execute(select(Server.id).where(Server.cluster_id == cluster_id, Server.org_id == org_id))
        .scalars()
        .all()
    )
    found = loads.cluster_windows(db, org_id, members, since, 4 * windows.RECENT_WINDOWS)
    recent = {m: found[m] for m in members if m in found}  # in the members' order, as listed
    out = compute_cluster(
        ClusterInputs(
            ClusterSettings.of(cluster),
            members,
            recent,
            loads.member_fills(db, org_id, list(recent), since),
            rules.Thresholds.from_env(),
        )
    )
    if out is None:
        return None
    row = store.store_cluster(db, org_id, cluster_id, out, at)
    db.flush()
    cluster_alerts(db, org_id, cluster, at, out.limits_bytes)
    return row


def _mark_processed(db: Session, snap: Any, at: datetime) -> None:
    """The last statement of a snapshot's transaction: it is done, and the transaction commits."""
    db.execute(
        update(Snapshot)
        .where(Snapshot.id == snap.id, Snapshot.window_end == snap.window_end)
        .values(status="processed", processed_at=at, error=None)
    )
    db.commit()


def process(snapshot_id: uuid.UUID, window_end: datetime | None = None) -> dict[str, Any]:
    """The work of one snapshot, in one transaction. Raises PoisonInput for unusable data.
    window_end: the snapshot's (its partition); None looks it up in every partition."""
    with session() as db:
        snap = store.lock_snapshot(db, snapshot_id, window_end)
        if snap is None:
            return {"status": "missing"}
        if snap.status in ("processed", "parked"):
            return {"status": snap.status}
        at = now()
        (out,) = work(db, [snap], at)
        _mark_processed(db, snap, at)
        enqueue_remembered(db)
        return out


def work(db: Session, snaps: Sequence[Any], at: datetime) -> list[dict[str, Any]]:
    """Everything a batch of locked, pending snapshots' processing writes (a drain's claim, or
    process's one), in the caller's transaction, except the rows' own state (process marks its
    one; a drain marks its batch in one statement). One window per server (a claim takes one):
    the inputs are loaded one statement per kind for the batch (snapshot_loads), each snapshot's
    rows computed (pipeline, pure), and stored one statement per table. A snapshot the pipeline
    cannot use raises PoisonInput before anything is written (the drain then does each of the
    batch on its own and parks that one). Returns each snapshot's outcome, in order."""
    if not snaps:
        return []
    loads.one_per_server(snaps)
    curves = [s for s in snaps if s.basis != "stats_only"]
    classes = loads.class_rows(db, curves)
    history = loads.histories(db, snaps, LOOKBACK, HISTORY_WINDOWS)
    previous = loads.previous_curves(db, snaps, LOOKBACK, 4 * windows.RECENT_WINDOWS, windows.MIN_READS)
    graded = [s.server_id for s in curves if _measured(s) is not None]
    corrections = loads.corrections(db, graded)
    facts = loads.server_facts(db, snaps)

    outs: list[dict[str, Any]] = []
    done: list[tuple[int, Any]] = []  # (position in the batch, pipeline rows) of each curve
    for i, snap in enumerate(snaps):
        rows, out = _compute(snap, classes, history[i], _previous(snap, previous.get(i)), corrections, at)
        outs.append(out)
        if rows is not None:
            done.append((i, rows))
    store.store_rows(db, [(rows.server_curve, rows.accuracy) for _, rows in done])

    # Alerts and the cluster curve follow the newest window only (a late or replayed old
    # snapshot must not flip them back).
    latest = [(i, rows) for i, rows in done if facts[i].newer is None]
    fills = loads.recent_fills(db, [snaps[i] for i, _ in latest], LOOKBACK)
    th = rules.Thresholds.from_env()
    changes = []
    for (i, rows), fill in zip(latest, fills, strict=True):
        snap, f = snaps[i], facts[i]
        subject = f"server {notify.server_name(f.address, f.hostname)}"
        # Windows graded while memcached was still filling do not count: the curve moves
        # by design then, and a settled server must not inherit those misses. The
        # curve-error alert's records: this window's (stored above) and the earlier ones the
        # band read (loads.histories, the same filter), newest first.
        acc = rows.accuracy
        if acc is not None and acc["basis"] == "calibrated" and snap.memory_full is not False:
            recent = [float(acc["error_pp"]), *history[i][: ALERT_WINDOWS - 1]]
        else:
            recent = history[i][:ALERT_WINDOWS]
        state = warmup.state_of(fill)
        warming = state is not None and state.warming_up
        changes.append(
            (
                (snap.org_id, None, snap.server_id),
                [
                    (rules.STREAM_LOSS, rules.stream_loss(subject, float(snap.loss_ratio), th)),
                    (rules.CURVE_ERROR, rules.curve_error(subject, recent, th, warming_up=warming)),
                    (rules.STALE_AGENT, None),
                ],
            )
        )
    store.upsert_alerts_of(db, changes, at)
    db.flush()
    # Each cluster once, after all its members in the batch are stored, from the look-back of
    # its newest window here (the batch is in window order), as the last of one-by-one would.
    clusters: dict[uuid.UUID, Any] = {}
    for i, _ in latest:
        if facts[i].cluster_id:
            clusters[facts[i].cluster_id] = snaps[i]  # the last: its newest window
    # in id order: drains side by side take the clusters' advisory locks in one order (no deadlock)
    for cluster_id, snap in sorted(clusters.items(), key=lambda c: str(c[0])):
        row = update_cluster(db, snap.org_id, cluster_id, at, snap.window_end - LOOKBACK)
        for i, _ in latest:
            if facts[i].cluster_id == cluster_id:
                outs[i]["cluster_curve"] = row is not None
    _test_pause()
    return outs


def _measured(snap: Any) -> float | None:
    return snap.measured_hit_ratio if (snap.get_hits + snap.get_misses) > 0 else None


def _compute(
    snap: Any,
    classes: dict[uuid.UUID, list[ClassRow]],
    history: list[float],
    previous: Previous | None,
    corrections: dict[uuid.UUID, Any],
    at: datetime,
) -> tuple[Any, dict[str, Any]]:
    """One snapshot's pipeline rows (None: a window without a curve) and its outcome."""
    window = Window(
        org_id=snap.org_id,
        server_id=snap.server_id,
        snapshot_id=snap.id,
        window_start=snap.window_start,
        window_end=snap.window_end,
        measured=_measured(snap),
        reads=int(snap.cmd_get or 0),
    )
    if snap.basis == "stats_only":
        model = _stats_model(snap)
        if model is None:
            # The agent's model has no curve for this window (memcached is not evicting, no
            # reads...): the window's measurements are stored, there is no curve to compute.
            return None, {
                "status": "processed",
                "curve": None,
                "stats_model": (snap.stats_model or {}).get("state"),
            }
        rows = compute_stats_only(window, model, previous, history, at)
    else:
        inputs = Inputs(
            window,
            _classes(classes.get(snap.id)),
            previous=previous,
            history_pp=history,
            ttl_curve=_ttl_curve(snap),
        )
        if window.measured is not None:
            inputs.correction, inputs.why_not = usable_correction(
                corrections.get(snap.server_id), snap.window_end
            )
        try:
            rows = compute(inputs, at)
        except MergeInputError as exc:
            raise PoisonInput(str(exc)) from exc
    return rows, {
        "status": "processed",
        "calibration": rows.calibration.method,
        "optimal": rows.merged.optimal_method if rows.merged else None,
        "cluster_curve": False,
    }


def window_of(snapshot_id: uuid.UUID) -> datetime | None:
    """A snapshot's window end, for a task sent with its id alone (older messages, tests): the
    one lookup that reads every partition."""
    with session() as db:
        return db.execute(select(Snapshot.window_end).where(Snapshot.id == snapshot_id)).scalar()


def earlier_pending(snapshot_id: uuid.UUID, window_end: datetime) -> list[tuple[uuid.UUID, datetime]]:
    """The same server's still-pending snapshots whose windows end before this one's, oldest
    first, with their window ends (at most IN_ORDER_BATCH; served by ix_snapshots_server_window;
    reading the days an upload may be late by, schemas.agent.MAX_PAST, not every partition)."""
    server = (
        select(Snapshot.server_id)
        .where(Snapshot.id == snapshot_id, Snapshot.window_end == window_end)
        .scalar_subquery()
    )
    with session() as db:
        return [
            (r.id, r.window_end)
            for r in db.execute(
                select(Snapshot.id, Snapshot.window_end)
                .where(
                    Snapshot.server_id == server,
                    Snapshot.window_end < window_end,
                    Snapshot.window_end >= window_end - MAX_PAST,
                    Snapshot.status == "pending",
                )
                .order_by(Snapshot.window_end, Snapshot.received_at)
                .limit(IN_ORDER_BATCH)
            )
        ]


def _run(snapshot_id: uuid.UUID, window_end: datetime) -> dict[str, Any]:
    """One snapshot through run_reliably, every statement on its row bounded by its window end."""
    return run_reliably(
        Snapshot,
        snapshot_id,
        lambda sid: process(sid, window_end),
        "snapshot",
        log,
        (Snapshot.window_end == window_end,),
    )


@app.task(name=names.PROCESS_SNAPSHOT, bind=True, **RETRY_OPTS)
def process_snapshot(self: Task, snapshot_id: str, window_end: str | None = None) -> dict[str, Any]:
    """In order per server: a server's earlier pending windows are processed first (each in its
    own transaction, each idempotent), so after a backlog -- workers stopped, several tasks of
    one server taken by different processes -- curves, accuracy records and alerts follow the
    windows' order. A process that reaches a window another holds waits on its row lock and
    then finds it processed; that window's own task later finds nothing to do.
    window_end: the snapshot's (hitcurve.core.tasks.snapshot_args); a message without it costs
    one lookup in every partition."""
    try:
        sid = uuid.UUID(str(snapshot_id))
        end = datetime.fromisoformat(window_end) if window_end else window_of(sid)
    except ValueError:
        return {"status": "bad-id"}
    if end is None:
        return {"status": "nothing-to-do"}
    # Asked again until none is left: a backlog can hold more than IN_ORDER_BATCH earlier windows
    # of the server (5 minutes stopped at one window a second: ~300), and processing this window
    # after only the first IN_ORDER_BATCH of them put it before the rest (test_catch_up with
    # HITCURVE_CATCHUP_STOP_S=300). Each round leaves none of its windows pending (processed,
    # parked, or failed with its error); a round that finds the same windows again stops.
    seen: list[tuple[uuid.UUID, datetime]] = []
    while (earlier := earlier_pending(sid, end)) and earlier != seen:
        seen = earlier
        for earlier_id, earlier_end in earlier:
            try:
                _run(earlier_id, earlier_end)
            except Exception as exc:
                if is_retryable(exc):
                    raise  # the database or broker is away: this whole task retries
                # marked failed with its error; the re-enqueue job retries it on its own
                continue
    return _run(sid, end)
