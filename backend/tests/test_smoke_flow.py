import gzip
import json

from conftest import bearer
from hitcurve_testing.snapshots import make_snapshot


def test_upload_then_read(account, anon) -> None:
    key = account.agent_key()
    snap = make_snapshot()
    r = anon.post(
        "/api/v1/agent/snapshots",
        content=gzip.compress(json.dumps(snap).encode()),
        headers={**bearer(key), "Content-Type": "application/json", "Content-Encoding": "gzip"},
    )
    assert r.status_code == 202, r.text
    servers = account.get("/api/v1/servers").json()
    assert len(servers) == 1
    c = account.get(f"/api/v1/servers/{servers[0]['id']}/curve").json()
    assert len(c["classes"]) == 6
