"""The batch lane's fair turns (hitcurve.core.fairqueue): each turn runs the next unit of work
round-robin across organizations, so one organization's backlog of simulations delays another
organization's run by at most one unit per organization with work waiting, not by the backlog.

A unit is a batch task's name and arguments; the turn runs the task's body in its own process
(the task stays registered under its name, so a message published straight to it still works).
A transient error (database or broker unreachable) puts the unit back on its organization's list
and retries the turn, so the unit is not lost; any other error is the task's own to report (they
mark their rows failed), and the re-enqueue job covers a unit lost with a killed worker.
"""

from __future__ import annotations

import logging
import uuid
from typing import Any

from celery import Task

from hitcurve.core import fairqueue
from hitcurve.core import task_names as names
from hitcurve.core.tasks import _broker_client
from hitcurve_worker.celery_app import app
from hitcurve_worker.reliability import RETRY_OPTS, RETRYABLE

log = logging.getLogger("hitcurve.worker.fair")

# What a turn may run: the batch work queued per organization (simulations and the policy
# corrections that trace chunks make due). Reports and alert deliveries keep their own retry
# schedules (SMTP and webhook backoff) on the batch queue itself.
FAIR_TASKS = frozenset({names.RUN_SIMULATION, names.SIMULATE_POLICY, names.COMPUTE_POLICY_CORRECTION})


def queue(org_id: uuid.UUID | str, task_name: str, *args: Any) -> None:
    """Queue a unit for the organization and its turn, from a task (errors propagate, so the
    task retries: unlike the API, a worker has no row left for the re-enqueue job to find)."""
    fairqueue.push(_broker_client(), org_id, task_name, [str(a) for a in args])
    fairqueue.publish_turns(app)


@app.task(name=names.FAIR_TURN, bind=True, **RETRY_OPTS)
def fair_turn(self: Task) -> dict[str, Any]:
    client = _broker_client()
    got = fairqueue.take(client)
    if got is None:
        return {"status": "idle"}
    org, name, args = got
    if name not in FAIR_TASKS or name not in app.tasks:
        log.error("fair queue: dropped a unit of unknown task %s for organization %s", name, org)
        return {"status": "unknown-task", "task": name}
    try:
        out = app.tasks[name].run(*args)
    except RETRYABLE:
        fairqueue.push(client, org, name, args)
        raise
    return {"status": "ran", "org": org, "task": name, "result": out}
