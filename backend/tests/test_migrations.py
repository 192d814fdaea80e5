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
from sqlalchemy import Engine, create_engine, inspect, text

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
    "snapshot_classes",
    "trace_chunks",
    "server_curves",
    "policy_corrections",
    "accuracy_records",
    "cluster_curves",
    "alerts",
    "notification_channels",
    "alert_deliveries",
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


def test_0002_converts_stored_payloads_to_gzip_and_back() -> None:
    """Snapshots stored before revision 0002 (JSONB payloads) keep their payload, as gzip, and get
    it back as JSONB on downgrade; a payload already dropped by retention stays dropped."""
    with _scratch_db() as (engine, cfg):
        command.upgrade(cfg, "0001")
        org, server = uuid.uuid4(), uuid.uuid4()
        docs = {uuid.uuid4(): {"schema_version": 1, "n": i, "name": "caf\u00e9 \u2603"} for i in range(3)}
        dropped = uuid.uuid4()
        with engine.begin() as c:
            c.execute(text("INSERT INTO organizations (id, name) VALUES (:o, 'o')"), {"o": org})
            c.execute(
                text(
                    "INSERT INTO servers (id, org_id, address, instance_id, settings)"
                    " VALUES (:s, :o, 'a:1', 'i', '{}')"
                ),
                {"s": server, "o": org},
            )
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
