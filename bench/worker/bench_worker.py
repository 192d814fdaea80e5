"""Worker benchmarks, printed next to their targets:

1. merges per second in one process for a 40-class snapshot: the computation process_snapshot
   does per snapshot (class curves from database rows -> proportional join + optimal page
   allocation -> calibration -> uncertainty band), at three server sizes. Target >= 500/s.
2. end-to-end latency at idle: agent upload (backend API, gzip JSON) -> Redis -> worker ->
   PostgreSQL -> the merged, calibrated curve readable from GET /api/v1/servers/{id}/curve.
   Target <= 2 s.

Needs HITCURVE_DATABASE_URL / HITCURVE_REDIS_URL of a private instance (run.sh starts one).
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.append(str(ROOT / "worker" / "tests"))  # worker_helpers: a real worker for the latency run

from hitcurve.rules import band  # noqa: E402
from hitcurve_testing.snapshots import synthetic_classes, synthetic_snapshot  # noqa: E402
from hitcurve_worker.calibrate import calibrate  # noqa: E402
from hitcurve_worker.merge import ClassRow, classes_from_rows, merge, row_from_protocol  # noqa: E402


def rows_like_db(classes: list[dict]) -> list[ClassRow]:  # type: ignore[type-arg]
    """What the worker reads from a snapshot's packed classes: plain Python lists (merge.ClassRow)."""
    return [row_from_protocol(c) for c in classes]


def one_snapshot(rows: list[tuple], method: str = "auto") -> str:  # type: ignore[type-arg]
    classes = classes_from_rows(rows)
    res = merge(classes, method=method)
    cal = calibrate(
        res.memory_bytes,
        res.proportional,
        res.current_bytes,
        res.model_at_current * 1.05,
        res.valid_max_bytes,
    )
    main = cal.calibrated if cal.calibrated is not None else res.proportional
    band.band_curves(
        list(res.memory_bytes),
        list(main),
        band.BandModel(float(res.current_bytes), band.drift_estimate([0.5, -0.3, 0.8] * 10).pp),
    )
    return res.optimal_method


def bench_merges(seconds: float = 2.0) -> None:
    print("1. merges per second, one process, 40-class snapshot (target >= 500/s)")
    print(
        f"   {'server':>8}  {'curves':>10}  {'optimum by':>16}  {'merges/s (wall)':>15}"
        f"  {'merges/s (CPU)':>14}  {'ms each':>7}"
    )
    for pages, label in ((64, "64 MiB"), (1024, "1 GiB"), (8192, "8 GiB")):
        for concave in (True, False):
            rows = rows_like_db(synthetic_classes(40, pages, seed=1, concave=concave))
            for method in ("auto", "dp") if not concave and pages <= 1024 else ("auto",):
                how = one_snapshot(rows, method)
                n = 0
                w0, c0 = time.perf_counter(), time.process_time()
                while time.perf_counter() - w0 < seconds:
                    one_snapshot(rows, method)
                    n += 1
                wall, cpu = time.perf_counter() - w0, time.process_time() - c0
                kind = "concave" if concave else "noisy"
                rates = f"{n / wall:15.0f}  {n / cpu:14.0f}  {1000 * wall / n:7.2f}"
                print(f"   {label:>8}  {kind:>10}  {how:>16}  {rates}")


def bench_latency(n: int = 20) -> None:
    from fastapi.testclient import TestClient
    from sqlalchemy import create_engine, text
    from worker_helpers import clear_caches, make_org, start_worker, upload

    from hitcurve.core.db import get_sessionmaker
    from hitcurve.core.security import sha256_hex
    from hitcurve.main import create_app
    from hitcurve.models import ApiToken

    print(
        f"\n2. end-to-end latency at idle, upload -> curve readable from the API ({n} uploads; target <= 2 s)"
    )
    server_url = os.environ["HITCURVE_DATABASE_URL"]
    dbname = f"hitcurve_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(server_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as c:
        c.execute(text(f'CREATE DATABASE "{dbname}"'))
    url = server_url.rsplit("/", 1)[0] + "/" + dbname
    os.environ["HITCURVE_DATABASE_URL"] = url
    clear_caches()
    worker = None
    try:
        subprocess.run(
            [sys.executable, "-m", "alembic", "upgrade", "head"],
            check=True,
            cwd=ROOT,
            stdout=subprocess.DEVNULL,
        )
        worker = start_worker({"HITCURVE_DATABASE_URL": url}, "bench", concurrency=1)
        org = make_org("bench")
        token = "hct_" + uuid.uuid4().hex + uuid.uuid4().hex
        with get_sessionmaker()() as db:
            db.add(
                ApiToken(
                    org_id=org.id, name="bench", scope="read", prefix=token[:8], token_hash=sha256_hex(token)
                )
            )
            db.commit()
        lat = []
        end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=n + 1)
        with TestClient(create_app()) as client:
            server_id = None
            for i in range(n):
                snap = synthetic_snapshot(
                    address="10.77.0.1:11211",
                    n_classes=40,
                    total_pages=1024,
                    end=end + timedelta(minutes=i),
                    hit_ratio=0.6,
                    seed=i,
                )
                t0 = time.perf_counter()
                assert upload(client, org, snap).status_code == 202
                if server_id is None:
                    r = client.get("/api/v1/servers", headers={"Authorization": f"Bearer {token}"})
                    server_id = r.json()[0]["id"]
                while True:
                    r = client.get(
                        f"/api/v1/servers/{server_id}/curve", headers={"Authorization": f"Bearer {token}"}
                    )
                    merged = r.json().get("merged") if r.status_code == 200 else None
                    if (
                        merged
                        and merged["snapshot_id"] == snap["snapshot_id"]
                        and merged["hit_ratio_calibrated"]
                    ):
                        break
                    if time.perf_counter() - t0 > 30:
                        raise RuntimeError("curve not readable after 30 s")
                    time.sleep(0.01)
                lat.append(time.perf_counter() - t0)
        lat_ms = sorted(1000 * x for x in lat)
        print(
            f"   median {statistics.median(lat_ms):.0f} ms, "
            f"p90 {lat_ms[int(0.9 * (len(lat_ms) - 1))]:.0f} ms, "
            f"max {lat_ms[-1]:.0f} ms, min {lat_ms[0]:.0f} ms  (1 GiB server, 40 classes; includes the API's "
            "gzip+validation+insert, Redis, the worker, and polling every 10 ms)"
        )
    finally:
        if worker is not None:
            worker.stop()
        clear_caches()
        with admin.connect() as c:
            c.execute(text(f'DROP DATABASE IF EXISTS "{dbname}" WITH (FORCE)'))
        admin.dispose()
        os.environ["HITCURVE_DATABASE_URL"] = server_url


if __name__ == "__main__":
    print(f"worker benchmark, {os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    bench_merges()
    bench_latency()
