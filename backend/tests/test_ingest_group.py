"""Group commit of snapshot uploads (hitcurve.crud.ingest_group) on real PostgreSQL: concurrent
uploads are stored in shared transactions, each exactly once and each answered with its own
result; a batch whose statement fails is undone and stored one by one, so only the bad upload
gets the error."""

import asyncio
import json
import uuid
from typing import Any

import pytest
from sqlalchemy import func, select

from hitcurve.core.db import get_sessionmaker
from hitcurve.core.domain import Conflict
from hitcurve.core.principal import Principal
from hitcurve.core.security import sha256_hex
from hitcurve.crud import ingest_group
from hitcurve.crud.ingest import Stored
from hitcurve.ingest.classpack import unpack
from hitcurve.ingest.uploads import decode
from hitcurve.models import AgentKey, Server, Snapshot
from hitcurve_testing.snapshots import make_snapshot


def _agent(account: Any) -> Principal:
    secret = account.agent_key()
    with get_sessionmaker()() as db:
        row = db.execute(select(AgentKey).where(AgentKey.key_hash == sha256_hex(secret))).scalar_one()
    return Principal(kind="agent_key", org_id=row.org_id, key_id=row.id)


def _pending(agent: Principal, snap: dict[str, Any]) -> ingest_group.Pending:
    doc = json.dumps(snap).encode()
    return ingest_group.Pending(agent, decode("snapshot", doc, False, 1 << 26), doc, None)


def _stored(ids: list[str]) -> dict[str, tuple[int, int]]:
    """Snapshot id -> (snapshot rows, classes stored with them) in the database."""
    out = {}
    with get_sessionmaker()() as db:
        for i in ids:
            sid = uuid.UUID(i)
            snaps = db.scalar(select(func.count()).select_from(Snapshot).where(Snapshot.id == sid))
            packed = db.scalars(select(Snapshot.classes).where(Snapshot.id == sid)).all()
            out[i] = (snaps, sum(len(unpack(p)) for p in packed if p is not None))
    return out


def test_concurrent_uploads_are_each_stored_once_in_shared_transactions(account, monkeypatch) -> None:
    agent = _agent(account)
    sizes: list[int] = []
    real = ingest_group.store_batch

    def counted(batch):  # type: ignore[no-untyped-def]
        sizes.append(len(batch))
        return real(batch)

    monkeypatch.setattr(ingest_group, "store_batch", counted)
    # 40 uploads from 10 servers (4 windows each), and one of them sent twice at once (a retry)
    snaps = [make_snapshot(f"10.19.0.{i % 10}:11211") for i in range(40)]
    items = [_pending(agent, s) for s in snaps] + [_pending(agent, snaps[7])]

    async def upload_all() -> list[Any]:
        return await asyncio.gather(
            *(ingest_group.store(p.agent, p.rows, p.doc, p.gzipped) for p in items), return_exceptions=True
        )

    answers = asyncio.run(upload_all())
    assert all(not isinstance(a, BaseException) for a in answers), answers
    assert [a.id for a in answers] == [uuid.UUID(s["snapshot_id"]) for s in snaps] + [
        uuid.UUID(snaps[7]["snapshot_id"])
    ]  # each request got its own upload's answer
    statuses = [a.status for a in answers]
    assert sorted([statuses[7], statuses[40]]) == ["accepted", "duplicate"]
    assert statuses.count("accepted") == 40
    assert max(sizes) > 1 and sum(sizes) == 41  # grouped, and every upload in exactly one batch
    stored = _stored([s["snapshot_id"] for s in snaps])
    assert all(stored[s["snapshot_id"]] == (1, len(s["classes"])) for s in snaps), stored
    with get_sessionmaker()() as db:
        servers = db.scalar(select(func.count()).select_from(Server).where(Server.org_id == agent.org_id))
    assert servers == 10


