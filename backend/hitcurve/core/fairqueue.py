"""Per-organization fair queue for the batch lane: one organization's many simulations cannot hold
up another organization's small one.

Celery's queues are first in, first out, so four runs of twenty policies queued by one
organization would be served before a single policy asked for a second later by another. Here a
piece of batch work (a task name and its arguments, a "unit") is not published to Celery itself:
it is appended to its organization's own Redis list, and what goes on the Celery batch queue is a
turn (FAIR_TURN), a message with no arguments. A worker running a turn takes the next unit
round-robin across the organizations that have work waiting (take): each organization with work
gets one unit in turn, whatever its backlog, and within one organization units keep their order.
Submitting (hitcurve.core.tasks.enqueue_simulation) pushes the unit, then publishes its turn.
Turns are interchangeable, so whichever turn a worker runs, the work it does is chosen fairly at
that moment; the number of turns published equals the number of units, so everything queued runs.

The ring (a Redis list of organizations with waiting units), the set of its members and each
organization's list change together in one Lua script, so concurrent submitters and workers never
see an organization with work missing from the ring (or twice in it).

A spare turn (a redelivered message, one published by the re-enqueue job) finds nothing and does
nothing; a unit whose turn was lost is run by the next turn of anyone, and the worker's re-enqueue
job publishes turns while units wait and the batch queue is empty (housekeeping). Units are
idempotent like every batch task, so a unit that runs twice changes nothing.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

import redis

from hitcurve.core import task_names as names
from hitcurve.core.config import get_settings

# Appends a unit to its organization's list and the organization to the ring if it was not in it.
_PUSH = """
redis.call('RPUSH', KEYS[3], ARGV[2])
if redis.call('SADD', KEYS[2], ARGV[1]) == 1 then
  redis.call('RPUSH', KEYS[1], ARGV[1])
end
return redis.call('LLEN', KEYS[3])
"""

# Takes the first unit of the organization at the head of the ring; the organization goes to the
# ring's tail while it has units left, else leaves the ring. Returns {org, unit} or nil.
_TAKE = """
local n = redis.call('LLEN', KEYS[1])
for _ = 1, n do
  local org = redis.call('LPOP', KEYS[1])
  if not org then return nil end
  local q = ARGV[1] .. org
  local unit = redis.call('LPOP', q)
  if redis.call('LLEN', q) > 0 then
    redis.call('RPUSH', KEYS[1], org)
  else
    redis.call('SREM', KEYS[2], org)
  end
  if unit then return {org, unit} end
end
return nil
"""


def _prefix() -> str:
    """Keys of this installation's batch queue (a test's private queue, or two installations on one
    Redis, do not share them)."""
    return f"hitcurve:fair:{get_settings().celery_batch_queue}"


def _keys() -> tuple[str, str, str]:
    p = _prefix()
    return f"{p}:ring", f"{p}:members", f"{p}:q:"


def push(client: redis.Redis, org_id: uuid.UUID | str, task_name: str, args: list[Any]) -> int:
    """Append one unit to the organization's list; its length after."""
    ring, members, q = _keys()
    org = str(org_id)
    unit = json.dumps({"task": task_name, "args": args})
    return int(client.eval(_PUSH, 3, ring, members, q + org, org, unit))


def take(client: redis.Redis) -> tuple[str, str, list[Any]] | None:
    """The next unit, round-robin across organizations: (org id, task name, args), or None."""
    ring, members, q = _keys()
    got = client.eval(_TAKE, 2, ring, members, q)
    if not got:
        return None
    org, raw = (x.decode() if isinstance(x, bytes) else x for x in got)
    unit = json.loads(raw)
    return org, str(unit["task"]), list(unit["args"])


def waiting(client: redis.Redis) -> dict[str, int]:
    """Units waiting, by organization (for /health-style counts and tests)."""
    ring, members, q = _keys()
    orgs = [m.decode() if isinstance(m, bytes) else m for m in client.smembers(members)]
    return {o: int(client.llen(q + o)) for o in orgs}


def publish_turns(sender: Any, n: int = 1) -> None:
    """Publish n turns on the batch queue. sender: a Celery app (the backend's or the worker's)."""
    queue = get_settings().celery_batch_queue
    for _ in range(n):
        sender.send_task(names.FAIR_TURN, retry=False, queue=queue)
