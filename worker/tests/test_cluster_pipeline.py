"""The cluster curve as a pipeline: update_cluster loads every member's inputs at once, computes the
result (cluster_pipeline.compute_cluster, pure) and stores it. On seeded clusters (members with
different curves, a loss-flagged and a quiet window, a stale member, one without a curve, one
whose memcached is still filling), the stored curve and alerts are what the same computation gives
on inputs read member by member, with the queries the worker ran before it batched them; and the
statements update_cluster runs do not grow with the number of members. Real PostgreSQL."""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import event, select, text
from sqlalchemy.orm import Session
from worker_helpers import Org

from hitcurve.core.db import get_sessionmaker
from hitcurve.crud import curves as curves_crud
from hitcurve.models import Alert, Cluster, Server, ServerCurve, Snapshot
from hitcurve.rules import alerts as rules
from hitcurve.rules import windows
from hitcurve_worker import snapshot_store as store
from hitcurve_worker import snapshot_tasks as st
from hitcurve_worker.cluster_alerts import alerts_for, cluster_answer
from hitcurve_worker.cluster_pipeline import (
    ClusterInputs,
    ClusterSettings,
    MemberWindow,
    compute_cluster,
)

MIB = 2**20
_SNAPSHOT = (
    "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start, window_end, limit_maxbytes,"
    " total_malloced, curve_points, cmd_get, get_hits, get_misses, bytes_used, curr_items,"
    " measured_hit_ratio, loss_ratio, flagged, status, memory_full) VALUES (:id, :o, :s, '1-1',"
    " :t - interval '1 minute', :t, :limit, :malloced, 10, :gets, :gets / 2, :gets / 2, :limit, 1000,"
    " :measured, :loss, :flagged, 'processed', :full)"
)
_CURVE = (
    "INSERT INTO server_curves (org_id, server_id, snapshot_id, window_end, sizes_bytes,"
    " hit_ratio_proportional, hit_ratio_calibrated, current_bytes, measured_hit_ratio, predicted_hit_ratio,"
    " band_low, band_high, calibration, advice) VALUES (:o, :s, :id, :t, :xs, :ys, :cal, :limit,"
    " :measured, :measured, :lo, :hi, '{}', '{}')"
)


def _server(db: Session, org: Org, cluster: uuid.UUID) -> uuid.UUID:
    return db.execute(
        text(
            "INSERT INTO servers (id, org_id, address, instance_id, settings, cluster_id)"
            " VALUES (gen_random_uuid(), :o, :a, '1-1', '{}', :c) RETURNING id"
        ),
        {"o": org.id, "a": f"10.78.{uuid.uuid4().int % 250}.1:{uuid.uuid4().int % 60000}", "c": cluster},
    ).scalar_one()


def seed_cluster(db: Session, org: Org, members: int, at: datetime, *, warming: bool = False) -> uuid.UUID:
    """A cluster of `members` servers with six windows each (their curves differ by member and
    window); the second member's fourth window is loss-flagged and its fifth quiet; with more than
    four members the fifth is stale (2 h old) and the last has no curve; `warming`: the first member's
    memcached has not filled its memory yet."""
    cluster = db.execute(
        text(
            "INSERT INTO clusters (id, org_id, name, target_hit_ratio, price_per_gb_month, node_size_bytes,"
            " created_at, updated_at)"
            " VALUES (gen_random_uuid(), :o, :n, 0.8, 2.5, :node, now(), now()) RETURNING id"
        ),
        {"o": org.id, "n": f"pipeline-{uuid.uuid4().hex[:6]}", "node": 64 * MIB},
    ).scalar_one()
    for m in range(members):
        sid = _server(db, org, cluster)
        if m == members - 1 and members > 3:
            continue  # a member without any curve
        age = timedelta(hours=2) if m == 4 else timedelta(0)
        limit = (48 + 16 * (m % 3)) * MIB
        for w in range(6):
            scale = 0.6 + 0.05 * (m % 5) + 0.01 * w
            xs = [float(limit * (i + 1) / 5) for i in range(10)]
            ys = [min(0.99, scale * (1 - 0.7 ** (i + 1))) for i in range(10)]
            filling = warming and m == 0
            p = {
                "id": uuid.uuid4(),
                "o": org.id,
                "s": sid,
                "t": at - age - timedelta(minutes=5 - w),
                "limit": limit,
                "malloced": limit // (6 - w) if filling else limit,
                "full": not filling,
                "gets": 40 if (m == 1 and w == 4) else 20000 + 1000 * w,
                "measured": ys[4],
                "loss": 0.2 if (m == 1 and w == 3) else 0.001,
                "flagged": m == 1 and w == 3,
                "xs": xs,
                "ys": ys,
                # one member has no calibrated curve in an early window
                "cal": None if (m == 2 and w == 0) else [min(1.0, y + 0.01) for y in ys],
                "lo": [max(0.0, y - 0.02) for y in ys],
                "hi": [min(1.0, y + 0.02) for y in ys],
            }
            db.execute(text(_SNAPSHOT), p)
            db.execute(text(_CURVE), p)
    db.commit()
    return cluster


