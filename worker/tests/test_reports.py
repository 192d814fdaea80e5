"""Weekly e-mail reports against a real SMTP server (aiosmtpd on a free loopback port), the real
PostgreSQL test database and a real Celery worker process: the numbers in the e-mail are the
sizing API's, one organization's data never reaches another's subscriber, a period is sent once
however often the tasks run, an organization without agents gets the "no agent" text, and a
report that meets a dead SMTP server is retried and delivered once the server is up."""

from __future__ import annotations

import socket
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from email import message_from_bytes, policy
from email.message import EmailMessage
from typing import Any

import pytest
from aiosmtpd.controller import Controller
from sqlalchemy import select, update
from worker_helpers import Org, WorkerProc, make_org, start_worker, upload, wait_for

from hitcurve.core.db import get_sessionmaker
from hitcurve.core.security import sha256_hex
from hitcurve.models import ApiToken, Cluster, ReportDelivery, ReportSubscription, Server, Snapshot
from hitcurve_testing.snapshots import synthetic_snapshot
from hitcurve_testing.waiting import DEADLINE_S

pytestmark = pytest.mark.slow

# The dashboard's address as the worker's e-mails name it (Settings.public_url).
PUBLIC_URL = "https://hitcurve.example.test"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Inbox:
    def __init__(self) -> None:
        self.messages: list[EmailMessage] = []

    async def handle_DATA(self, server: Any, session: Any, envelope: Any) -> str:  # noqa: N802 - aiosmtpd API
        msg = message_from_bytes(envelope.content, policy=policy.default)
        assert isinstance(msg, EmailMessage)
        msg["X-Envelope-To"] = ",".join(envelope.rcpt_tos)
        self.messages.append(msg)
        return "250 OK"

    def to(self, addr: str) -> list[EmailMessage]:
        return [m for m in self.messages if m["X-Envelope-To"] == addr]


def text_of(m: EmailMessage) -> str:
    part = m.get_body(preferencelist=("plain",))
    assert part is not None
    return str(part.get_content())


def html_of(m: EmailMessage) -> str:
    part = m.get_body(preferencelist=("html",))
    assert part is not None
    return str(part.get_content())


@pytest.fixture(scope="module")
def smtp_port() -> int:
    return free_port()


@pytest.fixture(scope="module")
def inbox(smtp_port: int) -> Iterator[Inbox]:
    box = Inbox()
    ctl = Controller(box, hostname="127.0.0.1", port=smtp_port)
    ctl.start()
    yield box
    ctl.stop()


@pytest.fixture(scope="module")
def worker(private_env: dict[str, str], smtp_port: int) -> Iterator[WorkerProc]:
    env = {
        **private_env,
        "HITCURVE_SMTP_HOST": "127.0.0.1",
        "HITCURVE_SMTP_PORT": str(smtp_port),
        "HITCURVE_SMTP_FROM": "Hitcurve <reports@test.invalid>",
        "HITCURVE_SMTP_TIMEOUT_S": "5",
        "HITCURVE_PUBLIC_URL": PUBLIC_URL,
    }
    w = start_worker(env, "reports")
    yield w
    w.stop()


def db() -> Any:
    return get_sessionmaker()()


def subscribe(
    org: Org, email: str, cluster_id: uuid.UUID | None = None, confirmed: bool = True
) -> uuid.UUID:
    now = datetime.now(UTC)
    with db() as s:
        sub = ReportSubscription(
            org_id=org.id,
            email=email,
            cluster_id=cluster_id,
            weekday=now.weekday(),
            hour_utc=now.hour,
            created_at=now - timedelta(days=1),
            confirmed_at=now - timedelta(days=1) if confirmed else None,
        )
        s.add(sub)
        s.commit()
        return sub.id


