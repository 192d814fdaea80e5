"""Make the worker's delivery attempt (hitcurve.crud.notifications.attempt, what the task
hitcurve.deliver_alert runs) on every pending alert delivery, in process: the e2e backend runs no
worker, so a browser check that queues deliveries calls this to have them sent as production
would. Usage: deliver_pending.py (HITCURVE_DATABASE_URL names the e2e database). Prints one JSON
line: {"attempted": n, "results": [...]}."""

import json
import sys
from pathlib import Path

# Receivers on loopback: allowed by the e2e install's stored setting (scripts/e2e-server.sh), which
# this stand-in worker reads before each send, as the worker does.

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "backend"))

from sqlalchemy import select  # noqa: E402

from hitcurve.core.db import get_sessionmaker  # noqa: E402
from hitcurve.crud import notifications as crud  # noqa: E402
from hitcurve.models import AlertDelivery  # noqa: E402


def main() -> None:
    with get_sessionmaker()() as db:
        ids = list(
            db.execute(
                select(AlertDelivery.id).where(AlertDelivery.status == "pending").order_by(AlertDelivery.id)
            ).scalars()
        )
        results = [crud.attempt(db, i, max_attempts=1) for i in ids]
    print(json.dumps({"attempted": len(ids), "results": results}, default=str))


if __name__ == "__main__":
    main()
