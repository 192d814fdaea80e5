"""Storage that lasts: day partitions, the retention and downsampling job, and the
dashboard's and API's hot queries reading only the partitions they need, on real PostgreSQL.

The job is the worker's (hitcurve_worker.housekeeping.downsample_and_retain, Celery beat hourly on
the batch queue); it is called directly here, with its default settings."""

import re
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
import pytest
from sqlalchemy import event, select, text

from conftest import upload_snapshot
from hitcurve.core import partitions
from hitcurve.core.db import get_engine, get_sessionmaker
from hitcurve.crud import curves as curves_crud
from hitcurve.crud import history as history_crud
from hitcurve.ingest.classpack import pack, unpack
from hitcurve_worker.housekeeping import downsample_and_retain
from hitcurve_worker.settings import WorkerSettings

DEFAULTS = WorkerSettings()
STEP = timedelta(minutes=20)
PER_DAY = 9  # windows 01:00 .. 03:40 UTC, three per hour
# each window's two slab classes (96-byte chunks, one page, a two-point curve), packed as stored
TWO_CLASSES = pack(
    {
        **{k: [v, v] for k, v in (("chunk_size", 96), ("pages", 1), ("items", 10), ("evictions", 0))},
        **{k: [v, v] for k, v in (("requests", 100), ("current_items", 10), ("has_ttl", False))},
        **{k: [None, None] for k in ("cost_count", "cost_mean_us", "cost_p50_us", "cost_p90_us")},
        "cost_p99_us": [None, None],
        **{k: [None, None] for k in ("ghost_reach_items", "ghost_filters")},
        "class_id": [1, 2],
    },
    np.array([1.0, 2.0, 1.0, 2.0]),
    np.array([0.1, 0.2, 0.1, 0.2]),
    2,
)


def _fill(db: Any, org: uuid.UUID, server: uuid.UUID, cluster: uuid.UUID, day: Any, n: int = PER_DAY) -> None:
    """n processed windows of a server from 01:00 UTC of `day`, 20 minutes apart, each with two
    slab classes, a server curve, an accuracy record and a cluster curve: what ingest and the worker
    write. The measured hit ratio is (10 + i) % of window i."""
    t0 = partitions.start_of(day) + timedelta(hours=1)
    p = {"org": org, "srv": server, "cl": cluster, "t0": t0, "n": n, "t1": t0 + n * STEP, "k": TWO_CLASSES}
    db.execute(
        text(
            "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start, window_end,"
            " limit_maxbytes,"
            " curve_points, cmd_get, get_hits, get_misses, bytes_used, curr_items, measured_hit_ratio,"
            " loss_ratio, flagged, payload_gzip, status, classes)"
            " SELECT gen_random_uuid(), :org, :srv, '1-1', t - interval '1 minute', t, 67108864, 2, 100, h,"
            " 100 - h, 1000, 10, h / 100.0, 0, false, '\\x1f8b'::bytea, 'processed', :k"
            " FROM (SELECT CAST(:t0 AS timestamptz) + make_interval(mins => 20 * g) AS t, 10 + g AS h"
            " FROM generate_series(0, :n - 1) g) x"
        ),
        p,
    )
    mine = "FROM snapshots s WHERE s.server_id = :srv AND s.window_end >= :t0 AND s.window_end < :t1"
    db.execute(
        text(
            "INSERT INTO server_curves (org_id, server_id, snapshot_id, window_end, sizes_bytes,"
            " hit_ratio_proportional, hit_ratio_calibrated, current_bytes, measured_hit_ratio,"
            " predicted_hit_ratio, calibration, advice, computed_at)"
            " SELECT s.org_id, s.server_id, s.id, s.window_end, '{1000,2000}', '{0.1,0.2}', '{0.1,0.2}',"
            " 1000,"
            " s.measured_hit_ratio, s.measured_hit_ratio, '{}', '{}', s.window_end " + mine
        ),
        p,
    )
    db.execute(
        text(
            "INSERT INTO accuracy_records (org_id, server_id, snapshot_id, window_start, window_end,"
            " memory_bytes,"
            " predicted_hit_ratio, measured_hit_ratio, error_pp, basis, computed_at)"
            " SELECT s.org_id, s.server_id, s.id, s.window_start, s.window_end, 1000, 0.2,"
            " s.measured_hit_ratio,"
            " (0.2 - s.measured_hit_ratio) * 100, 'calibrated', s.window_end " + mine
        ),
        p,
    )
    db.execute(
        text(
            "INSERT INTO cluster_curves (org_id, cluster_id, computed_at, window_end, basis, sizes_bytes,"
            " hit_ratios, current_bytes, server_count, inputs)"
            " SELECT s.org_id, :cl, s.window_end, s.window_end, 'calibrated', '{1000,2000}', '{0.1,0.2}',"
            " 1000, 1,"
            " '{}' " + mine
        ),
        p,
    )