def test_a_failed_statement_answers_only_its_own_upload(account, other) -> None:
    """A batch with an upload of an unknown organization (its statement fails: foreign key) and one
    reusing another organization's snapshot id (409): the transaction is undone, every upload is
    stored alone, and only those two get their errors; the other organization's snapshot and
    servers are untouched, this org's own retry writes nothing."""
    agent, stranger = _agent(account), _agent(other)
    theirs = make_snapshot("10.19.1.1:11211")
    assert ingest_group.store_batch([_pending(stranger, theirs)])[0].status == "accepted"
    mine = [make_snapshot(f"10.19.2.{i}:11211") for i in range(5)]
    assert ingest_group.store_batch([_pending(agent, mine[0])])[0].status == "accepted"
    with get_sessionmaker()() as db:
        seen_before = db.scalar(select(Server.last_seen_at).where(Server.address == "10.19.2.0:11211"))
    ghost = Principal(kind="agent_key", org_id=uuid.uuid4(), key_id=agent.key_id)  # no such org
    batch = [
        _pending(agent, mine[0]),  # a retry of a stored one: duplicate
        _pending(agent, mine[1]),
        _pending(ghost, make_snapshot("10.19.3.1:11211")),
        _pending(agent, mine[2]),
        _pending(agent, {**make_snapshot("10.19.2.9:11211"), "snapshot_id": theirs["snapshot_id"]}),
        _pending(agent, mine[3]),
        _pending(agent, mine[4]),
    ]
    answers = ingest_group.store_batch(batch)
    assert [a.status if isinstance(a, Stored) else None for a in answers] == [
        "duplicate",
        "accepted",
        None,
        "accepted",
        None,
        "accepted",
        "accepted",
    ]
    assert "foreign key" in str(answers[2]).lower()
    assert isinstance(answers[4], Conflict) and answers[4].code == "id_conflict"
    stored = _stored([s["snapshot_id"] for s in mine])
    assert all(stored[s["snapshot_id"]] == (1, len(s["classes"])) for s in mine), stored
    with get_sessionmaker()() as db:
        owners = db.scalars(
            select(Snapshot.org_id).where(Snapshot.id == uuid.UUID(theirs["snapshot_id"]))
        ).all()
        assert owners == [stranger.org_id]
        assert db.scalar(select(Server.id).where(Server.address == "10.19.2.9:11211")) is None
        assert (
            db.scalar(select(Server.last_seen_at).where(Server.address == "10.19.2.0:11211")) == seen_before
        )


@pytest.mark.parametrize("size", [1, 3])
def test_a_batch_answers_in_its_own_order(account, size) -> None:
    agent = _agent(account)
    snaps = [make_snapshot(f"10.19.4.{9 - i}:11211") for i in range(size)]  # stored in address order
    answers = ingest_group.store_batch([_pending(agent, s) for s in snaps])
    assert [a.id for a in answers] == [uuid.UUID(s["snapshot_id"]) for s in snaps]


def test_a_lost_connection_costs_no_upload(account) -> None:
    """The writer keeps its connection between batches; when PostgreSQL drops it (a restart, an
    idle timeout), the next batch fails on it, and its uploads are stored alone through the pool."""
    from sqlalchemy import text

    from hitcurve.core.db import get_engine

    agent = _agent(account)
    assert ingest_group.store_batch([_pending(agent, make_snapshot("10.19.5.1:11211"))])[0].accepted
    pid = ingest_group._connection().info.backend_pid  # noqa: SLF001 - the connection to drop
    with get_engine().connect() as conn:
        assert conn.execute(text("SELECT pg_terminate_backend(:p)"), {"p": pid}).scalar()
    snaps = [make_snapshot(f"10.19.5.{i}:11211") for i in range(2, 5)]
    answers = ingest_group.store_batch([_pending(agent, s) for s in snaps])
    assert [a.status for a in answers] == ["accepted"] * 3
    stored = _stored([s["snapshot_id"] for s in snaps])
    assert all(stored[s["snapshot_id"]] == (1, len(s["classes"])) for s in snaps), stored
    assert ingest_group._connection().info.backend_pid != pid  # noqa: SLF001 - a new one


def test_an_answer_for_a_closed_event_loop_stops_no_later_upload(account) -> None:
    """A request whose event loop is gone (its client left, the process shutting down) must not
    end the flushing thread: the uploads after it are still stored and answered."""
    agent = _agent(account)
    gone = asyncio.new_event_loop()
    lost = make_snapshot("10.19.6.1:11211")
    orphan = _pending(agent, lost)
    orphan.loop, orphan.future = gone, gone.create_future()
    gone.close()
    ingest_group._queue.append(orphan)  # noqa: SLF001 - as store() queues it
    ingest_group._flushing = True  # noqa: SLF001
    ingest_group._flush()  # noqa: SLF001 - the flushing thread's loop, run here
    later = _pending(agent, make_snapshot("10.19.6.2:11211"))

    async def upload() -> Any:
        return await ingest_group.store(later.agent, later.rows, later.doc, later.gzipped)

    assert asyncio.run(upload()).status == "accepted"
    assert _stored([lost["snapshot_id"]])[lost["snapshot_id"]] == (1, len(lost["classes"]))
