"""Run the worker's own task (hitcurve_worker.snapshot_tasks.process, in process, as seed.py does)
on every pending snapshot of one server address, oldest window first: the e2e backend runs no
worker, so a browser check whose agent uploads for real calls this to get the rows production
makes. Usage: process_uploads.py ADDRESS (HITCURVE_DATABASE_URL names the e2e database).
Prints one JSON line: {"processed": n, "results": [...]}."""

import json
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from sqlalchemy import select  # noqa: E402

from hitcurve.core.db import get_sessionmaker  # noqa: E402
from hitcurve.models import Server, Snapshot  # noqa: E402
from hitcurve_worker.snapshot_tasks import process  # noqa: E402


def main(address: str) -> None:
    with get_sessionmaker()() as db:
        ids = list(
            db.execute(
                select(Snapshot.id)
                .join(Server, Server.id == Snapshot.server_id)
                .where(Server.address == address, Snapshot.status == "pending")
                .order_by(Snapshot.window_end)
            ).scalars()
        )
    results = [process(i) for i in ids]
    print(json.dumps({"processed": len(ids), "results": results}, default=str))


if __name__ == "__main__":
    main(sys.argv[1])