def _count(db: Any, table: str, where: str, p: dict[str, Any]) -> int:
    return int(db.execute(text(f"SELECT count(*) FROM {table} WHERE {where}"), p).scalar_one())  # noqa: S608


def _exists(db: Any, table: str, day: Any) -> bool:
    q = f"{partitions.SCHEMA}.{partitions.name(table, day)}"
    return db.execute(text("SELECT to_regclass(:q) IS NOT NULL"), {"q": q}).scalar_one()


def test_retention_job_drops_old_days_keeps_downsampled_rows_and_history_still_answers(account: Any) -> None:
    server_id, _ = upload_snapshot(account, address="10.0.19.1:11211")  # today's window, via the API
    org, server = uuid.UUID(account.org_id), uuid.UUID(server_id)
    cluster = uuid.UUID(account.post("/api/v1/clusters", json={"name": "retained"}).json()["id"])
    account.patch(f"/api/v1/servers/{server_id}", json={"cluster_id": str(cluster)})
    at = datetime.now(UTC)
    today = partitions.day_of(at)
    expired = today - timedelta(days=int(DEFAULTS.retention_days) + 2)
    merged_hourly = today - timedelta(days=int(DEFAULTS.history_hourly_after_days) + 5)  # classes daily too
    classes_hourly = today - timedelta(days=int(DEFAULTS.class_hourly_after_days) + 2)
    recent = today - timedelta(days=int(DEFAULTS.payload_retention_days) + 1)  # past payload retention
    with get_sessionmaker()() as db:
        partitions.ensure(db, [expired, merged_hourly, classes_hourly, recent])
        for day in (expired, merged_hourly, classes_hourly, recent):
            _fill(db, org, server, cluster, day)
        db.commit()

    out = downsample_and_retain(at=at)
    assert "account_links_purged" in out  # expired account links go with the same hourly job

    with get_sessionmaker()() as db:
        for table in partitions.PARTITIONED:  # the expired day is gone from every table
            assert not _exists(db, table, expired), table
            assert _exists(db, table, merged_hourly), table
        for day in range(1, DEFAULTS.partition_ahead_days + 1):  # and days ahead exist
            assert _exists(db, "snapshots", today + timedelta(days=day))

        def on(day: Any, col: str = "window_end") -> dict[str, Any]:
            lo = partitions.start_of(day)
            return {"srv": server, "cl": cluster, "lo": lo, "hi": lo + timedelta(days=1), "col": col}

        def rows(table: str, day: Any, subject: str = "server_id = :srv", col: str = "window_end") -> int:
            if table == "classes":  # the slab classes stored with the day's snapshots
                packed = db.execute(
                    text(
                        "SELECT classes FROM snapshots WHERE server_id = :srv AND window_end >= :lo"
                        " AND window_end < :hi AND classes IS NOT NULL"
                    ),
                    on(day),
                ).scalars()
                return sum(len(unpack(k)) for k in packed)
            return _count(db, table, f"{subject} AND {col} >= :lo AND {col} < :hi", on(day))

        # a month old: one window per server and hour (the newest: xx:40) with its curve and record;
        # per-class curves one window per day (past class_daily_after_days)
        kept = db.execute(
            text(
                "SELECT to_char(window_end AT TIME ZONE 'UTC', 'HH24:MI') FROM snapshots"
                " WHERE server_id = :srv AND window_end >= :lo AND window_end < :hi ORDER BY window_end"
            ),
            on(merged_hourly),
        ).scalars()
        assert list(kept) == ["01:40", "02:40", "03:40"]
        assert rows("server_curves", merged_hourly) == 3
        assert rows("accuracy_records", merged_hourly) == 3
        assert rows("classes", merged_hourly) == 2  # the 03:40 window's two classes
        assert rows("cluster_curves", merged_hourly, "cluster_id = :cl", "computed_at") == 3
        # nine days old: every merged window, per-class curves hourly
        assert rows("snapshots", classes_hourly) == PER_DAY
        assert rows("server_curves", classes_hourly) == PER_DAY
        assert rows("classes", classes_hourly) == 3 * 2
        # three days old: everything but the payloads
        assert rows("classes", recent) == PER_DAY * 2
        assert rows("cluster_curves", recent, "cluster_id = :cl", "computed_at") == PER_DAY
        payloads = _count(
            db,
            "snapshots",
            "server_id = :srv AND window_end >= :lo AND window_end < :hi AND payload_gzip IS NOT NULL",
            on(recent),
        )
        assert payloads == 0
    assert out["partitions_dropped"] == len(partitions.PARTITIONED)
    assert out["snapshots_thinned"] >= PER_DAY - 3

    again = downsample_and_retain(at=at)  # each step runs once per day
    assert not any(v for k, v in again.items() if k.endswith("_thinned") or k == "partitions_dropped"), again

    # The dashboard's history answers across the boundary: the thinned month-old windows, the full
    # recent ones and today's upload, each counted once.
    start = partitions.start_of(merged_hourly)
    h = account.get(
        f"/api/v1/servers/{server_id}/history",
        params={"start": start.isoformat(), "end": at.isoformat(), "max_points": 400},
    )
    assert h.status_code == 200, h.text
    pts = h.json()["points"]
    assert sum(p["samples"] for p in pts) == 3 + PER_DAY + PER_DAY + 1
    first_day_end = start + timedelta(days=1)
    old = [p for p in pts if datetime.fromisoformat(p["end"]) <= first_day_end + timedelta(hours=3)]
    assert sum(p["samples"] for p in old) == 3
    # the kept windows' own measurements: 01:40, 02:40, 03:40 are windows 2, 5, 8 (12, 15, 18 %)
    assert sum(p["measured_hit_ratio"] * p["samples"] for p in old) / 3 == pytest.approx(0.15)
    c = account.get(
        f"/api/v1/servers/{server_id}/curves",
        params={"start": start.isoformat(), "end": at.isoformat(), "max_curves": 200},
    )
    assert c.status_code == 200, c.text
    ends = [datetime.fromisoformat(x["window_end"]) for x in c.json()["curves"]]
    assert any(e < start + timedelta(days=1) for e in ends) and any(
        e >= partitions.start_of(recent) for e in ends
    )
    acc = account.get(
        f"/api/v1/servers/{server_id}/accuracy",
        params={"start": start.isoformat(), "end": at.isoformat(), "max_points": 400},
    )
    assert acc.status_code == 200, acc.text
    assert sum(p["samples"] for p in acc.json()["points"]) == 3 + PER_DAY + PER_DAY


