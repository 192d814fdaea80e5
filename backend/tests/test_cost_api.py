"""GET /sizing/{clusters|servers}/{id}/cost against real PostgreSQL: the cluster's miss cost
entered or measured (the agents' cost_us at a CPU price), stored by the migration and changed in
the cluster's settings; the reads per second from the uploaded windows; the optimum the same as
the pure cost answer on the sizing routes' own basis, and at the tangent point worked out by hand."""

import html
import math
import uuid
from datetime import datetime, timedelta

import pytest

from conftest import insert_server_curve, upload_snapshot
from hitcurve.core.db import get_sessionmaker
from hitcurve.cost import model
from hitcurve.cost.answer import cost_answer
from hitcurve.cost.subject import subject_basis, subject_prices
from hitcurve.models import ClusterCurve
from hitcurve.rules.memlimit import human_bytes
from hitcurve.schemas.sizing import Subject

MIB = 1 << 20
S = 32 * MIB
XS = [float(MIB * k) for k in range(1, 257)]
YS = [0.95 * (1 - math.exp(-x / S)) for x in XS]
READS = 1_200_000 / 60  # make_snapshot: 1.2 M gets in a 60 s window
PRICE = 1000.0  # per GiB-month: a MiB costs about 1 a month
# the tangent of 0.95 (1 - e^(-x/S)): x* = S ln(0.95 B / (a S)); B = 4 a S / 0.95 puts it at S ln 4
A_S = PRICE * S / model.GIB
MISS = 4 * A_S / 0.95 / (READS * model.SECONDS_PER_MONTH) * 1e6


def _cluster(account, **prices) -> tuple[str, str]:
    cid = account.post("/api/v1/clusters", json={"name": "web", "price_per_gb_month": PRICE, **prices})
    assert cid.status_code == 201, cid.text
    sid, snap = upload_snapshot(account)
    assert account.patch(f"/api/v1/servers/{sid}", json={"cluster_id": cid.json()["id"]}).status_code == 200
    insert_server_curve(account.org_id, sid, snap, XS, YS, hit_ratio_calibrated=YS, current_bytes=64 * MIB)
    with get_sessionmaker()() as db:  # the worker's cluster curve of its one server
        db.add(
            ClusterCurve(
                org_id=uuid.UUID(account.org_id), cluster_id=uuid.UUID(cid.json()["id"]),
                window_end=datetime.fromisoformat(snap["window"]["end"]), basis="calibrated",
                sizes_bytes=XS, hit_ratios=YS, current_bytes=64 * MIB, server_count=1,
            )
        )  # fmt: skip
        db.commit()
    return cid.json()["id"], sid


def test_an_entered_miss_cost_gives_the_tangent_point(account) -> None:
    cid, sid = _cluster(account, miss_cost_per_million=MISS)
    r = account.get(f"/api/v1/sizing/clusters/{cid}/cost")
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["status"] == "ok", a["message"]
    assert a["prices"]["reads_per_second"] == pytest.approx(READS)
    assert a["prices"]["miss_cost_source"] == "entered" and a["prices"]["miss_cost_per_million"] == MISS
    assert abs(a["optimal_memory_bytes"] - S * math.log(4)) < 0.25 * MIB
    assert a["saving_per_month"] > 0 and a["today"]["memory_bytes"] == 64 * MIB
    # the same answer as the pure function on the basis the /sizing routes read
    with get_sessionmaker()() as db:
        org = uuid.UUID(account.org_id)
        b = subject_basis(db, "cluster", org, uuid.UUID(cid))
        pure = cost_answer(
            Subject(type="cluster", id=uuid.UUID(cid)), b, subject_prices(db, "cluster", org, uuid.UUID(cid))
        )
    assert a["optimal_memory_bytes"] == pure.optimal_memory_bytes
    assert a["optimal_memory_limit_bytes"] == pure.optimal_memory_limit_bytes
    assert a["saving_per_month"] == pytest.approx(pure.saving_per_month)
    # the server answers at its cluster's prices over its own windows (here the same one)
    s = account.get(f"/api/v1/sizing/servers/{sid}/cost").json()
    assert s["optimal_memory_bytes"] == a["optimal_memory_bytes"]


