"""Alert state changes reach each notification channel exactly once, through a real worker
process and Redis, at a real local HTTP receiver: webhook (signed), Slack, PagerDuty Events v2
and Alertmanager payloads; a receiver answering 500 twice gets the third attempt; redelivered
tasks and refreshed alerts send nothing more; a resolution follows on the same dedup key."""

from __future__ import annotations

import importlib.util
import json
import sys
import uuid
from collections.abc import Iterator
from typing import Any

import pytest
from worker_helpers import ROOT, Org, start_worker, wait_for

from hitcurve_testing.waiting import DEADLINE_S

pytestmark = pytest.mark.live

_RECEIVER = ROOT / "backend" / "tests" / "receiver.py"  # shared with the backend's API tests
_spec = importlib.util.spec_from_file_location("hitcurve_test_receiver", _RECEIVER)
assert _spec and _spec.loader
receiver_mod = importlib.util.module_from_spec(_spec)
sys.modules["hitcurve_test_receiver"] = receiver_mod
_spec.loader.exec_module(receiver_mod)

ENV = {
    "HITCURVE_ALLOW_PRIVATE_WEBHOOKS": "true",
    "HITCURVE_WEBHOOK_BACKOFF_S": "0.2",
    "HITCURVE_WEBHOOK_MAX_ATTEMPTS": "4",
}


@pytest.fixture(scope="module")
def worker(private_env: dict[str, str]) -> Iterator[Any]:
    w = start_worker({**private_env, **ENV}, "deliver", concurrency=2)
    yield w
    w.stop()


def _channels(org: Org, base: str) -> dict[str, tuple[uuid.UUID, str | None]]:
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.crud.notifications import new_secret
    from hitcurve.models import NotificationChannel

    out = {}
    with get_sessionmaker()() as db:
        for name, kind, path, key, min_sev in (
            ("hook", "webhook", "/hook", None, "info"),
            ("slack", "slack", "/slack", None, "warning"),
            ("pd", "pagerduty", "/pd", "R0UT1NGKEY", "warning"),
            ("am", "alertmanager", "/am", None, "warning"),
            ("flaky", "webhook", "/flaky", None, "warning"),
            ("pager-only", "pagerduty", "/critical-only", "K2", "critical"),
        ):
            ch = NotificationChannel(
                org_id=org.id,
                name=name,
                kind=kind,
                url=base + path,
                secret=new_secret() if kind == "webhook" else None,
                routing_key=key,
                min_severity=min_sev,
            )
            db.add(ch)
            db.flush()
            out[path] = (ch.id, ch.secret)
        db.commit()
    return out


def _change(org: Org, cluster_id: uuid.UUID, firing: Any, celery_client: Any) -> int:
    """One evaluation of the rule, as the snapshot task does it: upsert, commit, enqueue."""
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.rules.alerts import MEMORY_SHORT
    from hitcurve_worker.notification_tasks import enqueue_remembered
    from hitcurve_worker.snapshot_tasks import upsert_alert

    with get_sessionmaker()() as db:
        upsert_alert(db, org.id, MEMORY_SHORT, firing, cluster_id=cluster_id)
        db.commit()
        return enqueue_remembered(db, sender=celery_client)


def _deliveries(org: Org) -> list[Any]:
    from sqlalchemy import select

    from hitcurve.core.db import get_sessionmaker
    from hitcurve.models import AlertDelivery

    with get_sessionmaker()() as db:
        return list(db.execute(select(AlertDelivery).where(AlertDelivery.org_id == org.id)).scalars())


def _redeliver(org: Org, celery_client: Any) -> None:
    """Every delivery's task once more, as a broker redelivering messages would."""
    sent = [celery_client.send_task("hitcurve.deliver_alert", args=[d.id]) for d in _deliveries(org)]
    assert all(r.get(timeout=DEADLINE_S)["status"] == "delivered" for r in sent)


