"""Since when the backend has been accepting uploads, for the agent-silent rule: a gap in an
agent's snapshots while the backend was down (stopped, restarting, its database unreachable) is
the backend's, not the agent's, and its spool replays the windows once the backend is back.

Every API process beats every Settings.accepting_beat_s while its database answers: it refreshes
ALIVE_KEY on Redis with an expiry of Settings.accepting_stale_s. A beat that finds ALIVE_KEY gone
(no API process accepted for that long) starts a new up period: SINCE_KEY is set to its time.
The worker's agent-silent check (rules.alerts.stale_agent) measures a server's silence from the
later of its last snapshot and SINCE_KEY, and blames no agent while ALIVE_KEY is gone."""

from __future__ import annotations

import asyncio
import logging
import time
from datetime import UTC, datetime

import redis
from sqlalchemy import text

from hitcurve.core.config import get_settings

ALIVE_KEY = "hitcurve:api:accepting"
SINCE_KEY = "hitcurve:api:accepting_since"

log = logging.getLogger("hitcurve.accepting")


def beat(client: redis.Redis, at: float, stale_s: float) -> None:
    """Record that an API process accepts uploads at `at` (Unix seconds)."""
    px = max(1, int(stale_s * 1000))
    if client.set(ALIVE_KEY, repr(at), px=px, nx=True):
        client.set(SINCE_KEY, repr(at))  # nothing accepted for stale_s: a new up period
    else:
        client.set(ALIVE_KEY, repr(at), px=px)
        client.set(SINCE_KEY, repr(at), nx=True)  # the key lost (a flushed Redis): from now


def accepting_since(client: redis.Redis) -> float | None:
    """Start of the backend's current up period (Unix seconds); None while no API process beats."""
    alive, since = client.mget(ALIVE_KEY, SINCE_KEY)
    if alive is None:
        return None
    return float(since if since is not None else alive)


def current_since() -> datetime | None:
    """accepting_since on the configured Redis, as a time; None while no API process beats or when
    Redis cannot be read (then a silence counts whole, as before the backend knew its up time)."""
    client = redis.Redis.from_url(get_settings().redis_url, socket_timeout=2, socket_connect_timeout=2)
    try:
        since = accepting_since(client)
    except redis.RedisError as exc:
        log.warning("accepting period not read: %s", exc)
        return None
    finally:
        client.close()
    return None if since is None else datetime.fromtimestamp(since, UTC)


def _beat_once() -> None:
    from hitcurve.core.db import get_engine

    s = get_settings()
    with get_engine().connect() as conn:  # uploads are refused while the database is down
        conn.execute(text("SELECT 1"))
    client = redis.Redis.from_url(s.redis_url, socket_timeout=2, socket_connect_timeout=2)
    try:
        beat(client, time.time(), s.accepting_stale_s)
    finally:
        client.close()


async def beat_forever() -> None:
    """The API process's beat, off the event loop (a thread per beat), until cancelled."""
    every = get_settings().accepting_beat_s
    while True:
        try:
            await asyncio.to_thread(_beat_once)
        except Exception as exc:  # database or Redis down: no beat, the silence is the backend's
            log.warning("accepting beat not written: %s", exc)
        await asyncio.sleep(every)