def test_a_measured_miss_cost_prices_the_agents_refill_time(account) -> None:
    cid, _ = _cluster(account, miss_cost_source="measured")
    a = account.get(f"/api/v1/sizing/clusters/{cid}/cost").json()
    assert a["status"] == "no_prices" and "CPU-hour price" in a["message"]
    assert a["optimal_memory_bytes"] is None
    r = account.patch(f"/api/v1/clusters/{cid}", json={"cpu_price_per_hour": 0.05})
    assert r.status_code == 200 and r.json()["cpu_price_per_hour"] == 0.05
    assert r.json()["miss_cost_source"] == "measured"
    a = account.get(f"/api/v1/sizing/clusters/{cid}/cost").json()
    # make_snapshot: every class timed 100 refills of 2,100.5 us on average
    assert a["prices"]["recompute_seconds_per_miss"] == pytest.approx(2100.5e-6)
    assert a["prices"]["miss_cost_per_million"] == pytest.approx(2100.5 * 0.05 / 3600)
    assert a["status"] in ("ok", "above_curve"), a["message"]


def test_the_miss_cost_settings_are_checked(account, other) -> None:
    cid, sid = _cluster(account)
    a = account.get(f"/api/v1/sizing/clusters/{cid}/cost").json()
    assert a["status"] == "no_prices" and "enter what a million misses cost" in a["message"]
    for bad in ({"miss_cost_per_million": -1}, {"cpu_price_per_hour": "x"}, {"miss_cost_source": "guess"},
                {"miss_cost_source": None}):  # fmt: skip
        r = account.patch(f"/api/v1/clusters/{cid}", json=bad)
        assert r.status_code == 422, (bad, r.text)
    assert (
        account.patch(f"/api/v1/clusters/{cid}", json={"miss_cost_per_million": 2.5}).json()[
            "miss_cost_per_million"
        ]
        == 2.5
    )
    assert other.get(f"/api/v1/sizing/clusters/{cid}/cost").status_code == 404
    assert other.get(f"/api/v1/sizing/servers/{sid}/cost").status_code == 404


def test_no_curve_is_not_enough_data(account) -> None:
    cid = account.post("/api/v1/clusters", json={"name": "empty"}).json()["id"]
    r = account.get(f"/api/v1/sizing/clusters/{cid}/cost")
    assert r.status_code == 409 and r.json()["code"] == "not_enough_data"


def test_the_api_the_email_and_metrics_give_one_cost_answer(account, anon) -> None:
    """One question, one answer: the weekly e-mail's row (HTML and text) and the /metrics gauges
    read the very cost answer GET /sizing/clusters/{id}/cost gives."""
    from prometheus_client.parser import text_string_to_metric_families

    from conftest import bearer
    from hitcurve.cost.answer import cost_row
    from hitcurve.schemas.cost import CostAnswer

    cid, _ = _cluster(account, miss_cost_per_million=MISS)
    a = CostAnswer.model_validate(account.get(f"/api/v1/sizing/clusters/{cid}/cost").json())
    assert a.status == "ok" and a.optimal is not None
    row = cost_row(a)
    assert row.startswith(f"{human_bytes(a.optimal_memory_bytes)} (-m ")  # type: ignore[arg-type]
    p = account.get("/api/v1/reports/preview", params={"cluster_id": cid}).json()
    assert f"Cost-optimal memory:          {row}\n" in p["text"]
    assert f'<td data-row="cost-optimal">{html.escape(row)}</td>' in p["html"]
    # the serverless maximum for the cluster's target: the API's words, in both parts of the mail
    s = a.serverless
    assert s is not None and s.data_storage_maximum_gb is not None and s.total_per_month is not None
    assert f"Serverless instead:           {s.message}\n" in p["text"]
    assert f'<td data-row="serverless">{html.escape(s.message)}</td>' in p["html"]
    token = account.api_token("read")
    fams = {
        f.name: f for f in text_string_to_metric_families(anon.get("/metrics", headers=bearer(token)).text)
    }

    def value(name: str) -> float:
        hits = [s.value for s in fams[name].samples if s.labels.get("cluster_id") == cid]
        assert len(hits) == 1, (name, fams[name].samples)
        return float(hits[0])

    assert value("hitcurve_cluster_cost_optimum_known") == 1
    assert value("hitcurve_cluster_cost_optimal_memory_bytes") == a.optimal_memory_bytes
    assert value("hitcurve_cluster_cost_optimal_monthly") == pytest.approx(a.optimal.total, rel=1e-12)
    assert value("hitcurve_cluster_cost_saving_monthly") == pytest.approx(a.saving_per_month, rel=1e-12)
    # without a miss cost: known 0 and no optimum sample, and no e-mail figure either
    account.patch(f"/api/v1/clusters/{cid}", json={"miss_cost_per_million": None})
    fams = {
        f.name: f for f in text_string_to_metric_families(anon.get("/metrics", headers=bearer(token)).text)
    }
    assert value("hitcurve_cluster_cost_optimum_known") == 0
    assert not [
        s
        for s in fams["hitcurve_cluster_cost_optimal_memory_bytes"].samples
        if s.labels.get("cluster_id") == cid
    ]
    p = account.get("/api/v1/reports/preview", params={"cluster_id": cid}).json()
    assert "Cost-optimal memory:          the cost-optimal size needs a miss cost" in p["text"]


