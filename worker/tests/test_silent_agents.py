"""The agent-silent alert (rules.alerts.stale_agent, housekeeping.silent_agents) against real
PostgreSQL and Redis: it opens for an agent silent while the backend accepted uploads and
resolves with its next snapshot, and blames no agent for a gap the backend caused (stopped or
restarting: hitcurve.core.accepting)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import redis
from sqlalchemy import select, update
from worker_helpers import Org, wait_for

from hitcurve.core import accepting
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_sessionmaker
from hitcurve.models import Alert, Server
from hitcurve_worker.housekeeping import silent_agents


@pytest.fixture
def rds(private_env: dict[str, str]) -> Iterator[redis.Redis]:
    c = redis.Redis.from_url(get_settings().redis_url)
    c.delete(accepting.ALIVE_KEY, accepting.SINCE_KEY)
    yield c
    c.delete(accepting.ALIVE_KEY, accepting.SINCE_KEY)
    c.close()


def _server(org: Org, last_snapshot_at: datetime) -> uuid.UUID:
    with get_sessionmaker()() as s:
        srv = Server(
            org_id=org.id,
            address=f"10.8.{uuid.uuid4().int % 250}.1:{uuid.uuid4().int % 60000}",
            instance_id="1-1",
            last_snapshot_at=last_snapshot_at,
        )
        s.add(srv)
        s.commit()
        return srv.id


def _alerts(sid: uuid.UUID, state: str) -> list[Any]:
    with get_sessionmaker()() as s:
        q = select(Alert.severity).where(
            Alert.server_id == sid, Alert.kind == "stale_agent", Alert.state == state
        )
        return list(s.execute(q).scalars())


def _up_since(rds: redis.Redis, ago: timedelta) -> None:
    """The backend has accepted uploads since `ago` (its API processes beat since then)."""
    accepting.beat(rds, time.time() - ago.total_seconds(), 60)
    accepting.beat(rds, time.time(), 60)


def test_silent_agent_alert_opens_and_resolves(org: Org, rds: redis.Redis) -> None:
    _up_since(rds, timedelta(hours=3))
    sid = _server(org, datetime.now(UTC) - timedelta(hours=2))
    silent_agents()
    silent_agents()  # twice: still one open alert
    assert _alerts(sid, "open") == ["critical"]
    with get_sessionmaker()() as s:
        s.execute(update(Server).where(Server.id == sid).values(last_snapshot_at=datetime.now(UTC)))
        s.commit()
    silent_agents()
    assert _alerts(sid, "open") == []
    assert _alerts(sid, "resolved") == ["critical"]


def test_a_backend_restart_blames_no_agent_until_it_had_time_to_reconnect(org: Org, rds: redis.Redis) -> None:
    # the backend was down for two hours: its agents' last snapshots are that old
    sid = _server(org, datetime.now(UTC) - timedelta(hours=2))
    # down: no API process beats, no alert opens (nor does the check claim any)
    assert silent_agents() == 0
    assert _alerts(sid, "open") == []
    # back up a minute ago (the first beat after the key expired starts a new up period): the
    # agents' spools replay within their backoff, nobody is blamed yet
    _up_since(rds, timedelta(minutes=1))
    silent_agents()
    assert _alerts(sid, "open") == []
    # up for ten minutes and this agent still sent nothing: now it is the agent's silence
    rds.set(accepting.SINCE_KEY, repr(time.time() - 600))
    silent_agents()
    assert _alerts(sid, "open") == ["warning"]
    with get_sessionmaker()() as s:
        opened = s.execute(
            select(Alert.message).where(Alert.server_id == sid, Alert.kind == "stale_agent")
        ).scalar_one()
    assert "no snapshot from its agent for 120 min" in opened


def test_the_up_period_starts_at_the_first_beat_after_no_api_process_beat_for_the_stale_time(
    rds: redis.Redis,
) -> None:
    assert accepting.accepting_since(rds) is None
    accepting.beat(rds, 1000.0, 60)
    accepting.beat(rds, 1010.0, 60)
    assert accepting.accepting_since(rds) == 1000.0  # one period while the beats keep coming
    accepting.beat(rds, 1020.0, 0.2)
    time.sleep(0.5)  # no beat for longer than the stale time: the backend counts as down
    assert accepting.accepting_since(rds) is None
    accepting.beat(rds, 2000.0, 60)
    assert accepting.accepting_since(rds) == 2000.0


def test_the_api_process_beats_while_it_serves(client: Any, rds: redis.Redis) -> None:
    # `client` runs the real app with its lifespan (hitcurve.main), as hitcurve.serve does
    # (last in this file: while it serves, the backend counts as up for the tests above)
    t0 = time.time()  # the fixture removed the keys: the next beat starts a new up period
    since = wait_for(lambda: accepting.accepting_since(rds), what="the API's accepting beat")
    assert t0 - 1 <= since <= time.time()