def org_with_cluster(
    client: Any, name: str, cluster: str, subnet: int, price: float
) -> tuple[Org, uuid.UUID]:
    """An organization whose cluster `cluster` has two servers with processed curves."""
    org = make_org(name)
    with db() as s:
        cl = Cluster(org_id=org.id, name=cluster, target_hit_ratio=0.7, price_per_gb_month=price)
        s.add(cl)
        s.commit()
        cluster_id = cl.id
    addrs = [f"10.{subnet}.0.{i}:11211" for i in range(2)]
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(minutes=20)
    for round_ in range(3):
        ids = []
        for i, a in enumerate(addrs):
            snap = synthetic_snapshot(
                address=a,
                n_classes=12,
                total_pages=256,
                end=end + timedelta(minutes=round_),
                hit_ratio=0.6 + 0.05 * i,
                seed=subnet * 10 + i + round_,
            )
            assert upload(client, org, snap).status_code == 202
            ids.append(uuid.UUID(snap["snapshot_id"]))
        for sid in ids:
            wait_for(lambda sid=sid: status(sid) == "processed", what="snapshots processed")
        if round_ == 0:
            with db() as s:
                s.execute(
                    update(Server)
                    .where(Server.org_id == org.id, Server.address.in_(addrs))
                    .values(cluster_id=cluster_id)
                )
                s.commit()
    return org, cluster_id


def status(sid: uuid.UUID) -> str | None:
    with db() as s:
        return s.execute(select(Snapshot.status).where(Snapshot.id == sid)).scalar_one_or_none()  # type: ignore[no-any-return]


def read_token(org: Org) -> str:
    token = "hct_" + uuid.uuid4().hex + uuid.uuid4().hex
    with db() as s:
        s.add(
            ApiToken(
                org_id=org.id,
                name="report test",
                scope="read",
                prefix=token[:8],
                token_hash=sha256_hex(token),
            )
        )
        s.commit()
    return token


def deliveries(sub_id: uuid.UUID) -> list[ReportDelivery]:
    with db() as s:
        return list(
            s.execute(select(ReportDelivery).where(ReportDelivery.subscription_id == sub_id)).scalars()
        )


def run(celery_client: Any, task: str, *args: str) -> Any:
    return celery_client.send_task(task, args=list(args)).get(timeout=DEADLINE_S)


@pytest.fixture(scope="module")
def two_orgs(worker: WorkerProc, client: Any) -> dict[str, Any]:
    a, ca = org_with_cluster(client, "Acme Caching", "alpha-sessions", 61, 4.0)
    b, cb = org_with_cluster(client, "Bravo Secret Org", "bravo-private-cluster", 62, 9.0)
    return {"a": a, "ca": ca, "b": b, "cb": cb}