def test_an_upload_whose_day_has_no_partition_creates_it_and_is_stored(account: Any) -> None:
    """The job creates days ahead; if it has not run (beat stopped), the upload path creates its
    window's day itself and stores the window: nothing refused for a missing partition."""
    today = partitions.day_of(datetime.now(UTC))
    with get_sessionmaker()() as db:

        def rows_on(day: Any) -> int:
            lo = partitions.start_of(day)
            p = {"lo": lo, "hi": lo + timedelta(days=1)}
            where = "{c} >= :lo AND {c} < :hi"
            return sum(_count(db, t, where.format(c=c), p) for t, c in partitions.PARTITIONED.items())

        # A past day no other test has stored rows on (their histories reach back up to 7 days;
        # dropping a day they use would take their rows): an upload may be up to 7 days old.
        empty = [d for d in (today - timedelta(days=n) for n in range(6, 1, -1)) if rows_on(d) == 0]
        assert empty, "every day 2-6 days back holds other tests' rows"
        day = empty[0]
        for table in partitions.PARTITIONED:
            partitions.drop(db, table, day)
        db.commit()
        assert not _exists(db, "snapshots", day)
    end = partitions.start_of(day) + timedelta(hours=12)
    server_id, snap = upload_snapshot(account, address="10.0.19.6:11211", end=end)
    with get_sessionmaker()() as db:
        for table in partitions.PARTITIONED:
            assert _exists(db, table, day), table
        stored = db.execute(
            text("SELECT classes FROM snapshots WHERE id = :s AND window_end = :e"),
            {"s": uuid.UUID(snap["snapshot_id"]), "e": end},
        ).scalar_one()
    assert len(unpack(stored)) == len(snap["classes"]) > 0


