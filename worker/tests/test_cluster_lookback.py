"""A cluster curve names every member it leaves out: the worker reads members' curves
only LOOKBACK back from the window (a bound on the partition column); a member whose newest curve
is older than that, or that has none, used to vanish from the stored inputs, listed neither as
used nor as `left_out_stale`. Real PostgreSQL, the worker's own update_cluster, in process."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import text
from worker_helpers import Org

from hitcurve.core.db import get_sessionmaker
from hitcurve_worker import snapshot_tasks as st

_SNAPSHOT = (
    "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start, window_end, limit_maxbytes,"
    " curve_points, cmd_get, get_hits, get_misses, bytes_used, curr_items, measured_hit_ratio, loss_ratio,"
    " flagged, status, memory_full) VALUES (:id, :o, :s, '1-1', :t - interval '1 minute', :t, 67108864, 10,"
    " 100000, 50000, 50000, 67108864, 1000, 0.5, 0, false, 'processed', true)"
)
_CURVE = (
    "INSERT INTO server_curves (org_id, server_id, snapshot_id, window_end, sizes_bytes,"
    " hit_ratio_proportional, hit_ratio_calibrated, current_bytes, measured_hit_ratio, predicted_hit_ratio,"
    " calibration, advice) VALUES (:o, :s, :id, :t, :xs, :ys, :ys, 67108864, 0.5, 0.5, '{}', '{}')"
)


def test_members_outside_the_look_back_are_named_not_dropped(org: Org) -> None:
    at = datetime.now(UTC).replace(microsecond=0)
    xs = [float(2**20 * 16 * (i + 1)) for i in range(10)]
    ys = [0.1 * (i + 1) * 0.9 for i in range(10)]
    with get_sessionmaker()() as db:
        cluster = db.execute(
            text(
                "INSERT INTO clusters (id, org_id, name, target_hit_ratio, price_per_gb_month,"
                " created_at, updated_at)"
                " VALUES (gen_random_uuid(), :o, 'lookback', 0.5, 1, now(), now()) RETURNING id"
            ),
            {"o": org.id},
        ).scalar_one()
        ages = {"fresh": timedelta(minutes=1), "stale": timedelta(hours=2), "silent": timedelta(days=3)}
        ids = {}
        for name in (*ages, "never"):
            ids[name] = db.execute(
                text(
                    "INSERT INTO servers (id, org_id, address, instance_id, settings, cluster_id)"
                    " VALUES (gen_random_uuid(), :o, :a, '1-1', '{}', :c) RETURNING id"
                ),
                {
                    "o": org.id,
                    "a": f"10.77.{uuid.uuid4().int % 250}.1:{uuid.uuid4().int % 60000}",
                    "c": cluster,
                },
            ).scalar_one()
        for name, age in ages.items():
            p = {"id": uuid.uuid4(), "o": org.id, "s": ids[name], "t": at - age, "xs": xs, "ys": ys}
            db.execute(text(_SNAPSHOT), p)
            db.execute(text(_CURVE), p)
        db.commit()

        cc = st.update_cluster(db, org.id, cluster, at, since=at - st.LOOKBACK)
        assert cc is not None
        inputs = cc.inputs
        db.rollback()
    assert set(inputs["servers"]) == {str(ids["fresh"])}
    # older than CLUSTER_FRESH, inside the look-back: stale, as before
    assert inputs["left_out_stale"] == [str(ids["stale"])]
    # beyond the look-back (3 days) or never processed: named, not silently dropped
    assert inputs["left_out_no_recent_curve"] == sorted([str(ids["silent"]), str(ids["never"])])