@pytest.mark.live
def test_report_numbers_are_the_sizing_apis_and_orgs_stay_apart(
    worker: WorkerProc, inbox: Inbox, client: Any, celery_client: Any, two_orgs: dict[str, Any]
) -> None:
    a, b = two_orgs["a"], two_orgs["b"]
    sa, sb = subscribe(a, "ops@acme.test"), subscribe(b, "root@bravo.test")
    out = run(celery_client, "hitcurve.dispatch_weekly_reports")
    assert out["queued"] >= 2
    wait_for(lambda: inbox.to("ops@acme.test") and inbox.to("root@bravo.test"), what="both reports")
    [ma], [mb] = inbox.to("ops@acme.test"), inbox.to("root@bravo.test")
    ta, tb = text_of(ma), text_of(mb)

    # the numbers: what GET /sizing/clusters/{id}/memory answers for the cluster's target
    tok = read_token(a)
    ans = client.get(
        f"/api/v1/sizing/clusters/{two_orgs['ca']}/memory", headers={"Authorization": f"Bearer {tok}"}
    ).json()
    curve = client.get(
        f"/api/v1/clusters/{two_orgs['ca']}/curve", headers={"Authorization": f"Bearer {tok}"}
    ).json()
    gib = float(1 << 30)

    def size(v: float) -> str:
        """Memory as the API's messages and the dashboard write it (frontend/src/lib/bytes.cases.json),
        written out here: the binary unit that fits, whole from 100 up, else one decimal, ".0"
        dropped from 10 up ("0.06 GiB" was the mail's 64 MiB)."""
        unit = next(u for u, k in (("GiB", 3), ("MiB", 2), ("KiB", 1)) if v >= 1024**k)
        r = v / 1024 ** {"KiB": 1, "MiB": 2, "GiB": 3}[unit]
        x = f"{r:.0f}" if r >= 100 else f"{r:.1f}"
        return f"{x.removesuffix('.0') if r >= 10 else x}\u00a0{unit}"

    assert ans["status"] == "ok", ans
    assert f"Memory for 70\u00a0% hit rate:   {size(ans['memory_bytes'])}" in ta  # as the dashboard

    def band(v: float | None) -> str:
        return "beyond the curve's range" if v is None else size(v)

    b = ans["band"]
    assert b["confidence"] == 0.9 and b["memory_bytes_min"] <= ans["memory_bytes"]
    # memory_bytes_max None: that end lies past the curve
    assert b["memory_bytes_max"] is None or ans["memory_bytes"] <= b["memory_bytes_max"]
    assert f"(90\u00a0% band {band(b['memory_bytes_min'])} to {band(b['memory_bytes_max'])}" in ta
    allocated = ans["curve"]["current_bytes"]
    assert f"Memory in use today:          {size(allocated)}" in ta
    # money in the install's currency (Settings.currency, USD by default: "$")
    assert f"Monthly cost now:             ${allocated / gib * 4.0:,.2f}" in ta
    assert f"at target: ${ans['memory_bytes'] / gib * 4.0:,.2f}" in ta
    saving = (allocated - ans["memory_bytes"]) / gib * 4.0
    line = f"${saving:,.2f} per month" if saving > 0 else f"${-saving:,.2f} more per month"
    assert line in ta
    hist = client.get(
        f"/api/v1/clusters/{two_orgs['ca']}/history",
        params={"start": (datetime.now(UTC) - timedelta(days=7)).isoformat(), "max_points": 1},
        headers={"Authorization": f"Bearer {tok}"},
    ).json()
    week = f"{hist['points'][0]['measured_hit_ratio'] * 100:.1f}".removesuffix(".0")  # "90 %", "89.8 %"
    assert f"Measured hit rate this week:  {week}\u00a0%" in ta
    acc = client.get(
        f"/api/v1/clusters/{two_orgs['ca']}/accuracy",
        params={"start": (datetime.now(UTC) - timedelta(days=7)).isoformat(), "max_points": 1},
        headers={"Authorization": f"Bearer {tok}"},
    ).json()
    assert acc["samples"] > 0
    assert (
        f"{acc['mean_abs_error_pp']:.2f} pp, worst {acc['max_abs_error_pp']:.2f} pp "
        f"over {acc['samples']} windows" in ta
    )
    assert curve["current_bytes"] == allocated
    assert "Hitcurve weekly report for Acme Caching" in ta and "alpha-sessions" in html_of(ma)

    # isolation: each subscriber gets only its own organization
    for secret in ("Bravo Secret Org", "bravo-private-cluster", "10.62.0."):
        assert secret not in ta and secret not in html_of(ma)
    for other in ("Acme Caching", "alpha-sessions", "10.61.0."):
        assert other not in tb and other not in html_of(mb)
    assert ma["To"] == "ops@acme.test" and mb["To"] == "root@bravo.test"
    for sub in (sa, sb):
        [d] = deliveries(sub)
        assert d.status == "sent" and d.sent_at is not None
        with db() as s:
            assert s.get(ReportSubscription, sub).last_sent_at is not None  # type: ignore[union-attr]


@pytest.mark.live
def test_running_twice_sends_once(
    worker: WorkerProc, inbox: Inbox, celery_client: Any, two_orgs: dict[str, Any]
) -> None:
    sub = subscribe(two_orgs["a"], "twice@acme.test", two_orgs["ca"])
    run(celery_client, "hitcurve.dispatch_weekly_reports")
    wait_for(lambda: inbox.to("twice@acme.test"), what="the report")
    [d] = deliveries(sub)
    # the dispatcher again, and the sending task itself again, directly
    run(celery_client, "hitcurve.dispatch_weekly_reports")
    assert (
        run(celery_client, "hitcurve.send_report", str(sub), d.period_start.isoformat())["status"]
        == "already-sent"
    )
    with db() as s:
        first = s.get(ReportSubscription, sub).last_sent_at  # type: ignore[union-attr]
    run(celery_client, "hitcurve.dispatch_weekly_reports")
    assert len(inbox.to("twice@acme.test")) == 1
    assert len(deliveries(sub)) == 1
    with db() as s:
        assert s.get(ReportSubscription, sub).last_sent_at == first  # type: ignore[union-attr]


@pytest.mark.live
def test_empty_org_says_no_agent_has_reported(worker: WorkerProc, inbox: Inbox, celery_client: Any) -> None:
    org = make_org("Fresh Org")
    subscribe(org, "new@fresh.test")
    run(celery_client, "hitcurve.dispatch_weekly_reports")
    wait_for(lambda: inbox.to("new@fresh.test"), what="the report")
    [m] = inbox.to("new@fresh.test")
    assert "No agent has reported yet" in text_of(m)
    assert "No agent has reported yet" in html_of(m)