# --- EXPLAIN: the hot queries read the partitions they need, through indexes ------------------


@contextmanager
def _captured() -> Iterator[list[tuple[str, Any]]]:
    """The SQL statements (with their parameters) the block sends to PostgreSQL."""
    seen: list[tuple[str, Any]] = []

    def grab(conn: Any, cursor: Any, statement: str, params: Any, context: Any, executemany: bool) -> None:
        seen.append((statement, params))

    engine = get_engine()
    event.listen(engine, "before_cursor_execute", grab)
    try:
        yield seen
    finally:
        event.remove(engine, "before_cursor_execute", grab)


def _plan(db: Any, statement: str, params: Any) -> list[dict[str, Any]]:
    """Every node of EXPLAIN ANALYZE's plan of a captured statement."""
    raw = db.connection().exec_driver_sql(f"EXPLAIN (ANALYZE, FORMAT JSON) {statement}", params).scalar_one()
    nodes: list[dict[str, Any]] = []

    def walk(n: dict[str, Any]) -> None:
        nodes.append(n)
        for c in n.get("Plans", []):
            walk(c)

    walk(raw[0]["Plan"])
    return nodes


_PART = re.compile(r"^(?P<table>[a-z_]+)_p(?P<day>\d{8})$")


def _scanned(nodes: list[dict[str, Any]], table: str) -> dict[str, tuple[str, int]]:
    """Partitions of `table` the plan reads: name -> (scan node type, loops actually run)."""
    out: dict[str, tuple[str, int]] = {}
    for n in nodes:
        rel = n.get("Relation Name", "")
        m = _PART.match(rel)
        if m and m["table"] == table:
            loops = int(n.get("Actual Loops", 0))
            prev = out.get(rel)
            out[rel] = (n["Node Type"], loops + (prev[1] if prev else 0))
    return out


def _day(rel: str) -> Any:
    m = _PART.match(rel)
    assert m is not None
    return datetime.strptime(m["day"], "%Y%m%d").date()


@pytest.fixture(scope="module")
def fleet(app: Any) -> dict[str, Any]:
    """One organization with 30 servers, a window every 10 minutes for the last 8 days, analyzed
    (so the planner sees the real sizes)."""
    org = uuid.uuid4()
    at = datetime.now(UTC).replace(second=0, microsecond=0)
    t0 = at - timedelta(days=8) + timedelta(minutes=1)
    with get_sessionmaker()() as db:
        db.execute(text("INSERT INTO organizations (id, name) VALUES (:o, 'explain fleet')"), {"o": org})
        servers = [uuid.uuid4() for _ in range(30)]
        for i, s in enumerate(servers):
            db.execute(
                text(
                    "INSERT INTO servers (id, org_id, address, instance_id, settings)"
                    " VALUES (:s, :o, :a, '1-1', '{}')"
                ),
                {"s": s, "o": org, "a": f"10.19.0.{i}:11211"},
            )
        db.execute(
            text(
                "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start, window_end,"
                " limit_maxbytes, curve_points, cmd_get, get_hits, get_misses, bytes_used, curr_items,"
                " measured_hit_ratio, loss_ratio, flagged, status, total_malloced, memory_full)"
                " SELECT gen_random_uuid(), :o, v.id, '1-1', t - interval '1 minute', t, 67108864, 2, 100,"
                " 50, 50,"
                " 1000, 10, 0.5, 0, false, 'processed', 67108864, true"
                " FROM servers v, generate_series(CAST(:t0 AS timestamptz), :at, interval '10 minutes') t"
                " WHERE v.org_id = :o"
            ),
            {"o": org, "t0": t0, "at": at},
        )
        db.execute(
            text(
                "INSERT INTO server_curves (org_id, server_id, snapshot_id, window_end, sizes_bytes,"
                " hit_ratio_proportional, current_bytes, measured_hit_ratio, predicted_hit_ratio,"
                " calibration,"
                " advice) SELECT org_id, server_id, id, window_end, '{1,2}', '{0.1,0.2}', 1, 0.5, 0.5, '{}',"
                " '{}'"
                " FROM snapshots WHERE org_id = :o"
            ),
            {"o": org},
        )
        db.commit()
    with get_engine().connect() as conn:
        conn.execute(text("ANALYZE snapshots"))
        conn.execute(text("ANALYZE server_curves"))
        conn.commit()
    return {"org": org, "servers": servers, "at": at}


