"""PostgreSQL restarted while the worker is processing a batch: every snapshot is processed
exactly once; nothing is lost, nothing parked. Runs on a second private PostgreSQL instance."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import func, select
from worker_helpers import ROOT, clear_caches, make_org, start_worker, upload, wait_for

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, ServerCurve, Snapshot
from hitcurve_testing.snapshots import synthetic_snapshot

pytestmark = [pytest.mark.live, pytest.mark.slow]
N = 12


@pytest.fixture
def second_pg(private_env: dict[str, str]) -> Iterator[tuple[str, str]]:
    inst = f"wpgr-{os.getpid()}"
    script = str(ROOT / "scripts/services.sh")
    subprocess.run(["bash", script, "start", inst], check=True)
    run_dir = ROOT / ".run" / inst
    saved = os.environ["HITCURVE_DATABASE_URL"]
    try:
        env = dict(line.split("=", 1) for line in (run_dir / "env").read_text().splitlines() if "=" in line)
        url = env["HITCURVE_DATABASE_URL"]
        subprocess.run(
            [sys.executable, "-m", "alembic", "upgrade", "head"],
            check=True,
            cwd=ROOT,
            env={**os.environ, "HITCURVE_DATABASE_URL": url},
            stdout=subprocess.DEVNULL,
        )
        os.environ["HITCURVE_DATABASE_URL"] = url
        clear_caches()
        yield inst, url
    finally:
        clear_caches()
        os.environ["HITCURVE_DATABASE_URL"] = saved
        subprocess.run(["bash", script, "stop", inst], check=False)
        subprocess.run(
            ["rm", "-rf", str(run_dir), str(Path(os.path.realpath(run_dir / "pg")).parent)], check=False
        )


def _counts() -> tuple[dict[str, int], int, int]:
    with get_sessionmaker()() as s:
        st = dict(s.execute(select(Snapshot.status, func.count()).group_by(Snapshot.status)).all())
        curves = s.execute(select(func.count()).select_from(ServerCurve)).scalar_one()
        acc = s.execute(select(func.count()).select_from(AccuracyRecord)).scalar_one()
    return {k: int(v) for k, v in st.items()}, int(curves), int(acc)


def _safe_counts() -> tuple[dict[str, int], int, int] | None:
    try:
        return _counts()
    except Exception:
        return None


def test_postgresql_restart_mid_run_loses_nothing(
    second_pg: tuple[str, str], private_env: dict[str, str]
) -> None:
    inst, url = second_pg
    from fastapi.testclient import TestClient

    from hitcurve.main import create_app

    org = make_org("PG restart org")
    w = start_worker(
        {**private_env, "HITCURVE_DATABASE_URL": url, "HITCURVE_WORKER_TEST_PAUSE_S": "0.4"},
        "pgrestart",
        concurrency=2,
    )
    script = str(ROOT / "scripts/services.sh")
    try:
        end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
        with TestClient(create_app()) as client:
            for i in range(N):  # 3 servers x 4 windows
                snap = synthetic_snapshot(
                    address=f"10.5.0.{i % 3}:11211",
                    n_classes=16,
                    total_pages=96,
                    end=end + timedelta(minutes=i // 3),
                    hit_ratio=0.6,
                    seed=i,
                )
                r = upload(client, org, snap)
                assert r.status_code == 202, r.text
        wait_for(
            lambda: (_safe_counts() or ({}, 0, 0))[0].get("processed", 0) >= 2, 60, "the first snapshots"
        )
        # Restart PostgreSQL while the rest are in flight (fast shutdown kills open transactions).
        subprocess.run(["bash", script, "stop", inst], check=True)
        time.sleep(2.0)
        subprocess.run(["bash", script, "start", inst], check=True)
        done = wait_for(
            lambda: (c := _safe_counts()) is not None and c[0].get("processed", 0) == N and c,
            180,
            "every snapshot to be processed after the restart",
        )
        statuses, curves, acc = done
        print(f"\nafter the restart: {statuses}, {curves} server curves, {acc} accuracy records")
        assert statuses == {"processed": N}
        assert curves == N and acc == N
    finally:
        w.stop()