@pytest.mark.live
def test_nothing_is_sent_to_a_recipient_who_has_not_confirmed(
    worker: WorkerProc, inbox: Inbox, celery_client: Any
) -> None:
    org = make_org("Pending Org")
    pending = subscribe(org, "pending@pending.test", confirmed=False)
    confirmed = subscribe(org, "confirmed@pending.test")
    run(celery_client, "hitcurve.dispatch_weekly_reports")
    wait_for(lambda: inbox.to("confirmed@pending.test"), what="the confirmed recipient's report")
    assert deliveries(pending) == [] and inbox.to("pending@pending.test") == []
    # a period recorded before the address changed (and lost its confirmation) is skipped
    [d] = deliveries(confirmed)
    with db() as s:
        s.execute(
            update(ReportDelivery)
            .where(ReportDelivery.id == d.id)
            .values(status="pending", sent_at=None)
        )
        s.execute(
            update(ReportSubscription).where(ReportSubscription.id == confirmed).values(confirmed_at=None)
        )
        s.commit()
    out = run(celery_client, "hitcurve.send_report", str(confirmed), d.period_start.isoformat())
    assert out["status"] == "skipped"
    assert len(inbox.to("confirmed@pending.test")) == 1


@pytest.mark.live
def test_preview_cli_prints_the_text_version(two_orgs: dict[str, Any], private_env: dict[str, str]) -> None:
    import os
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-m", "hitcurve_worker.reports", "preview", "--org", str(two_orgs["a"].id)],
        capture_output=True,
        text=True,
        env={**os.environ},
        timeout=120,
        check=True,
    ).stdout
    assert "Hitcurve weekly report for Acme Caching" in out and "alpha-sessions" in out
    assert "bravo" not in out.lower()


@pytest.mark.live
def test_smtp_down_is_retried_not_lost(private_env: dict[str, str], redis_index: int) -> None:
    import redis
    from celery import Celery
    from worker_helpers import private_redis_url

    # A Redis index of its own, so only this test's worker (SMTP down) takes the task.
    url = private_redis_url(15 if redis_index != 15 else 14)
    redis.Redis.from_url(url).flushdb()
    port = free_port()  # nothing listens here yet
    w = start_worker(
        {
            **private_env,
            "HITCURVE_REDIS_URL": url,
            "HITCURVE_SMTP_HOST": "127.0.0.1",
            "HITCURVE_SMTP_PORT": str(port),
        },
        "reports-down",
    )
    sender = Celery("smtp-down", broker=url, backend=url)
    box = Inbox()
    ctl = None
    try:
        org = make_org("Down Org")
        sub = subscribe(org, "late@down.test")
        from hitcurve_worker.reports.tasks import dispatch

        dispatch(sender=sender)
        wait_for(lambda: any(d.status == "failed" for d in deliveries(sub)), what="a failed attempt")
        [d] = deliveries(sub)
        assert "Connection" in (d.error or "") or "refused" in (d.error or "").lower()
        ctl = Controller(box, hostname="127.0.0.1", port=port)
        ctl.start()
        wait_for(lambda: box.to("late@down.test"), what="the retried report")
        wait_for(lambda: deliveries(sub)[0].status == "sent", what="the delivery marked sent")
        assert len(box.to("late@down.test")) == 1
    finally:
        w.stop()
        sender.close()
        redis.Redis.from_url(url).flushdb()
        if ctl is not None:
            ctl.stop()