_SIZE = text("SELECT pg_relation_size(to_regclass(:q))")


def _check_index_only_newest(db: Any, nodes: list[dict[str, Any]], table: str, oldest_needed: Any) -> None:
    scanned = _scanned(nodes, table)
    assert scanned, f"no partition of {table} in the plan"
    # The days created ahead (hitcurve.core.partitions) are empty: a sequential scan of nothing
    # is what the planner rightly picks there, and costs nothing.
    seq = {
        rel
        for rel, (kind, _) in scanned.items()
        if kind == "Seq Scan" and db.execute(_SIZE, {"q": f"{partitions.SCHEMA}.{rel}"}).scalar()
    }
    assert not seq, f"sequential scans: {seq}"
    ran = {rel for rel, (_, loops) in scanned.items() if loops > 0}
    older = {rel for rel in ran if _day(rel) < oldest_needed}
    assert not older, f"read partitions older than needed: {sorted(older)}"


def test_latest_curve_and_recent_fill_read_only_the_newest_partitions_by_index(fleet: dict[str, Any]) -> None:
    org, servers, at = fleet["org"], fleet["servers"], fleet["at"]
    today = partitions.day_of(at)
    with get_sessionmaker()() as db:
        with _captured() as seen:
            latest = curves_crud.latest_server_curve(db, org, servers[0])
        assert latest is not None and at - latest.window_end < timedelta(minutes=10)
        (stmt, params), *_ = [s for s in seen if "server_curves" in s[0]]
        _check_index_only_newest(db, _plan(db, stmt, params), "server_curves", today - timedelta(days=1))

        with _captured() as seen:
            fills = curves_crud.recent_fill_by_server(db, org, servers)
        assert set(fills) == set(servers) and all(len(v) == 60 for v in fills.values())
        (stmt, params), *_ = [s for s in seen if "snapshots" in s[0]]
        # 60 windows 10 minutes apart: at most the last 11 hours, today's or yesterday's partition
        _check_index_only_newest(db, _plan(db, stmt, params), "snapshots", today - timedelta(days=1))


def test_history_range_is_pruned_to_its_days(fleet: dict[str, Any]) -> None:
    org, servers, at = fleet["org"], fleet["servers"], fleet["at"]
    start, end = at - timedelta(days=4, hours=12), at - timedelta(days=3)
    wanted = set(partitions.days(partitions.day_of(start), partitions.day_of(end)))
    with get_sessionmaker()() as db:
        with _captured() as seen:
            h = history_crud.history(db, org, "server", servers[1], start, end, 100)
        assert sum(p.samples for p in h.points) == 1.5 * 24 * 6  # one window per 10 minutes
        (stmt, params), *_ = [s for s in seen if "FROM snapshots" in s[0]]
        nodes = _plan(db, stmt, params)
        for table in ("snapshots", "server_curves"):
            scanned = _scanned(nodes, table)
            assert {_day(rel) for rel in scanned} <= wanted, (table, sorted(scanned))
            assert not {rel for rel, (kind, _) in scanned.items() if kind == "Seq Scan"}, (table, scanned)


