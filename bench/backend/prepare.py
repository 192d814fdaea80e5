"""Prepare the backend benchmark: a fresh database on the dev instance with one organization, an
API token, an agent key and a server with a calibrated curve (uploaded through the ingestion path,
computed by the worker's process_snapshot). Prints shell variables for run.sh."""

import json
import sys
import uuid

from sqlalchemy import create_engine, text

from hitcurve.core.db import get_sessionmaker
from hitcurve.core.principal import Principal
from hitcurve.core.security import AGENT_KEY_PREFIX, API_TOKEN_PREFIX, new_secret, sha256_hex
from hitcurve.crud.ingest import store_snapshot
from hitcurve.models import AgentKey, ApiToken, Organization, Server
from hitcurve.schemas import agent as proto
from hitcurve_testing.snapshots import make_snapshot
from hitcurve_worker.snapshot_tasks import process as process_snapshot


def recreate(server_url: str, name: str) -> None:
    engine = create_engine(server_url + "/postgres", isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    engine.dispose()


def seed(classes: int) -> None:
    token, key = new_secret(API_TOKEN_PREFIX), new_secret(AGENT_KEY_PREFIX)
    with get_sessionmaker()() as db:
        org = Organization(name="bench")
        db.add(org)
        db.flush()
        db.add(
            ApiToken(
                org_id=org.id, name="bench", scope="read", prefix=token[:10], token_hash=sha256_hex(token)
            )
        )
        agent_key = AgentKey(org_id=org.id, name="bench", prefix=key[:10], key_hash=sha256_hex(key))
        db.add(agent_key)
        db.commit()
        org_id, key_id = org.id, agent_key.id
    snap = make_snapshot("10.0.0.1:11211", n_classes=classes)
    raw = json.dumps(snap)
    store_snapshot(
        Principal(kind="agent_key", org_id=org_id, key_id=key_id),
        proto.Snapshot.model_validate_json(raw),
        raw,
    )
    # the worker's own task computes the server curve (merge, calibration, band), in process
    result = process_snapshot(uuid.UUID(snap["snapshot_id"]))
    assert result["status"] == "processed", result
    with get_sessionmaker()() as db:
        server = db.query(Server).filter(Server.org_id == org_id).one()
        print(f"BENCH_SERVER_ID={server.id}")
    print(f"BENCH_TOKEN={token}")
    print(f"BENCH_AGENT_KEY={key}")
    # the snapshot body template for wrk: snapshot_id replaced per request
    template = make_snapshot("BENCH-ADDRESS", n_classes=classes, snapshot_id=uuid.UUID(int=0))
    with open(sys.argv[3], "w") as f:
        json.dump(template, f)


if __name__ == "__main__":
    if sys.argv[1] == "recreate":
        recreate(sys.argv[2], sys.argv[3])
    else:
        seed(int(sys.argv[2]))