@pytest.mark.live
def test_the_email_has_its_chart_inline_links_into_the_dashboard_and_a_working_unsubscribe(
    worker: WorkerProc, inbox: Inbox, client: Any, celery_client: Any, two_orgs: dict[str, Any]
) -> None:
    import io
    import re

    from PIL import Image

    ca = two_orgs["ca"]
    sub = subscribe(two_orgs["a"], "chart@acme.test", ca)
    run(celery_client, "hitcurve.dispatch_weekly_reports")
    wait_for(lambda: inbox.to("chart@acme.test"), what="the report")
    [m] = inbox.to("chart@acme.test")
    html, text = html_of(m), text_of(m)

    # the chart: an image/png part inside multipart/related, named by the HTML's cid: URL
    cids = re.findall(r'src="cid:([^"]+)"', html)
    assert cids == [f"curve-{ca}@hitcurve.report"], cids
    parts = {p["Content-ID"]: p for p in m.walk() if p.get_content_type() == "image/png"}
    assert set(parts) == {f"<{cids[0]}>"}
    related = next(p for p in m.walk() if p.get_content_type() == "multipart/related")
    assert [p.get_content_type() for p in related.iter_parts()] == ["text/html", "image/png"]
    png = parts[f"<{cids[0]}>"].get_content()
    img = Image.open(io.BytesIO(png))
    assert img.format == "PNG" and img.size == (1200, 560)
    # the curve is drawn: the curve's blue is on the image, not only axes
    assert (29, 78, 216) in {c for _, c in img.convert("RGB").getcolors(1 << 20) or []}

    # links go into the dashboard at Settings.public_url: the cluster, alerts, reports, unsubscribe
    hrefs = re.findall(r'href="([^"]+)"', html)
    assert hrefs and all(h.startswith(PUBLIC_URL + "/") for h in hrefs), hrefs
    assert f"{PUBLIC_URL}/clusters/{ca}" in hrefs and f"{PUBLIC_URL}/reports" in hrefs
    assert f"{PUBLIC_URL}/clusters/{ca}" in text
    [unsub] = [h for h in hrefs if h.startswith(f"{PUBLIC_URL}/unsubscribe/")]
    assert unsub in text
    token = unsub.rsplit("/", 1)[1]
    # RFC 8058 one-click headers name the API's POST endpoint with the same token
    assert m["List-Unsubscribe"] == f"<{PUBLIC_URL}/api/v1/reports/unsubscribe/{token}>"
    assert m["List-Unsubscribe-Post"] == "List-Unsubscribe=One-Click"

    # one vocabulary and the currency
    for body in (text, html):
        assert "hit ratio" not in body.lower()
        assert "Memory limit to set" in body and "-m " in body
        assert "$" in body and "Prices in USD" in body
    ans = client.get(
        f"/api/v1/sizing/clusters/{ca}/memory",
        headers={"Authorization": f"Bearer {read_token(two_orgs['a'])}"},
    ).json()
    # the one -m to set: the API's recommended limit, the value the card and the page show
    mib = ans["recommended_memory_limit_bytes"] // (1 << 20)
    assert f"Memory limit to set:          -m {mib} (" in text
    # each row of the text part on a line of its own (an inline tag closing a row ate its newline)
    rows = [line.strip() for line in text.splitlines()]
    for label in ("Memory limit to set:", "Monthly cost now:", "Open alerts"):
        assert any(r.startswith(label) for r in rows), (label, text)
    for r in rows:
        assert r.count(":  ") <= 1, (r, text)  # one "Label:  value" a row
    assert "Recommended memory limit" not in text and "Recommended memory limit" not in html

    # follow the unsubscribe link with no session at all, as a mail client would (one click)
    from fastapi.testclient import TestClient

    from hitcurve.main import create_app

    with TestClient(create_app()) as anon:
        assert anon.get(f"/unsubscribe/{token}").status_code == 200  # the dashboard page
        r = anon.post(
            f"/api/v1/reports/unsubscribe/{token}",
            content="List-Unsubscribe=One-Click",
            headers={"Content-Type": "application/x-www-form-urlencoded"},
        )
        assert r.status_code == 200, r.text
        body = r.json()
        assert body["email"] == "chart@acme.test" and body["already"] is False
        assert body["org_name"] == "Acme Caching" and body["about"] == "alpha-sessions"
        with db() as s:
            assert s.get(ReportSubscription, sub).enabled is False  # type: ignore[union-attr]
        # idempotent: again, the same answer marked already
        again = anon.post(f"/api/v1/reports/unsubscribe/{token}")
        assert again.status_code == 200 and again.json()["already"] is True
        # an altered token, or one for another subscription's id without the key, is refused
        head, mac = token.split(".")
        forged = head[:-2] + ("AA" if head[-2:] != "AA" else "BB") + "." + mac
        assert anon.post(f"/api/v1/reports/unsubscribe/{forged}").status_code == 404
        assert anon.post("/api/v1/reports/unsubscribe/not-a-token").status_code == 404
    # and the next dispatch sends nothing more to the unsubscribed address
    with db() as s:
        s.execute(
            update(ReportDelivery).where(ReportDelivery.subscription_id == sub).values(status="pending")
        )
        s.commit()
    run(celery_client, "hitcurve.dispatch_weekly_reports")
    [d] = deliveries(sub)
    run(celery_client, "hitcurve.send_report", str(sub), d.period_start.isoformat())
    assert len(inbox.to("chart@acme.test")) == 1


