"""The Alembic revision upgrades an empty database to exactly the models' schema and downgrades to base."""

import os
import uuid
from pathlib import Path

from alembic import command
from alembic.autogenerate import compare_metadata
from alembic.config import Config
from alembic.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

from hitcurve.models import Base

ROOT = Path(__file__).resolve().parents[2]
EXPECTED = {
    "organizations",
    "users",
    "memberships",
    "user_sessions",
    "login_attempts",
    "agent_keys",
    "api_tokens",
    "clusters",
    "servers",
    "snapshots",
    "snapshot_classes",
    "trace_chunks",
    "server_curves",
    "accuracy_records",
    "cluster_curves",
    "alerts",
    "simulation_runs",
    "simulation_results",
    "report_subscriptions",
    "report_deliveries",
    "audit_log",
}


def test_upgrade_from_empty_matches_models_and_downgrades_to_base() -> None:
    server = os.environ["HITCURVE_DATABASE_URL"].rsplit("/", 1)[0]
    name = f"hitcurve_mig_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server + "/postgres", isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{name}"'))
    engine = create_engine(f"{server}/{name}")
    cfg = Config(str(ROOT / "alembic.ini"))
    cfg.attributes["url"] = f"{server}/{name}"
    try:
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
    finally:
        engine.dispose()
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()
