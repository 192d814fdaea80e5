"""The Alembic revisions upgrade an empty database to exactly the models' schema and downgrade to base;
data migrations keep the stored data."""

import gzip
import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import Connection, Engine, create_engine, inspect, text

from hitcurve.ingest.classpack import unpack
from hitcurve.models import Base

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {
    "organizations",
    "users",
    "memberships",
    "user_sessions",
    "login_attempts",
    "invitations",
    "password_resets",
    "signup_requests",
    "agent_keys",
    "api_tokens",
    "clusters",
    "servers",
    "snapshots",
    "trace_chunks",
    "server_curves",
    "policy_corrections",
    "accuracy_records",
    "cluster_curves",
    "alerts",
    "notification_channels",
    "alert_deliveries",
    "install_settings",
    "simulation_runs",
    "simulation_results",
    "report_subscriptions",
    "report_deliveries",
    "audit_log",
}


@contextmanager
def _scratch_db() -> Iterator[tuple[Engine, Config]]:
    server = os.environ["HITCURVE_DATABASE_URL"].rsplit("/", 1)[0]
    name = f"hitcurve_mig_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server + "/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    engine = create_engine(f"{server}/{name}")
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.attributes["url"] = f"{server}/{name}"
    try:
        yield engine, cfg
    finally:
        engine.dispose()
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def test_upgrade_from_empty_matches_models_and_downgrades_to_base() -> None:
    with _scratch_db() as (engine, cfg):
        command.upgrade(cfg, "head")
        assert set(inspect(engine).get_table_names()) == EXPECTED | {"alembic_version"}
        with engine.connect() as conn:
            diff = compare_metadata(
                MigrationContext.configure(conn, opts={"compare_type": True}), Base.metadata
            )
        assert diff == [], f"models and migration differ: {diff}"
        command.downgrade(cfg, "base")
        assert set(inspect(engine).get_table_names()) == {"alembic_version"}
        command.upgrade(cfg, "head")  # and up again
        assert "snapshots" in inspect(engine).get_table_names()


def _org_and_server(c: Connection, org: uuid.UUID, server: uuid.UUID) -> None:
    c.execute(text("INSERT INTO organizations (id, name) VALUES (:o, 'o')"), {"o": org})
    c.execute(
        text(
            "INSERT INTO servers (id, org_id, address, instance_id, settings)"
            " VALUES (:s, :o, 'a:1', 'i', '{}')"
        ),
        {"s": server, "o": org},
    )


def test_0002_converts_stored_payloads_to_gzip_and_back() -> None:
    """Snapshots stored before revision 0002 (JSONB payloads) keep their payload, as gzip, and get
    it back as JSONB on downgrade; a payload already dropped by retention stays dropped."""
    with _scratch_db() as (engine, cfg):
        command.upgrade(cfg, "0001")
        org, server = uuid.uuid4(), uuid.uuid4()
        docs = {uuid.uuid4(): {"schema_version": 1, "n": i, "name": "caf\u00e9 \u2603"} for i in range(3)}
        dropped = uuid.uuid4()
        with engine.begin() as c:
            _org_and_server(c, org, server)
            for sid, doc in [*docs.items(), (dropped, {})]:
                c.execute(
                    text(
                        "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start,"
                        " window_end, limit_maxbytes, curve_points, cmd_get, get_hits, get_misses,"
                        " bytes_used, curr_items, loss_ratio, flagged, payload) VALUES (:id, :o, :s, 'i',"
                        " now(), now(), 1, 100, 0, 0, 0, 0, 0, 0, false, CAST(:p AS jsonb))"
                    ),
                    {"id": sid, "o": org, "s": server, "p": json.dumps(doc)},
                )
        command.upgrade(cfg, "0002")
        with engine.connect() as c:
            rows = dict(c.execute(text("SELECT id, payload_gzip FROM snapshots")).all())
        assert rows[dropped] is None
        assert {k: json.loads(gzip.decompress(v)) for k, v in rows.items() if k != dropped} == docs
        command.downgrade(cfg, "0001")
        with engine.connect() as c:
            back = dict(c.execute(text("SELECT id, payload FROM snapshots")).all())
        assert back == {**docs, dropped: {}}


_0012_TABLES = {
    "snapshots": "id",
    "snapshot_classes": "snapshot_id, class_id",
    "server_curves": "snapshot_id",
    "accuracy_records": "snapshot_id",
    "cluster_curves": "computed_at",
}