def test_an_alert_line_names_its_subject_once() -> None:
    """The rules write the subject into the alert's message ("cluster web: the target ..."): the
    demo's preview read "[warning] cluster demo-cluster: cluster demo-cluster: the target hit
    rate 90.0% needs 67.3 MiB"."""
    from hitcurve.reports.content import AlertLine, ClusterReport, OrgReport
    from hitcurve.reports.render import render
    from hitcurve.rules import alerts as rules

    now = datetime.now(UTC)
    stale = rules.stale_agent("server 10.0.0.9:11211", now - timedelta(hours=2), now, rules.Thresholds())
    assert stale is not None and stale.message.startswith("server 10.0.0.9:11211: ")
    line = AlertLine("critical", "stale_agent", "server 10.0.0.9:11211", stale.message, now)
    cluster = ClusterReport(
        uuid.uuid4(), "web", 0.9, 4.0, 1, None, None, None, "no curve yet",
        None, None, None, None, 0, None, None, alerts=[line],
    )  # fmt: skip
    report = OrgReport(uuid.uuid4(), "Acme", now - timedelta(days=7), now, [cluster], 2, 2, 1, [], [line])
    _, text, html = render(report, "ops@example.com")
    for body in (text, html):
        assert body.count("server 10.0.0.9:11211") == 2, body  # the cluster's line and the org's
        assert f"[critical] {stale.message}" in body


def test_the_charts_today_label_stays_off_the_limit_line() -> None:
    """The demo's chart: today 64 MiB, -m 68 for the target, a curve to 320 MiB; "today" was
    written across the -m line ("oday"). The line's pixels under the label's rows stay its colour."""
    import io

    from PIL import Image

    from hitcurve.reports.chart import LIMIT, curve_png
    from hitcurve.reports.content import ClusterReport
    from hitcurve.schemas.sizing import SizingAnswer

    mib = float(1 << 20)
    pts = [(k * 3.2 * mib, min(0.95, 0.3 + 0.6 * k / 21)) for k in range(1, 101)]
    sizing = SizingAnswer.model_construct(
        memory_limit_bytes=int(68 * mib),
        recommended_memory_limit_bytes=int(68 * mib),
        memory_bytes=67.3 * mib,
        nodes=1,
    )
    c = ClusterReport(
        uuid.uuid4(), "demo", 0.9, 4.0, 1, 0.88, 64 * mib, sizing, None,
        None, None, None, None, 0, None, None, curve_points=pts,
    )  # fmt: skip
    img = Image.open(io.BytesIO(curve_png(c) or b"")).convert("RGB")
    w, h = img.size
    mid = h // 2
    line = [x for x in range(w) if img.getpixel((x, mid)) == LIMIT]
    assert line, "the -m line"
    # the label's rows: just above the plot's bottom (MARGIN_B 40 px, 2x scale), 12 px font
    rows = range(h - 80 - 8 - 24, h - 80 - 8)
    crossed = [(x, y) for x in line for y in rows if img.getpixel((x, y)) != LIMIT]
    assert not crossed, crossed[:5]


def test_server_counts_read_as_words() -> None:
    """ "1 of 1 server(s) reporting" in the demo's e-mail: one server is "server", more "servers"."""
    from hitcurve.reports.content import ClusterReport, OrgReport
    from hitcurve.reports.render import render

    now = datetime.now(UTC)

    def cluster(n: int) -> ClusterReport:
        return ClusterReport(
            uuid.uuid4(), "web", 0.9, 4.0, n, None, None, None, "no curve yet",
            None, None, None, None, 0, None, None, alerts=[],
        )  # fmt: skip

    one = OrgReport(uuid.uuid4(), "Acme", now - timedelta(days=7), now, [cluster(1)], 1, 1, 0, [], [])
    _, text, html = render(one, "ops@example.com")
    for body in (text, html):
        assert "1 of 1 server reporting" in body and "server(s)" not in body, body
    assert "== Cluster web (1 server) ==" in text
    two = OrgReport(uuid.uuid4(), "Acme", now - timedelta(days=7), now, [cluster(3)], 3, 2, 0, [], [])
    _, text, html = render(two, "ops@example.com")
    for body in (text, html):
        assert "2 of 3 servers reporting" in body, body
    assert "== Cluster web (3 servers) ==" in text
