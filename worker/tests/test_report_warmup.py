"""The weekly e-mail while memcached warms up, against the real PostgreSQL test database and a
real Celery worker that processes the uploads: the week's measured hit rate and curve accuracy
leave the warm-up windows out (memcached still filling: its hit rate rises with the fill, and its
curve is still growing) and the e-mail says how many; a cluster still filling all week reads
"warm-up", and its sizing row says memcached is not yet full, never "not reachable"."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update
from worker_helpers import Org, WorkerProc, make_org, start_worker, upload, wait_for

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, Cluster, Server, Snapshot
from hitcurve.reports.message import preview
from hitcurve_testing.snapshots import make_snapshot

pytestmark = pytest.mark.slow

WARM, FULL = 0.3, 0.8  # the hit rate of the warm-up windows, and of the windows once memcached is full


@pytest.fixture(scope="module")
def worker(private_env: dict[str, str]) -> Iterator[WorkerProc]:
    w = start_worker(private_env, "report-warmup")
    yield w
    w.stop()


def _status(sid: uuid.UUID) -> str | None:
    with get_sessionmaker()() as s:
        return s.execute(select(Snapshot.status).where(Snapshot.id == sid)).scalar_one_or_none()  # type: ignore[no-any-return]


def org_filling(client: Any, name: str, fills: list[float], subnet: int) -> tuple[Org, uuid.UUID]:
    """An organization whose one-server cluster sent one processed window per fill, oldest first
    (fill < 1: memcached still filling, at hit rate WARM; 1: full, at FULL)."""
    org = make_org(name)
    with get_sessionmaker()() as s:
        cl = Cluster(org_id=org.id, name=f"{name} cluster", target_hit_ratio=0.7, price_per_gb_month=4.0)
        s.add(cl)
        s.commit()
        cluster_id = cl.id
    address = f"10.{subnet}.0.1:11211"
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=30)
    for i, fill in enumerate(fills):
        snap = make_snapshot(
            address,
            end=end + timedelta(minutes=i),
            seed=subnet + i,
            fill=fill,
            hit_ratio=FULL if fill >= 1 else WARM,
        )
        assert upload(client, org, snap).status_code == 202
        sid = uuid.UUID(snap["snapshot_id"])
        wait_for(lambda sid=sid: _status(sid) == "processed", what="snapshot processed")
        if i == 0:
            with get_sessionmaker()() as s:
                s.execute(update(Server).where(Server.org_id == org.id).values(cluster_id=cluster_id))
                s.commit()
    return org, cluster_id


def _row(text: str, label: str) -> str:
    return next(line for line in text.splitlines() if line.strip().startswith(label))


@pytest.mark.live
def test_the_weeks_figures_leave_the_warm_up_windows_out_and_say_so(worker: WorkerProc, client: Any) -> None:
    fills = [0.4, 0.6, 0.8, 1.0, 1.0, 1.0]
    org, cluster_id = org_filling(client, "Warming Then Full", fills, 71)
    with get_sessionmaker()() as db:
        p = preview(db, org.id, None, "ops@warm.test", datetime.now(UTC), None)
        # the accuracy records of the settled windows only: what the e-mail's worst error is over
        settled = (
            select(AccuracyRecord.error_pp)
            .join(Snapshot, (Snapshot.id == AccuracyRecord.snapshot_id))
            .where(AccuracyRecord.org_id == org.id, Snapshot.memory_full.is_(True))
        )
        errors = [abs(float(e)) for e in db.execute(settled).scalars()]
        every = db.execute(select(func.count()).where(AccuracyRecord.org_id == org.id)).scalar_one()
    # hits / gets over the three full windows only (with the warm-up ones it would be 55 %)
    assert "Measured hit rate this week:  80\u00a0%" in p.text, p.text
    assert "(3 of 6 windows left out: warm-up, memcached was still filling)" in p.text, p.text
    assert "3 of 6 windows left out: warm-up, memcached was still filling" in p.html
    accuracy = _row(p.text, "Curve accuracy this week:")
    assert every > len(errors) > 0, (every, errors)  # warm-up windows were graded too, and left out
    assert f"worst {max(errors):.2f} pp over {len(errors)} settled windows" in accuracy, accuracy


@pytest.mark.live
def test_a_cluster_warming_all_week_reads_warm_up_not_unreachable(worker: WorkerProc, client: Any) -> None:
    org, _ = org_filling(client, "Still Filling", [0.2, 0.3, 0.4], 72)
    with get_sessionmaker()() as db:
        p = preview(db, org.id, None, "ops@filling.test", datetime.now(UTC), None)
    assert "Measured hit rate this week:  warm-up" in p.text, p.text
    assert "(warm-up: memcached was still filling in all 3 windows, none counted yet)" in p.text
    sizing = _row(p.text, "Memory for 70\u00a0% hit rate:")
    assert "unknown until memcached is full" in sizing, sizing
    assert "not reachable" not in p.text and "not reachable" not in p.html
    accuracy = _row(p.text, "Curve accuracy this week:")
    assert "warm-up" in accuracy, accuracy