def test_a_finished_runs_policies_in_money(account) -> None:
    """GET /simulations/{id}/cost: the cluster's target and prices over the stored results, the same
    rows as the pure comparison; 409 before the run is done; 404 for another org's run."""
    from datetime import UTC, timedelta

    from hitcurve.cost import policies
    from hitcurve.models import SimulationResult, SimulationRun

    cid, sid = _cluster(account, miss_cost_per_million=MISS, target_hit_ratio=0.9)
    now = datetime.now(UTC)
    pts = {"lru": [(32, 0.70), (64, 0.80), (128, 1.0)], "gdwheel": [(32, 0.75), (64, 0.90), (128, 0.95)]}
    with get_sessionmaker()() as db:
        run = SimulationRun(
            org_id=uuid.UUID(account.org_id), cluster_id=uuid.UUID(cid), policies=list(pts),
            sizes_bytes=[k * MIB for k in (32, 64, 128)], window_start=now - timedelta(hours=1),
            window_end=now, status="running", progress=0.5,
        )  # fmt: skip
        db.add(run)
        db.flush()
        for p, rows in pts.items():
            for mb, hr in rows:
                db.add(
                    SimulationResult(
                        org_id=run.org_id,
                        run_id=run.id,
                        policy=p,
                        size_bytes=mb * MIB,
                        hit_ratio=hr,
                        requests=1000,
                        details={"sample_rate": 0.01, "span_seconds": 3600.0},
                    )  # fmt: skip
                )
        db.commit()
        run_id = str(run.id)
    r = account.get(f"/api/v1/simulations/{run_id}/cost")
    assert r.status_code == 409 and r.json()["code"] == "simulation_not_finished", r.text
    with get_sessionmaker()() as db:
        db.get(SimulationRun, uuid.UUID(run_id)).status = "done"  # type: ignore[union-attr]
        db.commit()
    r = account.get(f"/api/v1/simulations/{run_id}/cost")
    assert r.status_code == 200, r.text
    a = r.json()
    assert a["target_hit_ratio"] == 0.9 and a["memory_bytes"] == 64 * MIB  # today's memory, the curve's
    by = {row["policy"]: row for row in a["rows"]}
    assert [row["policy"] for row in a["rows"]] == ["lru", "gdwheel"]
    # PRICE a GiB-month; LRU needs 96 MiB for 90 %, GD-Wheel 64
    assert by["gdwheel"]["memory_saving_per_month"] == pytest.approx(32 * MIB * PRICE / model.GIB)
    month = READS * model.SECONDS_PER_MONTH * MISS / 1e6
    assert by["gdwheel"]["misses_saving_per_month"] == pytest.approx(0.1 * month)
    assert "gdwheel needs the least memory" in a["message"]
    want = policies.compare(
        {p: [policies.Point(mb * MIB, hr, None) for mb, hr in rows] for p, rows in pts.items()},
        policies.Sample(0.01, 3600.0), 0.9, 64 * MIB, PRICE, "entered", MISS, READS, None,
    )  # fmt: skip
    assert [row["misses_per_month_at"] for row in a["rows"]] == pytest.approx(
        [w.misses_per_month_at for w in want]
    )
    # compared at another memory, and an unknown run
    r = account.get(f"/api/v1/simulations/{run_id}/cost", params={"memory_bytes": 100 * MIB})
    assert r.status_code == 200 and r.json()["rows"][0]["hit_ratio_at"] == 1.0
    assert account.get(f"/api/v1/simulations/{uuid.uuid4()}/cost").status_code == 404
    assert account.get(f"/api/v1/simulations/{run_id}/cost", params={"memory_bytes": 0}).status_code == 422


