"""One organization may have at most Settings.simulations_per_org simulation runs queued or running
(crud.operations.claim_simulation_slot): past it a request is 429 too_many_simulations with
Retry-After, also when many arrive at once; other organizations have their own allowance, and a
finished run frees its place."""

import uuid
from concurrent.futures import ThreadPoolExecutor

from sqlalchemy import update

from conftest import Account, upload_snapshot
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import SimulationRun


def _ask(account: Account, sid: str) -> int:
    body = {"server_id": sid, "policies": ["lru"], "sizes_bytes": [1 << 30]}
    return account.post("/api/v1/simulations", json=body).status_code


def test_an_organization_has_at_most_its_quota_of_runs_queued(
    account: Account, other: Account, private_queue: object
) -> None:
    limit = get_settings().simulations_per_org
    sid, _ = upload_snapshot(account)
    with ThreadPoolExecutor(8) as pool:
        codes = list(pool.map(lambda _: _ask(account, sid), range(limit + 6)))
    assert codes.count(202) == limit and codes.count(429) == 6, codes

    body = {"server_id": sid, "policies": ["lru"], "sizes_bytes": [1 << 30]}
    r = account.post("/api/v1/simulations", json=body)
    assert r.status_code == 429 and r.json()["code"] == "too_many_simulations"
    assert f"at most {limit} at a time" in r.json()["detail"] and int(r.headers["Retry-After"]) > 0
    runs = account.get("/api/v1/simulations").json()
    assert len(runs) == limit

    # another organization is not held to this one's count
    other_sid, _ = upload_snapshot(other, address="10.0.0.8:11211")
    assert _ask(other, other_sid) == 202

    # a run that ended (done or failed) frees its place
    with get_sessionmaker()() as db:
        db.execute(
            update(SimulationRun)
            .where(SimulationRun.id == uuid.UUID(runs[0]["id"]))
            .values(status="failed", error="test")
        )
        db.commit()
    assert _ask(account, sid) == 202
    assert _ask(account, sid) == 429