def test_each_state_change_reaches_each_channel_once(
    org: Org, worker: Any, celery_client: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.models import Cluster
    from hitcurve.notify import payloads as notify
    from hitcurve.rules.alerts import MEMORY_SHORT, Firing

    with get_sessionmaker()() as db:
        cl = Cluster(org_id=org.id, name="web-cache", target_hit_ratio=0.9, price_per_gb_month=3.0)
        db.add(cl)
        db.commit()
        cluster_id = cl.id

    with receiver_mod.Receiver({"/flaky": [500, 500, 200]}) as rx:
        chans = _channels(org, rx.base)
        firing = Firing(
            MEMORY_SHORT, "warning", "the target 90% needs 72 MiB; 64 MiB is set (8 MiB short)", {}
        )
        assert _change(org, cluster_id, firing, celery_client) == 5  # not the critical-only channel
        paths = ("/hook", "/slack", "/pd", "/am", "/flaky")
        wait_for(lambda: all(rx.at(p) for p in paths) and len(rx.at("/flaky")) == 3, what="opened everywhere")
        wait_for(lambda: all(d.status == "delivered" for d in _deliveries(org)), what="deliveries recorded")

        # Refreshing the open alert is no state change; redelivered tasks send nothing again.
        assert _change(org, cluster_id, firing, celery_client) == 0
        _redeliver(org, celery_client)
        assert {p: len(rx.at(p)) for p in paths} == {"/hook": 1, "/slack": 1, "/pd": 1, "/am": 1, "/flaky": 3}
        assert rx.at("/critical-only") == []

        flaky = next(d for d in _deliveries(org) if d.channel_id == chans["/flaky"][0])
        assert (flaky.attempts, flaky.response_code, flaky.status) == (3, 200, "delivered")
        # the three attempts of one state change carry one delivery key, each signed
        keys = {r.headers["x-hitcurve-delivery"] for r in rx.at("/flaky")}
        assert keys == {flaky.key}
        assert all(
            notify.verify(chans["/flaky"][1], r.body, r.headers["x-hitcurve-signature"])
            for r in rx.at("/flaky")
        )

        hook = rx.at("/hook")[0]
        assert notify.verify(chans["/hook"][1], hook.body, hook.headers["x-hitcurve-signature"])
        body = json.loads(hook.body)
        assert body["event"] == "alert.opened"
        assert body["alert"]["subject"] == {"type": "cluster", "name": "web-cache", "id": str(cluster_id)}
        assert body["alert"]["kind"] == MEMORY_SHORT and "72 MiB" in body["alert"]["message"]
        assert "x-hitcurve-signature" not in rx.at("/slack")[0].headers  # only the webhook is signed
        assert "cluster web-cache" in json.loads(rx.at("/slack")[0].body)["text"]
        pd = json.loads(rx.at("/pd")[0].body)
        alert_id = body["alert"]["id"]
        assert (pd["event_action"], pd["dedup_key"], pd["routing_key"]) == (
            "trigger",
            f"hitcurve-{alert_id}",
            "R0UT1NGKEY",
        )
        assert pd["payload"]["severity"] == "warning" and pd["payload"]["component"] == "web-cache"
        am = json.loads(rx.at("/am")[0].body)
        assert am["version"] == "4" and am["status"] == "firing"
        assert am["alerts"][0]["labels"] == {
            "alertname": "hitcurve_memory_short",
            "severity": "warning",
            "organization": "Worker Test Org",
            "cluster": "web-cache",
        }

        # Resolution: once per channel that takes it at the time, same PagerDuty dedup key.
        assert _change(org, cluster_id, None, celery_client) == 5
        wait_for(lambda: all(len(rx.at(p)) == 2 for p in ("/hook", "/slack", "/pd", "/am")), what="resolved")
        wait_for(lambda: len(rx.at("/flaky")) == 4, what="flaky resolved")
        wait_for(lambda: all(d.status == "delivered" for d in _deliveries(org)), what="resolutions recorded")
        assert _change(org, cluster_id, None, celery_client) == 0  # already resolved
        _redeliver(org, celery_client)
        assert {p: len(rx.at(p)) for p in paths} == {"/hook": 2, "/slack": 2, "/pd": 2, "/am": 2, "/flaky": 4}
        pd2 = json.loads(rx.at("/pd")[1].body)
        assert (pd2["event_action"], pd2["dedup_key"]) == ("resolve", f"hitcurve-{alert_id}")
        assert json.loads(rx.at("/am")[1].body)["status"] == "resolved"
        assert json.loads(rx.at("/hook")[1].body)["event"] == "alert.resolved"
        assert len({d.key for d in _deliveries(org)}) == 10


def test_a_receiver_that_keeps_failing_ends_failed_after_the_attempts(
    org: Org, worker: Any, celery_client: Any
) -> None:
    from hitcurve.core.db import get_sessionmaker
    from hitcurve.models import Cluster, NotificationChannel
    from hitcurve.rules.alerts import MEMORY_SHORT, Firing

    with receiver_mod.Receiver({"/gone": [503], "/bad": [400]}) as rx, get_sessionmaker()() as db:
        cl = Cluster(org_id=org.id, name="c", target_hit_ratio=0.9, price_per_gb_month=0)
        db.add(cl)
        for name, path in (("gone", "/gone"), ("bad", "/bad")):
            db.add(
                NotificationChannel(
                    org_id=org.id, name=name, kind="slack", url=rx.base + path, min_severity="info"
                )
            )
        db.commit()
        cid = cl.id
        assert _change(org, cid, Firing(MEMORY_SHORT, "critical", "x", {}), celery_client) == 2
        # 503 is retried until HITCURVE_WEBHOOK_MAX_ATTEMPTS (4 here); 400 is not retried
        wait_for(lambda: all(d.status == "failed" for d in _deliveries(org)), what="both failed")
        by = {d.last_error.split(":")[0]: d for d in _deliveries(org) if d.last_error}
        assert by["HTTP 400"].attempts == 1 and len(rx.at("/bad")) == 1
        assert by["HTTP 503"].attempts == 4 and len(rx.at("/gone")) == 4


def test_a_channel_added_while_an_alert_is_open_hears_it_resolve_and_gets_the_opening_when_asked(
    org: Org, worker: Any, celery_client: Any
) -> None:
    """A state change goes to the channels of its moment: one added while the alert was open is
    told of the resolution; one that asked for the open alerts was told of the opening too."""
    from datetime import UTC, datetime

    from hitcurve.core.db import get_sessionmaker
    from hitcurve.crud import notifications as crud
    from hitcurve.models import Cluster, NotificationChannel
    from hitcurve.rules.alerts import MEMORY_SHORT, Firing
    from hitcurve_worker.notification_tasks import enqueue_remembered, remember

    with get_sessionmaker()() as db:
        cl = Cluster(org_id=org.id, name="late-channels", target_hit_ratio=0.9, price_per_gb_month=0)
        db.add(cl)
        db.commit()
        cid = cl.id
    firing = Firing(MEMORY_SHORT, "critical", "needs 80 MiB; 64 MiB is set", {})
    assert _change(org, cid, firing, celery_client) == 0  # no channel yet: nobody to tell

    with receiver_mod.Receiver({}) as rx, get_sessionmaker()() as db:
        chans = {}
        for name in ("asked", "quiet"):
            ch = NotificationChannel(org_id=org.id, name=name, kind="slack", url=f"{rx.base}/{name}")
            db.add(ch)
            db.flush()
            chans[name] = ch
        db.commit()
        assert crud.open_alerts_for(db, chans["asked"]) == 1
        remember(db, crud.queue_open_alerts(db, chans["asked"], datetime.now(UTC)))
        db.commit()
        assert enqueue_remembered(db, sender=celery_client) == 1
        wait_for(lambda: len(rx.at("/asked")) == 1, what="the open alert sent to the channel that asked")
        assert "needs 80 MiB" in json.loads(rx.at("/asked")[0].body)["text"]
        assert rx.at("/quiet") == []

        assert _change(org, cid, None, celery_client) == 2  # the resolution reaches both
        wait_for(lambda: len(rx.at("/asked")) == 2 and len(rx.at("/quiet")) == 1, what="resolved on both")
        assert all("resolved" in json.loads(r.body)["text"] for r in (rx.at("/asked")[1], rx.at("/quiet")[0]))
