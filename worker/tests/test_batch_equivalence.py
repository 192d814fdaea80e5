"""A drain's batches and process_snapshot's one-at-a-time path store the same rows. The same uploads go
to two organizations; one is drained (a claim takes each server's earliest window, so each batch
holds one window of every server, its inputs loaded one statement per kind and its rows stored one
statement per table), the other processed one snapshot per transaction in window order. Their server
curves, accuracy records, open and resolved alerts and newest cluster curve must be equal column by
column, ids and times aside. The uploads cover what the batch path treats apart: graded windows with
a band history, a stream-loss alert opened then resolved, a server still filling (its curve-error
alert held), a stats-only agent (with and without a model curve), two servers of a cluster, and a
late window uploaded after newer ones (stored, graded, but no alert). Real PostgreSQL, in process.

Both paths run snapshot_tasks.work (process_snapshot's is a batch of one), so this checks what
batching itself could change: one snapshot's inputs or results taken for another's, the order of a
batch, alerts of many servers in one statement, a cluster curve once per batch.

Only the newest cluster curve compares: one at a time writes a row for every member's window in turn
(a row mixing one member's new window with the other's old one), a batch one row per cluster after
all its members; the newest row is the same."""

from __future__ import annotations

import copy
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import select, text
from worker_helpers import Org, make_org, upload

from hitcurve.core.db import get_sessionmaker
from hitcurve.models import AccuracyRecord, Alert, ClusterCurve, Server, ServerCurve, Snapshot
from hitcurve_testing.snapshots import make_snapshot, make_stats_only_snapshot
from hitcurve_worker.drain_tasks import drain
from hitcurve_worker.snapshot_tasks import process

WINDOWS = 5


def _docs(start: datetime) -> list[dict[str, Any]]:
    """The uploads in arrival order: window by window, a server each; the late window last."""
    docs = []
    for w in range(WINDOWS):
        end = start + timedelta(minutes=w)
        # graded servers whose hit rate drifts away from their curve (errors in the band history)
        for i in range(3):
            docs.append(
                make_snapshot(
                    f"10.62.{i}.1:11211", n_classes=12, end=end, seed=10 * i + w, hit_ratio=0.55 + 0.07 * w
                )
            )
        lossy = make_snapshot("10.62.3.1:11211", n_classes=12, end=end, seed=3, hit_ratio=0.7)
        if w in (1, 2):  # a stream-loss alert opens, then resolves
            lossy["loss"].update(loss_ratio=0.2, flagged=True)
        docs.append(lossy)
        docs.append(
            make_snapshot("10.62.4.1:11211", n_classes=8, end=end, seed=4, hit_ratio=0.6, fill=0.3 + 0.1 * w)
        )
        docs.append(make_stats_only_snapshot("10.62.5.1:11211", end=end, hit_ratio=0.7, fitted=w != 2))
    # windows of a server end 10 s after the previous server's: a batch spans several window ends
    for doc in docs:
        i = int(doc["server"]["address"].split(".")[2])
        for edge in ("start", "end"):
            t = datetime.fromisoformat(doc["window"][edge].replace("Z", "+00:00")) + timedelta(seconds=10 * i)
            doc["window"][edge] = t.isoformat().replace("+00:00", "Z")
    late = make_snapshot(
        "10.62.0.1:11211", n_classes=12, end=start - timedelta(minutes=1), seed=99, hit_ratio=0.6
    )
    late["loss"].update(loss_ratio=0.2, flagged=True)  # alerting on it would reopen stream loss
    return [*docs, late]


def _cluster(org: Org, addresses: list[str]) -> None:
    with get_sessionmaker()() as db:
        cl = db.execute(
            text(
                "INSERT INTO clusters (id, org_id, name, target_hit_ratio, price_per_gb_month)"
                " VALUES (gen_random_uuid(), :o, 'web', 0.9, 5) RETURNING id"
            ),
            {"o": org.id},
        ).scalar_one()
        db.execute(
            text("UPDATE servers SET cluster_id = :c WHERE org_id = :o AND address = ANY(:a)"),
            {"c": cl, "o": org.id, "a": addresses},
        )
        db.commit()


def _upload_all(client: Any, org: Org, docs: list[dict[str, Any]], first: int) -> list[dict[str, Any]]:
    """Uploads docs[first:] (new snapshot ids: the two organizations' snapshots are distinct)."""
    mine = []
    for doc in docs[first:]:
        doc = copy.deepcopy(doc)
        doc["snapshot_id"] = str(uuid.uuid4())
        assert upload(client, org, doc).status_code == 202, doc["server"]["address"]
        mine.append(doc)
    return mine