def reference_inputs(db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID, since: datetime) -> ClusterInputs:
    """The cluster's inputs read member by member, as the worker read them before it loaded them
    at once: each member's recent curves (one query each) and each member's fill
    (hitcurve.crud.curves.recent_fill, one query each)."""
    cluster = db.get(Cluster, cluster_id)
    assert cluster is not None
    members = (
        db.execute(select(Server.id).where(Server.cluster_id == cluster_id, Server.org_id == org_id))
        .scalars()
        .all()
    )
    recent: dict[uuid.UUID, list[MemberWindow]] = {}
    for sid in members:
        rows = db.execute(
            select(
                ServerCurve, Snapshot.cmd_get, Snapshot.loss_ratio, Snapshot.flagged, Snapshot.limit_maxbytes
            )
            .join(
                Snapshot,
                (Snapshot.id == ServerCurve.snapshot_id) & (Snapshot.window_end == ServerCurve.window_end),
            )
            .where(
                ServerCurve.server_id == sid, ServerCurve.window_end >= since, Snapshot.window_end >= since
            )
            .order_by(ServerCurve.window_end.desc())
            .limit(4 * windows.RECENT_WINDOWS)
        ).all()
        if rows:
            recent[sid] = [
                MemberWindow(
                    sc.server_id,
                    sc.snapshot_id,
                    sc.window_end,
                    sc.sizes_bytes,
                    sc.hit_ratio_calibrated,
                    sc.hit_ratio_proportional,
                    sc.current_bytes,
                    sc.measured_hit_ratio,
                    sc.band_low,
                    sc.band_high,
                    gets,
                    loss,
                    flagged,
                    limit,
                )
                for sc, gets, loss, flagged, limit in reversed(rows)
            ]
    fills = {sid: curves_crud.recent_fill(db, org_id, sid, since=since) for sid in recent}
    return ClusterInputs(
        ClusterSettings.of(cluster),
        members,
        recent,
        fills,
        rules.Thresholds.from_env(),
    )


@pytest.fixture
def at() -> datetime:
    return datetime.now(UTC).replace(microsecond=0)


@pytest.mark.parametrize("members,warming", [(2, False), (7, False), (7, True)])
def test_the_stored_cluster_curve_is_the_per_member_computation(
    org: Org, at: datetime, members: int, warming: bool
) -> None:
    since = at - st.LOOKBACK
    with get_sessionmaker()() as db:
        cluster = seed_cluster(db, org, members, at, warming=warming)
        # the same cluster curve stored for two earlier windows first: a memory alert past the
        # curve opens only once the answer has held over hysteresis.HOLD_WINDOWS windows
        for back in (2, 1):
            earlier = copy.deepcopy(compute_cluster(reference_inputs(db, org.id, cluster, since)))
            assert earlier is not None
            earlier.curve["window_end"] -= timedelta(minutes=back)
            store.store_cluster(db, org.id, cluster, earlier, at)
        db.flush()
        expected = compute_cluster(reference_inputs(db, org.id, cluster, since))
        assert expected is not None
        cc = st.update_cluster(db, org.id, cluster, at, since=since)
        assert cc is not None
        db.flush()
        stored = {k: getattr(cc, k) for k in expected.curve}
        alerts = {
            a.kind: (a.severity, a.message)
            for a in db.execute(
                select(Alert).where(Alert.cluster_id == cluster, Alert.state == "open")
            ).scalars()
        }
        # the alerts are the cluster answer's (the API's, computed on the stored curve)
        c = db.get(Cluster, cluster)
        assert c is not None
        want = alerts_for(
            cluster_answer(db, org.id, c),
            c.name,
            float(c.price_per_gb_month),
            rules.Thresholds(),
            expected.limits_bytes,
        )
        db.rollback()
    assert stored == expected.curve
    assert alerts == {k: (f.severity, f.message) for k, f in want if f is not None}
    # the seeded cases are what they claim: members left out for each reason, and alerts only
    # when no member is still filling
    inputs = expected.curve["inputs"]
    if members > 3:
        assert inputs["left_out_stale"] and inputs["left_out_no_recent_curve"]
    assert (not alerts) if warming else bool(alerts)


def test_the_statements_per_cluster_do_not_grow_with_its_members(
    org: Org, at: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The cluster curve's statements; the alerts then read the cluster's sizing answer (the API's:
    each member's recent windows and attach point, at most sizing.sight.SIGHT_MEMBERS of them),
    which is not counted here."""
    since = at - st.LOOKBACK
    counts = {}
    seen: list[str] = []
    answering = []
    alerts = st.cluster_alerts

    def uncounted(*args: Any) -> None:
        answering.append(True)
        try:
            alerts(*args)
        finally:
            answering.pop()

    monkeypatch.setattr(st, "cluster_alerts", uncounted)

    def count(conn: Any, cursor: Any, statement: str, *args: Any) -> None:
        if not answering:
            seen.append(statement)

    with get_sessionmaker()() as db:
        engine = db.get_bind()
        for members in (2, 12):
            cluster = seed_cluster(db, org, members, at)
            event.listen(engine, "before_cursor_execute", count)
            try:
                assert st.update_cluster(db, org.id, cluster, at, since=since) is not None
                db.flush()
            finally:
                event.remove(engine, "before_cursor_execute", count)
            counts[members] = len(seen)
            seen.clear()
        db.rollback()
    assert counts[2] == counts[12], counts