def _rows(engine: Engine) -> dict[str, list[dict[str, object]]]:
    """Every row of the 0012 tables, without snapshot_classes' surrogate id and its copied
    window_end (the two columns 0012 changes)."""
    out: dict[str, list[dict[str, object]]] = {}
    with engine.connect() as c:
        for table, order in _0012_TABLES.items():
            rows = [dict(r._mapping) for r in c.execute(text(f"SELECT * FROM {table} ORDER BY {order}"))]  # noqa: S608
            if table == "snapshot_classes":
                for r in rows:
                    r.pop("id", None)
                    r.pop("window_end", None)
            out[table] = rows
    return out


def test_0012_moves_rows_into_day_partitions_with_the_same_answers_and_back() -> None:
    """Rows stored before the tables were partitioned (one day 20 days old, beyond the days the
    migration creates anyway, and today) are all there after 0012, in their day's partition, and
    the dashboard's queries answer from them as before; downgrade puts them back."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy.orm import Session

    from hitcurve.core import partitions
    from hitcurve.crud import curves as curves_crud
    from hitcurve.crud import history as history_crud

    with _scratch_db() as (engine, cfg):
        command.upgrade(cfg, "0011")
        org, server, cluster = uuid.uuid4(), uuid.uuid4(), uuid.uuid4()
        now = datetime.now(UTC).replace(microsecond=0)
        old = now - timedelta(days=20)
        ends = [old, old + timedelta(minutes=1), now - timedelta(hours=2), now - timedelta(hours=1)]
        snaps = [uuid.uuid4() for _ in ends]
        with engine.begin() as c:
            c.execute(text("INSERT INTO organizations (id, name) VALUES (:o, 'o')"), {"o": org})
            c.execute(
                text(
                    "INSERT INTO clusters (id, org_id, name, price_per_gb_month, target_hit_ratio) VALUES"
                    " (:c, :o, 'c', 1, 0.9)"
                ),
                {"c": cluster, "o": org},
            )
            c.execute(
                text(
                    "INSERT INTO servers (id, org_id, cluster_id, address, instance_id, settings)"
                    " VALUES (:s, :o, :c, 'a:1', 'i', '{}')"
                ),
                {"s": server, "o": org, "c": cluster},
            )
            for i, (sid, end) in enumerate(zip(snaps, ends, strict=True)):
                p = {
                    "id": sid,
                    "o": org,
                    "s": server,
                    "c": cluster,
                    "end": end,
                    "h": 40 + i,
                    "prev": snaps[i - 1] if i else None,
                }
                c.execute(
                    text(
                        "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start, window_end,"
                        " limit_maxbytes, curve_points, cmd_get, get_hits, get_misses, bytes_used,"
                        " curr_items,"
                        " measured_hit_ratio, loss_ratio, flagged, payload_gzip, status, basis)"
                        " VALUES (:id, :o, :s, 'i', CAST(:end AS timestamptz) - interval '1 minute', :end,"
                        " 1000,"
                        " 2, 100, :h, 100 - :h, 10, 1, :h / 100.0, 0.01, false, '\\x1f8b00', 'processed',"
                        " 'watch')"
                    ),
                    p,
                )
                for cls in (1, 5):
                    c.execute(
                        text(
                            "INSERT INTO snapshot_classes (org_id, snapshot_id, class_id, chunk_size, pages,"
                            " items,"
                            " evictions, requests, current_items, sizes_items, hit_ratios, ttl_sizes_items,"
                            " ttl_hit_ratios)"
                            " VALUES (:o, :id, :k, 96 * :k, 1, 10, 0, 100, 10, '{1,2}', '{0.25,0.5}',"
                            " '{1,2}', '{0.2,0.4}')"
                        ),
                        {**p, "k": cls},
                    )
                c.execute(
                    text(
                        "INSERT INTO server_curves (org_id, server_id, snapshot_id, window_end, sizes_bytes,"
                        " hit_ratio_proportional, hit_ratio_calibrated, current_bytes, measured_hit_ratio,"
                        " predicted_hit_ratio, calibration, advice) VALUES (:o, :s, :id, :end, '{10,20}',"
                        " '{0.1,0.2}', '{0.15,0.3}', 15, :h / 100.0, 0.2, '{\"a\": 1}', '{}')"
                    ),
                    p,
                )
                c.execute(
                    text(
                        "INSERT INTO accuracy_records (org_id, server_id, snapshot_id,"
                        " predicted_from_snapshot_id,"
                        " window_start, window_end, memory_bytes, predicted_hit_ratio, measured_hit_ratio,"
                        " error_pp,"
                        " basis) VALUES (:o, :s, :id, :prev, CAST(:end AS timestamptz) - interval '1"
                        " minute', :end,"
                        " 15, 0.2, :h / 100.0, (0.2 - :h / 100.0) * 100, 'calibrated')"
                    ),
                    p,
                )
                c.execute(
                    text(
                        "INSERT INTO cluster_curves (org_id, cluster_id, computed_at, window_end, basis,"
                        " sizes_bytes,"
                        " hit_ratios, current_bytes, server_count, inputs) VALUES (:o, :c, :end, :end,"
                        " 'calibrated', '{10,20}', '{0.1,0.2}', 15, 1, '{}')"
                    ),
                    p,
                )
        before = _rows(engine)
        assert len(before["snapshot_classes"]) == 8

        command.upgrade(cfg, "0012")
        assert _rows(engine) == before
        with engine.connect() as c:
            homes = dict(
                c.execute(
                    text("SELECT id, tableoid::regclass::text FROM snapshots")
                ).all()  # the day partitions
            )
            ends_by_class = c.execute(
                text("SELECT DISTINCT snapshot_id, window_end FROM snapshot_classes")
            ).all()
        assert (
            homes[snaps[0]] == f"{partitions.SCHEMA}.{partitions.name('snapshots', partitions.day_of(old))}"
        )
        assert dict(ends_by_class) == dict(zip(snaps, ends, strict=True))
        # later revisions add columns (0013 the classes' ghost reach and filters: NULL on the rows
        # stored before, every partition), then 0023 packs each snapshot's class rows into
        # snapshots.classes; the dashboard's queries are today's models: from head on
        command.upgrade(cfg, "0022")
        with engine.connect() as c:
            ghosts = c.execute(
                text("SELECT count(*), count(ghost_reach_items), count(ghost_filters) FROM snapshot_classes")
            ).one()
            class_rows = c.execute(
                text(
                    "SELECT snapshot_id, class_id, chunk_size, pages, items, evictions, requests,"
                    " current_items, sizes_items, hit_ratios, cost_count, cost_mean_us, ttl_sizes_items,"
                    " ttl_hit_ratios"
                    " FROM snapshot_classes ORDER BY snapshot_id, class_id"
                )
            ).all()
        assert tuple(ghosts) == (8, 0, 0)
        command.upgrade(cfg, "head")
        assert "snapshot_classes" not in inspect(engine).get_table_names()
        with engine.connect() as c:
            packed = c.execute(text("SELECT id, classes FROM snapshots ORDER BY id")).all()
        unpacked = [
            (sid, k.class_id, k.chunk_size, k.pages, k.items, k.evictions, k.requests, k.current_items)
            + (k.sizes_items, k.hit_ratios, k.cost_count, k.cost_mean_us, k.ttl_sizes_items, k.ttl_hit_ratios)
            for sid, blob in packed
            for k in unpack(blob)
        ]
        assert unpacked == [tuple(r) for r in class_rows]  # value for value
        with Session(engine) as db:
            latest = curves_crud.latest_server_curve(db, org, server)
            assert latest is not None and latest.snapshot_id == snaps[-1]
            assert curves_crud.snapshot_loss(db, latest) is not None
            h = history_crud.history(db, org, "server", server, old - timedelta(hours=1), now, 1000)
            assert sum(p.samples for p in h.points) == 4
            assert [p.predicted_hit_ratio for p in h.points] == [0.2] * len(h.points)
            a = history_crud.accuracy(db, org, "server", server, old - timedelta(hours=1), now, 1000)
            assert sum(p.samples for p in a.points) == 4
            newest = curves_crud.latest_snapshot(db, org, server)
            assert newest is not None and newest.id == snaps[-1]
            assert [k.class_id for k in curves_crud.snapshot_classes(db, org, newest)] == [1, 5]
            assert curves_crud.latest_cluster_curve(db, org, cluster) is not None

        command.downgrade(cfg, "0011")
        assert _rows(engine) == before


def test_0014_keeps_stored_corrections_without_a_ghost_view_and_back() -> None:
    """A policy correction stored before revision 0014 keeps its arrays and gets no ghost view
    (NULL: the worker applies it below today's memory only, no lift); downgrade drops the column
    and keeps the row."""
    cols = "SELECT sizes_bytes, hit_ratio_lru, hit_ratio_policy, reference_bytes, sampled_gets, status"
    with _scratch_db() as (engine, cfg):
        command.upgrade(cfg, "0013")
        org, server = uuid.uuid4(), uuid.uuid4()
        with engine.begin() as c:
            _org_and_server(c, org, server)
            c.execute(
                text(
                    "INSERT INTO policy_corrections (org_id, server_id, status, policy, chunks,"
                    " sampled_requests, sampled_gets, reference_bytes, sizes_bytes, hit_ratio_lru,"
                    " hit_ratio_policy, notes) VALUES (:o, :s, 'ok', 'mcslru', 3, 90000, 50000,"
                    " 1048576, :x, :a, :b, '[]')"
                ),
                {"o": org, "s": server, "x": [0.5e6, 1e6, 2e6], "a": [0.3, 0.5, 0.6], "b": [0.32, 0.5, 0.62]},
            )
        with engine.connect() as c:
            before = c.execute(text(cols + " FROM policy_corrections")).one()
        command.upgrade(cfg, "0014")
        with engine.connect() as c:
            after = c.execute(text(cols + ", hit_ratio_ghost_view FROM policy_corrections")).one()
        assert tuple(after) == (*before, None)
        command.downgrade(cfg, "0013")
        names = {c["name"] for c in inspect(engine).get_columns("policy_corrections")}
        assert "hit_ratio_ghost_view" not in names
        with engine.connect() as c:
            assert c.execute(text(cols + " FROM policy_corrections")).one() == before


def test_0015_extracts_the_breakdown_of_stored_uploads_and_skips_unreadable_ones() -> None:
    """Snapshots stored before revision 0015 get snapshots.breakdown from their stored payload:
    the breakdown fields, the classes' leave counts and the server figures, nothing else; a
    snapshot without a breakdown, a payload retention dropped and one that is not gzip get NULL."""
    with _scratch_db() as (engine, cfg):
        command.upgrade(cfg, "0014")
        org, server = uuid.uuid4(), uuid.uuid4()
        doc = {
            "schema_version": 1,
            "server": {"limit_maxbytes": 33554432, "address": "a:1"},
            "measured": {"hit_ratio": 0.8, "bytes": 27_500_000, "cmd_get": 9},
            "classes": [
                {"id": 5, "chunk_size": 240, "pages": 3, "left": {"expired": 1, "evicted": 2, "deleted": 0},
                 "curve": {"points": [[1, 0.5]]}}
            ],
            "prefixes": [{"prefix": "user", "requests": 10, "hit_ratio": 0.5, "bytes": 100, "points": []}],
            "prefix_other": None,
            "diagnostics": {"padding": list(range(1000))},
        }
        rows = {
            "with": gzip.compress(json.dumps(doc).encode()),
            "without": gzip.compress(json.dumps({"schema_version": 1, "classes": []}).encode()),
            "dropped": None,
            "broken": b"not gzip at all",
        }
        ids = {name: uuid.uuid4() for name in rows}
        with engine.begin() as c:
            _org_and_server(c, org, server)
            for name, payload in rows.items():
                c.execute(
                    text(
                        "INSERT INTO snapshots (id, org_id, server_id, instance_id, window_start,"
                        " window_end, limit_maxbytes, curve_points, cmd_get, get_hits, get_misses,"
                        " bytes_used, curr_items, loss_ratio, flagged, payload_gzip)"
                        " VALUES (:id, :o, :s, 'i', now(), now(), 1, 100, 0, 0, 0, 0, 0, 0, false, :p)"
                    ),
                    {"id": ids[name], "o": org, "s": server, "p": payload},
                )
        command.upgrade(cfg, "0015")
        with engine.connect() as c:
            got = {r.id: r.breakdown for r in c.execute(text("SELECT id, breakdown FROM snapshots"))}
        b = got[ids["with"]]
        assert b["prefixes"] == doc["prefixes"] and b["prefix_other"] is None
        left = doc["classes"][0]["left"]
        assert b["classes"] == [{"id": 5, "chunk_size": 240, "left": left}]  # absent stays absent
        assert b["server"] == {"limit_maxbytes": 33554432}
        assert b["measured"] == {"hit_ratio": 0.8, "bytes": 27_500_000}
        assert "diagnostics" not in b
        assert got[ids["without"]] is None and got[ids["dropped"]] is None and got[ids["broken"]] is None
        command.downgrade(cfg, "0014")
        assert "breakdown" not in {c["name"] for c in inspect(engine).get_columns("snapshots")}