def _stored(org: Org) -> dict[str, Any]:
    """The organization's rows with its ids replaced by names (server address, window end)."""
    with get_sessionmaker()() as db:
        servers = {
            r.id: r.address
            for r in db.execute(select(Server.id, Server.address).where(Server.org_id == org.id))
        }
        snaps = {
            r.id: f"{servers[r.server_id]}@{r.window_end.isoformat()}"
            for r in db.execute(
                select(Snapshot.id, Snapshot.server_id, Snapshot.window_end).where(Snapshot.org_id == org.id)
            )
        }
        names: dict[str, str] = {str(k): v for k, v in {**servers, **snaps}.items()}

        def canon(v: Any) -> Any:
            if isinstance(v, dict):
                return {canon(k): canon(x) for k, x in v.items()}
            if isinstance(v, list | tuple):
                return [canon(x) for x in v]
            if isinstance(v, uuid.UUID | str):
                return names.get(str(v), v)
            return v

        def rows(model: Any, skip: set[str]) -> list[dict[str, Any]]:
            out = []
            for obj in db.execute(select(model).where(model.org_id == org.id)).scalars():
                out.append(
                    {
                        c.name: canon(getattr(obj, c.key))
                        for c in model.__table__.columns
                        if c.name not in skip
                    }
                )
            return sorted(out, key=repr)

        ids = {"id", "org_id", "computed_at", "cluster_id"}
        newest = db.execute(
            select(ClusterCurve)
            .where(ClusterCurve.org_id == org.id)
            .order_by(ClusterCurve.window_end.desc())
            .limit(1)
        ).scalar_one()
        return {
            "server_curves": rows(ServerCurve, ids),
            "accuracy_records": rows(AccuracyRecord, ids),
            "alerts": rows(Alert, ids | {"first_seen_at", "last_seen_at", "resolved_at", "acknowledged_at"}),
            "cluster_curve": {
                c.name: canon(getattr(newest, c.key))
                for c in ClusterCurve.__table__.columns
                if c.name not in ids
            },
            "processed": db.execute(
                select(Snapshot.status).where(Snapshot.org_id == org.id, Snapshot.status != "processed")
            ).all(),
        }


def test_drained_batches_store_what_one_at_a_time_stores(
    private_env: dict[str, str], client: Any, org: Org
) -> None:
    start = datetime.now(UTC).replace(microsecond=0, second=0) - timedelta(hours=1)
    docs = _docs(start)
    per_window = len(docs[:-1]) // WINDOWS
    other = make_org("one at a time")
    cluster = ["10.62.0.1:11211", "10.62.1.1:11211"]

    # batches: the first window (servers registered), the cluster, then the rest at once
    _upload_all(client, org, docs[:per_window], 0)
    drain()
    _cluster(org, cluster)
    _upload_all(client, org, docs[:-1], per_window)
    counts = drain()
    # each batch one window of every server (a claim takes one per server)
    assert counts["processed"] >= len(docs) - 1 - per_window and counts["batches"] == WINDOWS - 1, counts
    _upload_all(client, org, docs, len(docs) - 1)  # the late window, after its server's newer ones
    drain()

    # one at a time, in the same order
    def one_by_one(mine: list[dict[str, Any]]) -> None:
        for doc in mine:
            end = datetime.fromisoformat(doc["window"]["end"].replace("Z", "+00:00"))
            assert process(uuid.UUID(doc["snapshot_id"]), end)["status"] == "processed"

    one_by_one(_upload_all(client, other, docs[:per_window], 0))
    _cluster(other, cluster)
    one_by_one(_upload_all(client, other, docs[:-1], per_window))
    one_by_one(_upload_all(client, other, docs, len(docs) - 1))

    batched, single = _stored(org), _stored(other)
    assert batched["processed"] == [] and single["processed"] == []
    # what the uploads were meant to exercise is there
    assert len(batched["server_curves"]) == len(docs) - 1  # one stats-only window has no curve
    assert any(a["basis"] == "calibrated" for a in batched["accuracy_records"])
    assert {(a["kind"], a["state"]) for a in batched["alerts"]} >= {("stream_loss", "resolved")}
    assert batched["cluster_curve"]["server_count"] == 2
    # every alert alike, the cluster's too: a cluster alert waits until its answer has held over
    # hysteresis.HOLD_WINDOWS windows (past the curve too), so a drain evaluating a cluster once per
    # batch and the one-at-a-time path evaluating it after each member's window open the same ones
    # (a memory_short on one past-the-curve window, resolved by the next, once told them apart)
    for table in ("server_curves", "accuracy_records", "alerts", "cluster_curve"):
        assert batched[table] == single[table], table