def test_misses_priced_per_prefix_from_the_agents_breakdown(account, anon) -> None:
    """A cluster prices a prefix's misses apart: the setting is checked and stored, the answer
    reads the server's breakdown window (its prefixes' curves and read shares), moves the optimum
    out for a dear prefix with a long curve, names a priced prefix without a curve, and the e-mail
    and /metrics give that same answer."""
    from prometheus_client.parser import text_string_to_metric_families

    from conftest import bearer
    from hitcurve.cost.answer import cost_row
    from hitcurve.schemas.cost import CostAnswer
    from hitcurve_testing.snapshots import add_breakdown, make_snapshot

    cid, sid = _cluster(account, miss_cost_per_million=MISS)
    one = account.get(f"/api/v1/sizing/clusters/{cid}/cost").json()
    assert one["status"] == "ok" and one["prefix_costs"] == [], one["message"]
    bad = {
        "too many": {f"p{i}": 1.0 for i in range(17)},
        "negative": {"feed": -1.0},
        "other": {"(other)": 1.0},
        "empty name": {"": 1.0},
        "long name": {"x" * 129: 1.0},
        "not a number": {"feed": "dear"},
    }
    for why, v in bad.items():
        r = account.patch(f"/api/v1/clusters/{cid}", json={"prefix_miss_costs": v})
        assert r.status_code == 422, (why, r.text)
    assert "at most 16 priced prefixes, not 17" in account.patch(
        f"/api/v1/clusters/{cid}", json={"prefix_miss_costs": bad["too many"]}
    ).text
    got = account.get("/api/v1/clusters").json()
    assert next(c for c in got if c["id"] == cid)["prefix_miss_costs"] is None  # nothing stored
    # the server's newest window carries a breakdown: feed has 240,000 of 1.2 M reads and a long curve
    end = datetime.fromisoformat(one["curve"]["window_end"]) + timedelta(minutes=1)
    snap = add_breakdown(make_snapshot("10.0.0.7:11211", end=end))
    key = account.extra["agent_key"]
    assert account.client.post("/api/v1/agent/snapshots", json=snap, headers=bearer(key)).status_code == 202
    costs = {"feed": 10 * MISS, "nope": 1.0}
    r = account.patch(f"/api/v1/clusters/{cid}", json={"prefix_miss_costs": costs})
    assert r.status_code == 200 and r.json()["prefix_miss_costs"] == costs, r.text
    a = CostAnswer.model_validate(account.get(f"/api/v1/sizing/clusters/{cid}/cost").json())
    assert a.status == "ok" and a.optimal_memory_bytes is not None, a.message
    assert [p.prefix for p in a.prefix_costs] == ["feed"] and a.prefixes_without_curve == ["nope"]
    assert a.prefix_costs[0].read_share == pytest.approx(240_000 / 1_200_000)
    assert a.optimal_memory_bytes > 1.2 * one["optimal_memory_bytes"]
    assert "a million misses cost of feed" in a.message
    assert "for want of a curve in the agents' windows: nope" in a.message
    # the server's own answer prices its prefixes too (its cluster's settings)
    s = account.get(f"/api/v1/sizing/servers/{sid}/cost").json()
    assert [p["prefix"] for p in s["prefix_costs"]] == ["feed"]
    # one answer: the e-mail's row and the /metrics gauge are this answer's
    p = account.get("/api/v1/reports/preview", params={"cluster_id": cid}).json()
    assert f"Cost-optimal memory:          {cost_row(a)}\n" in p["text"]
    token = account.api_token("read")
    fams = {
        f.name: f for f in text_string_to_metric_families(anon.get("/metrics", headers=bearer(token)).text)
    }
    gauge = fams["hitcurve_cluster_cost_optimal_memory_bytes"]
    opt = [s.value for s in gauge.samples if s.labels.get("cluster_id") == cid]
    assert opt == [a.optimal_memory_bytes]
    # cleared: one price again
    r = account.patch(f"/api/v1/clusters/{cid}", json={"prefix_miss_costs": None})
    assert r.status_code == 200 and r.json()["prefix_miss_costs"] is None
    again = account.get(f"/api/v1/sizing/clusters/{cid}/cost").json()
    assert again["prefix_costs"] == [] and again["optimal_memory_bytes"] == one["optimal_memory_bytes"]