def test_worker_lookups_and_look_backs_plan_only_their_days(fleet: dict[str, Any]) -> None:
    """The worker's task carries its snapshot's window end (hitcurve.core.tasks.snapshot_args), so
    its lookup by id, its in-order check and its look-backs (previous curve, the band's history,
    memcached's fill) name the partition column: PostgreSQL plans (and locks) only the days from
    the window - LOOKBACK on, not all eight days of the fixture; and only up to the window's own
    day (what came before it) or the latest window an upload can have (what may be newer), not
    the empty days made ahead of time."""
    from hitcurve.models import Snapshot
    from hitcurve_worker import drain_tasks as drains
    from hitcurve_worker import snapshot_loads as loads
    from hitcurve_worker import snapshot_store as store
    from hitcurve_worker import snapshot_tasks as st

    servers, at = fleet["servers"], fleet["at"]
    with get_sessionmaker()() as db:
        snap = db.execute(
            select(Snapshot)
            .where(Snapshot.server_id == servers[2])
            .order_by(Snapshot.window_end.desc())
            .limit(1)
        ).scalar_one()
        with _captured() as seen:
            loads.previous_curves(db, [snap], st.LOOKBACK, 40, 1000)
            loads.histories(db, [snap], st.LOOKBACK, 10)
            loads.recent_fills(db, [snap], st.LOOKBACK)
            loads.server_facts(db, [snap])
            pending = st.earlier_pending(snap.id, snap.window_end)
        assert pending == []
        with _captured() as claim:  # claims none (n = 0): other tests' pending rows stay theirs
            claimed = store.claim_pending(db, datetime.now(UTC) - drains.CLAIM_SPAN, 0, 3)
        assert claimed == []
        oldest = partitions.day_of(snap.window_end - st.LOOKBACK)
        own_day = partitions.day_of(snap.window_end)
        latest = partitions.day_of(datetime.now(UTC) + loads.HORIZON)
        ahead = {_day(rel) for rel in _scanned(_plan(db, "SELECT * FROM snapshots", {}), "snapshots")}
        assert max(ahead) > latest  # the fixture has days made ahead of time that could be planned
        statements = [s for s in seen if "snapshots" in s[0] or "server_curves" in s[0]]
        assert len(statements) >= 5  # previous curve, history, fill, facts, in-order check
        for stmt, params in statements:
            nodes = _plan(db, stmt, params)
            before_only = "hit_ratio_calibrated" in stmt or "error_pp" in stmt  # previous, history
            for table in ("snapshots", "server_curves", "accuracy_records"):
                planned = {_day(rel) for rel in _scanned(nodes, table)}
                too_old = {d for d in planned if d < partitions.day_of(snap.window_end - st.MAX_PAST)}
                assert not too_old, (stmt, table, sorted(too_old))
                if "status" not in stmt:  # all but the in-order check read LOOKBACK's days
                    assert all(d >= oldest for d in planned), (stmt, table, sorted(planned))
                newest = own_day if before_only else latest
                assert all(d <= newest for d in planned), (stmt, table, sorted(planned))
        # a drain's claim: the claimable days (CLAIM_SPAN back), not those made ahead either
        (days,) = _planned_days(db, [c for c in claim if "row_number()" in c[0]], "snapshots")
        assert days and max(days) <= latest, sorted(days)
    assert at - snap.window_end < timedelta(minutes=10)


def _planned_days(db: Any, seen: list[tuple[str, Any]], table: str) -> list[set[Any]]:
    """Per captured statement reading `table`: the days of its partitions in the plan (planned,
    whether or not they ran: planning and locking them is the cost)."""
    return [{_day(rel) for rel in _scanned(_plan(db, s, p), table)} for s, p in seen if table in s]


def test_newest_n_queries_and_metrics_plan_only_the_last_day(fleet: dict[str, Any]) -> None:
    """The API's newest-N queries (the band's recent errors, the recent windows an answer weighs,
    memcached's fill) and /metrics' latest snapshot per server name no time; each first asks
    with crud.newest's bound (FIRST_SPAN), which plans today's and yesterday's partitions, not the
    fixture's nine days. A server silent for longer is asked again without it, and its answer is
    the same as before: its newest rows, whatever their age."""
    from hitcurve.crud import metrics as metrics_crud
    from hitcurve.crud.newest import FIRST_SPAN

    org, servers, at = fleet["org"], fleet["servers"], fleet["at"]
    srv = servers[3]
    oldest = partitions.day_of(datetime.now(UTC) - FIRST_SPAN)
    silent = uuid.uuid4()  # last window 3 days ago
    with get_sessionmaker()() as db:
        db.execute(
            text(
                "INSERT INTO accuracy_records (org_id, server_id, snapshot_id, window_start, window_end,"
                " memory_bytes, predicted_hit_ratio, measured_hit_ratio, error_pp, basis, computed_at)"
                " SELECT org_id, server_id, id, window_start, window_end, 1, 0.5, 0.5,"
                " extract(epoch FROM window_end) / 1e6, 'calibrated', now()"
                " FROM snapshots WHERE org_id = :o AND server_id = :s"
            ),
            {"o": org, "s": srv},
        )
        db.execute(
            text(
                "INSERT INTO servers (id, org_id, address, instance_id, settings)"
                " VALUES (:s, :o, '10.19.1.1:11211', '1-1', '{}')"
            ),
            {"s": silent, "o": org},
        )
        db.execute(
            text(
                "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start, window_end,"
                " limit_maxbytes, curve_points, cmd_get, get_hits, get_misses, bytes_used, curr_items,"
                " measured_hit_ratio, loss_ratio, flagged, status)"
                " SELECT gen_random_uuid(), :o, :s, '1-1', t - interval '1 minute', t, 67108864, 2, 100,"
                " 50, 50, 1000, 10, g / 100.0, 0, false, 'processed'"
                " FROM generate_series(1, 5) g, LATERAL (SELECT CAST(:t AS timestamptz)"
                " - make_interval(days => 3, mins => 10 * (5 - g)) AS t) x"
            ),
            {"o": org, "s": silent, "t": at},
        )
        db.commit()

        with _captured() as seen:
            errors = history_crud.recent_errors_pp(db, org, [srv], 60)
            windows = curves_crud.recent_server_windows(db, org, srv, 20)
            fill = curves_crud.recent_fill(db, org, srv)
        # the newest 60 records, newest first (error_pp grows with the window's end)
        assert len(errors) == 60 and errors == sorted(errors, reverse=True)
        assert len(windows) == 20 and at - windows[-1][0].window_end < timedelta(minutes=10)
        assert len(fill) == 60 and fill == sorted(fill, key=lambda r: r.window_end)
        assert len(seen) == 3  # one statement each: the last day held enough rows
        for table in ("snapshots", "server_curves", "accuracy_records"):
            for days in _planned_days(db, seen, table):
                assert days and min(days) >= oldest, (table, sorted(days))

        with _captured() as seen:
            states = {s.id: s for s in metrics_crud.servers(db, org)}
        assert states[srv].measured_hit_ratio == 0.5
        assert states[silent].measured_hit_ratio == 0.05  # its newest window, 3 days old
        first, *again = [(s, p) for s, p in seen if "DISTINCT ON" in s]
        (days,) = _planned_days(db, [first], "snapshots")
        assert days and min(days) >= oldest, sorted(days)
        assert len(again) == 1  # the silent server alone, over every day
        assert _planned_days(db, again, "snapshots")[0] and str(silent) in str(again[0][1])

        with _captured() as seen:
            fill = curves_crud.recent_fill(db, org, silent)
        assert [r.window_end for r in fill] == sorted(r.window_end for r in fill) and len(fill) == 5
        assert len(seen) == 2  # fewer rows in the last day than asked for: once more, unbounded


def test_newest_n_per_server_plans_only_the_last_day_and_asks_again_for_short_servers(
    fleet: dict[str, Any],
) -> None:
    """The servers list, /metrics and a cluster's nodes read each server's newest windows in one
    LATERAL query (recent_fill_by_server, recent_window_facts_by_server). Without a bound on the
    partition column PostgreSQL plans every day of the retention for each server; bounded by
    FIRST_SPAN it plans the last day's partitions, and only the servers that had fewer windows
    in it (here one whose newest window is 3 days old) are asked again, unbounded, alone."""
    from hitcurve.crud.newest import FIRST_SPAN

    org, servers, at = fleet["org"], fleet["servers"][5:8], fleet["at"]
    oldest = partitions.day_of(datetime.now(UTC) - FIRST_SPAN)
    quiet = uuid.uuid4()
    with get_sessionmaker()() as db:
        db.execute(
            text(
                "INSERT INTO servers (id, org_id, address, instance_id, settings)"
                " VALUES (:s, :o, '10.19.2.1:11211', '1-1', '{}')"
            ),
            {"s": quiet, "o": org},
        )
        db.execute(
            text(
                "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start, window_end,"
                " limit_maxbytes, curve_points, cmd_get, get_hits, get_misses, bytes_used, curr_items,"
                " measured_hit_ratio, loss_ratio, flagged, status, total_malloced, memory_full)"
                " SELECT gen_random_uuid(), :o, :s, '1-1', t - interval '1 minute', t, 67108864, 2, 100,"
                " 50, 50, 1000, 10, 0.5, 0, false, 'processed', 67108864, true"
                " FROM generate_series(1, 4) g, LATERAL (SELECT CAST(:t AS timestamptz)"
                " - make_interval(days => 3, mins => 10 * (4 - g)) AS t) x"
            ),
            {"o": org, "s": quiet, "t": at},
        )
        db.execute(
            text(
                "INSERT INTO server_curves (org_id, server_id, snapshot_id, window_end, sizes_bytes,"
                " hit_ratio_proportional, current_bytes, measured_hit_ratio, predicted_hit_ratio,"
                " calibration, advice) SELECT org_id, server_id, id, window_end, '{1,2}', '{0.1,0.2}', 1,"
                " 0.5, 0.5, '{}', '{}' FROM snapshots WHERE org_id = :o AND server_id = :s"
            ),
            {"o": org, "s": quiet},
        )
        db.commit()
        asked = [*servers, quiet]
        for read, table in (
            (lambda: curves_crud.recent_fill_by_server(db, org, asked, 60), "snapshots"),
            (lambda: curves_crud.recent_window_facts_by_server(db, org, asked, 60), "server_curves"),
            (lambda: curves_crud.recent_server_windows_by_server(db, org, asked, 60), "server_curves"),
        ):
            with _captured() as seen:
                rows = read()
            assert {s: len(rows[s]) for s in asked} == {**{s: 60 for s in servers}, quiet: 4}
            for s in asked:  # oldest first; the fleet's servers' newest within 10 minutes of now
                ends = [_end(r) for r in rows[s]]
                assert ends == sorted(ends), s
            assert all(at - _end(rows[s][-1]) < timedelta(minutes=10) for s in servers)
            first, again = [(st, p) for st, p in seen if table in st]
            (days,) = _planned_days(db, [first], table)
            assert days and min(days) >= oldest, (table, sorted(days))
            # the second question names the quiet server alone, and reaches its days
            assert str(quiet) in str(again[1]) and not any(str(s) in str(again[1]) for s in servers)
            (days,) = _planned_days(db, [again], table)
            assert min(days) <= partitions.day_of(at - timedelta(days=3)), (table, sorted(days))


def _end(row: Any) -> Any:
    """A newest-N row's window end: its own column, or its whole stored curve's."""
    return row.ServerCurve.window_end if hasattr(row, "ServerCurve") else row.window_end


def test_members_windows_and_attach_evictions_in_one_query_each_equal_the_per_server_reads(
    fleet: dict[str, Any],
) -> None:
    """A cluster answer reads its members' recent windows and each member's evictions at attach
    with one statement each (recent_server_windows_by_server, attach_evictions_by_server), not one
    per member: the same rows as the one-server reads, whatever the number of members."""
    org, servers = fleet["org"], fleet["servers"][10:16]
    with get_sessionmaker()() as db:
        db.execute(
            text("UPDATE snapshots SET evictions_total = 7 WHERE org_id = :o AND server_id = :s"),
            {"o": org, "s": servers[0]},
        )
        db.commit()
        with _captured() as seen:
            many = curves_crud.recent_server_windows_by_server(db, org, servers, 30)
            bases = curves_crud.attach_evictions_by_server(db, org, {s: "1-1" for s in servers})
        assert len([st for st, _ in seen if "server_curves" in st]) == 1
        assert len([st for st, _ in seen if "evictions_total" in st]) == 1
        for s in servers:
            one = curves_crud.recent_server_windows(db, org, s, 30)
            assert len(one) == 30
            assert [r.ServerCurve.id for r in many[s]] == [r.ServerCurve.id for r in one]
            assert [(r.cmd_get, r.loss_ratio, r.flagged, r.basis, r.flag_detail) for r in many[s]] == [
                (r.cmd_get, r.loss_ratio, r.flagged, r.basis, r.flag_detail) for r in one
            ]
            assert many[s][-1].ServerCurve.sizes_bytes == one[-1].ServerCurve.sizes_bytes
            assert bases[s] == curves_crud.attach_evictions(db, org, s, "1-1")
        assert bases[servers[0]] == 7 and bases[servers[1]] is None
        # an instance with no window says nothing, as the one-server read
        assert curves_crud.attach_evictions_by_server(db, org, {servers[2]: "9-9"}) == {servers[2]: None}
