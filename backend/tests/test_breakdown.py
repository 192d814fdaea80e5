"""The prefix breakdown through the real upload and read APIs (real PostgreSQL): the agent's
optional fields are validated with their limits at ingestion, stored with the snapshot, and
GET /servers/{id}/breakdown answers per-prefix memory for a target, hot keys, TTL-aware vs
oblivious memory and expired vs evicted."""

from __future__ import annotations

import copy
from datetime import UTC, datetime, timedelta
from typing import Any

from conftest import Account, bearer, upload_snapshot
from hitcurve.breakdown.ttlwhatif import what_if
from hitcurve.rules.curves import memory_for
from hitcurve_testing.snapshots import add_breakdown, make_snapshot


def post(account: Account, snap: dict[str, Any]) -> Any:
    key = account.extra.get("agent_key") or account.agent_key()
    account.extra["agent_key"] = key
    return account.client.post("/api/v1/agent/snapshots", json=snap, headers=bearer(key))


def refused(account: Account, url: str, params: dict[str, Any], code: str, loc: list[str]) -> None:
    """A what-if query answered 422 with `code`, located at `loc`."""
    r = account.get(url, params=params)
    assert r.status_code == 422, r.text
    j = r.json()
    assert j["code"] == code, j
    assert j["detail"][0]["loc"] == loc, j


def test_memory_for_interpolates_and_says_when_unreachable() -> None:
    pts = [[100.0, 0.2], [200.0, 0.6], [300.0, 0.6], [400.0, 0.9]]
    assert memory_for(pts, 0.1) == 50.0  # from (0, 0)
    assert memory_for(pts, 0.4) == 150.0
    assert memory_for(pts, 0.6) == 200.0  # the first size that reaches it
    assert memory_for(pts, 0.75) == 350.0
    assert memory_for(pts, 0.95) is None


def test_breakdown_round_trip(account: Account, other: Account) -> None:
    server_id, snap = upload_snapshot(account, "10.0.0.9:11211")
    r = account.get(f"/api/v1/servers/{server_id}/breakdown")
    assert r.status_code == 404 and r.json()["code"] == "no_breakdown", r.text

    snap = add_breakdown(make_snapshot("10.0.0.9:11211", seed=2), hashed=False)
    assert post(account, snap).status_code == 202
    r = account.get(f"/api/v1/servers/{server_id}/breakdown", params={"target": 0.8})
    assert r.status_code == 200, r.text
    b = r.json()
    assert b["snapshot_id"] == snap["snapshot_id"] and b["target"] == 0.8
    names = [p["prefix"] for p in b["prefixes"]]
    assert names == ["user", "sess", "feed", "cfg", "(other)"]
    total = sum(p["requests"] for p in snap["prefixes"]) + snap["prefix_other"]["requests"]
    user = b["prefixes"][0]
    assert abs(user["request_share"] - 480_000 / total) < 1e-9
    assert user["hit_ratio"] == 0.93 and user["bytes"] == 21_000_000
    assert user["memory_for_target"] == memory_for(snap["prefixes"][0]["points"], 0.8)
    assert b["prefixes"][-1]["other"] and b["prefixes"][-1]["memory_for_target"] is None
    assert abs(sum(p["memory_share"] for p in b["prefixes"]) - 1) < 1e-9
    # TTL-aware vs oblivious memory at the target, and what expiry saves
    t = b["ttl"]
    aware = memory_for(snap["ttl_points"], 0.8)
    obl = memory_for(snap["ttl"]["oblivious_points"], 0.8)
    assert t["memory_for_target"] == aware and t["memory_for_target_oblivious"] == obl
    assert abs(t["saved_ratio"] - (1 - aware / obl)) < 1e-12 and 0 < t["saved_ratio"] < 1
    # hot keys as sent (clear here), expired vs evicted per class and in total
    assert not b["hot_keys_hashed"] and b["hot_keys"][0]["key"] == "cfg:flags"
    assert b["hot_keys_by_bytes"][0]["key"] == "feed:home"
    assert b["left"]["evicted"] == sum(c["left"]["evicted"] for c in snap["classes"])
    # page-move evictions: per class as the agent counted them, capped by what the
    # stream saw evicted; the total is their sum
    by_id = {c["id"]: c for c in b["classes"]}
    for c in snap["classes"]:
        want = min(c.get("page_move_evictions", 0), c["left"]["evicted"])
        assert by_id[c["id"]]["evicted_by_page_moves"] == want, c["id"]
    assert b["left"]["evicted_by_page_moves"] == sum(c["evicted_by_page_moves"] for c in b["classes"]) > 0
    assert [c["id"] for c in b["classes"]] == [c["id"] for c in snap["classes"]]
    # another organization sees nothing
    r = other.get(f"/api/v1/servers/{server_id}/breakdown")
    assert r.status_code == 404 and r.json()["code"] == "not_found"
    r = account.get(f"/api/v1/servers/{server_id}/breakdown", params={"target": 1.5})
    assert r.status_code == 422


def test_breakdown_limits_are_enforced_at_ingestion(account: Account) -> None:
    base = add_breakdown(make_snapshot("10.0.0.10:11211", seed=3))

    def rejected(mutate: Any, needle: str) -> None:
        s = copy.deepcopy(base)
        mutate(s)
        r = post(account, s)
        assert r.status_code == 422 and needle in r.text, (needle, r.text)

    def many_prefixes(s: dict[str, Any]) -> None:
        s["prefixes"] = [dict(s["prefixes"][0], prefix=f"p{i}") for i in range(101)]

    rejected(many_prefixes, "prefixes")
    rejected(lambda s: s["prefixes"][0].update(prefix="x" * 65), "prefix")
    rejected(lambda s: s["prefixes"][1].update(prefix="user"), "appears twice")
    rejected(lambda s: s["hot_keys"][0].update(key="k" * 251), "hot_keys")
    rejected(lambda s: s.update(hot_keys=s["hot_keys"] * 13), "hot_keys")
    rejected(lambda s: s["prefixes"][2]["points"].reverse(), "prefix 'feed'")
    rejected(lambda s: s["ttl_points"].pop(), "ttl_points: curve has 99 points")
    rejected(lambda s: s["classes"][0]["left"].update(evicted=-1), "evicted")
    c0 = base["classes"][0]
    rejected(lambda s: s["classes"][0].update(page_move_evictions=c0["evictions"] + 1), "page_move_evictions")
    # the TTL what-if: the grid's bounds and order, one column per TTL plus today's, its values
    rejected(
        lambda s: s["prefixes"][1]["ttl_whatif"]["hit_ratio"].pop(),
        "ttl_whatif.hit_ratio has 32 values, expected 33",
    )
    rejected(lambda s: s["prefixes"][1]["ttl_whatif"]["live_byte_s"].append(1), "live_byte_s")
    rejected(lambda s: s["ttl_whatif_ttls_s"].pop(), "ttl_whatif.hit_ratio has 33 values, expected 32")
    rejected(lambda s: s.pop("ttl_whatif_ttls_s"), "ttl_whatif needs ttl_whatif_ttls_s")
    rejected(lambda s: s["ttl_whatif_ttls_s"].reverse(), "TTLs must be strictly increasing")
    rejected(lambda s: s["ttl_whatif_ttls_s"].__setitem__(0, 0), "ttl_whatif_ttls_s")
    rejected(lambda s: s["ttl_whatif_ttls_s"].append(2**32 + 1), "ttl_whatif_ttls_s")
    rejected(lambda s: s.update(ttl_whatif_ttls_s=list(range(1, 34))), "ttl_whatif_ttls_s")
    rejected(lambda s: s["prefixes"][1]["ttl_whatif"]["hit_ratio"].__setitem__(3, 1.5), "hit_ratio")
    rejected(lambda s: s["prefixes"][1]["ttl_whatif"]["live_byte_s"].__setitem__(3, -1), "live_byte_s")
    rejected(lambda s: s["prefixes"][1]["ttl_whatif"]["live_byte_s"].__setitem__(3, 2**62 + 1), "live_byte_s")
    # nothing of the rejected uploads was stored; the valid one is
    assert account.get("/api/v1/servers").json() == []
    assert post(account, base).status_code == 202


def test_pool_split_what_if(account: Account, other: Account) -> None:
    """GET /servers/{id}/breakdown/split: the model's answer for a prefix of the latest window,
    its consistency, and located 422s for what it cannot answer."""
    server_id, _ = upload_snapshot(account, "10.0.0.11:11211")
    url = f"/api/v1/servers/{server_id}/breakdown/split"
    r = account.get(url, params={"prefix": "feed"})
    assert r.status_code == 404 and r.json()["code"] == "no_breakdown", r.text
    snap = add_breakdown(make_snapshot("10.0.0.11:11211", seed=4))
    assert post(account, snap).status_code == 202
    m = snap["server"]["limit_maxbytes"]
    r = account.get(url, params={"prefix": "feed", "prefix_bytes": m / 4})
    assert r.status_code == 200, r.text
    b = r.json()
    assert b["snapshot_id"] == snap["snapshot_id"] and b["prefix"] == "feed"
    assert b["today_bytes"] == m and b["total_bytes"] == m
    total = sum(p["requests"] for p in snap["prefixes"]) + snap["prefix_other"]["requests"]
    assert abs(b["request_share"] - 240_000 / total) < 1e-12
    assert len(b["points"]) == 100
    assert all(abs(p["prefix_bytes"] + p["rest_bytes"] - m) < 1e-6 * m for p in b["points"])
    assert b["best"]["hit_ratio"] == max(p["hit_ratio"] for p in b["points"])
    assert abs(b["gain_pp"] - 100 * (b["best"]["hit_ratio"] - b["pooled_hit_ratio"])) < 1e-9
    # the chosen split is the prefix's own curve at X and the read-weighted sum
    c = b["chosen"]
    assert c["prefix_bytes"] == m / 4
    s = b["request_share"]
    assert abs(c["hit_ratio"] - (s * c["prefix_hit_ratio"] + (1 - s) * c["rest_hit_ratio"])) < 1e-12
    own = memory_for(snap["prefixes"][2]["points"], c["prefix_hit_ratio"])
    assert own is not None and abs(own - m / 4) < 0.01 * m
    # consistency: today's proportions reproduce the pooled curve, calibrated on the measured ratio
    assert abs(b["today_split"]["hit_ratio"] - b["pooled_hit_ratio"]) < 0.005
    assert abs(b["pooled_hit_ratio"] - snap["measured"]["hit_ratio"]) < 1e-6 or b["calibration_scale"] == 1.0
    assert b["check"]["tolerance_pp"] == 3.0 and b["check"]["prefix_measured_hit_ratio"] == 0.71
    # another total: the split of twice today's memory
    r2 = account.get(url, params={"prefix": "feed", "total_bytes": 2 * m})
    assert r2.status_code == 200 and r2.json()["total_bytes"] == 2 * m and r2.json()["chosen"] is None

    def bad(params: dict[str, Any], code: str, loc: list[str]) -> None:
        refused(account, url, params, code, loc)

    bad({"prefix": "nope"}, "unknown_prefix", ["query", "prefix"])
    bad({"prefix": "(other)"}, "unknown_prefix", ["query", "prefix"])
    bad({"prefix": "feed", "prefix_bytes": m}, "split_outside_total", ["query", "prefix_bytes"])
    r = account.get(url, params={"prefix": "feed", "total_bytes": -1})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "total_bytes"]
    r = account.get(url)
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "prefix"]
    r = other.get(url, params={"prefix": "feed"})
    assert r.status_code == 404 and r.json()["code"] == "not_found"
    # a prefix with too few reads in the window has a noisy curve: refused, located
    few = add_breakdown(make_snapshot("10.0.0.11:11211", seed=5))
    few["prefixes"][3]["requests"] = 999
    assert post(account, few).status_code == 202
    bad({"prefix": "cfg"}, "too_few_reads", ["query", "prefix"])
    # a prefix that is the whole server (keys without the delimiter, as the demo's: one prefix
    # and nothing else) leaves no rest to split off: a located 422, not a division by zero
    whole = add_breakdown(make_snapshot("10.0.0.11:11211", seed=6))
    whole["prefixes"] = [whole["prefixes"][2]]
    whole["prefix_other"].update(requests=0, bytes=0)
    assert post(account, whole).status_code == 202
    bad({"prefix": "feed"}, "no_rest", ["query", "prefix"])


def test_a_lossy_or_quiet_window_never_stands_for_the_breakdown(account: Account) -> None:
    """As for the sizing answer (hitcurve/rules/windows.py): the breakdown and the split rest on the
    newest window that was neither loss-flagged nor quiet, and say which newer ones were left out;
    with no good window at all, the newest stands in and says so."""
    now = datetime.now(UTC).replace(microsecond=0)

    def server(address: str) -> str:
        return str(next(s["id"] for s in account.get("/api/v1/servers").json() if s["address"] == address))

    good = add_breakdown(make_snapshot("10.0.0.12:11211", seed=6, end=now - timedelta(minutes=3)))
    assert post(account, good).status_code == 202
    url = f"/api/v1/servers/{server('10.0.0.12:11211')}/breakdown"
    b = account.get(url).json()
    assert b["snapshot_id"] == good["snapshot_id"] and b["windows_note"] is None
    lossy = add_breakdown(make_snapshot("10.0.0.12:11211", seed=7, end=now - timedelta(minutes=2)))
    lossy["loss"].update(loss_ratio=0.2, flagged=True)
    quiet = add_breakdown(make_snapshot("10.0.0.12:11211", seed=8, end=now - timedelta(minutes=1)))
    quiet["measured"].update(cmd_get=10, get_hits=5, get_misses=5, hit_ratio=0.5)
    for s in (lossy, quiet):
        assert post(account, s).status_code == 202, s["snapshot_id"]
    b = account.get(url).json()
    assert b["snapshot_id"] == good["snapshot_id"], b["windows_note"]
    assert b["windows_note"] == "2 newer windows left out (quiet, stream loss)"
    sp = account.get(url + "/split", params={"prefix": "feed"}).json()
    assert sp["snapshot_id"] == good["snapshot_id"] and sp["windows_note"] == b["windows_note"]

    # a server whose every window is lossy: the newest stands in, said to be so
    only = add_breakdown(make_snapshot("10.0.0.13:11211", seed=9))
    only["loss"].update(loss_ratio=0.3, flagged=True)
    assert post(account, only).status_code == 202
    b = account.get(f"/api/v1/servers/{server('10.0.0.13:11211')}/breakdown").json()
    assert b["snapshot_id"] == only["snapshot_id"]
    assert b["windows_note"] == "no recent window without stream loss: this one stands in, treat it with care"


def test_ttl_what_if(account: Account, other: Account) -> None:
    """GET /servers/{id}/breakdown/ttl: the model's answer (hitcurve/breakdown/ttlwhatif.py) for a prefix of
    the latest window, as the API returns it, and located 422s for what it cannot answer."""
    server_id, _ = upload_snapshot(account, "10.0.0.14:11211")
    url = f"/api/v1/servers/{server_id}/breakdown/ttl"
    r = account.get(url, params={"prefix": "sess", "ttl_s": 6})
    assert r.status_code == 404 and r.json()["code"] == "no_breakdown", r.text
    snap = add_breakdown(make_snapshot("10.0.0.14:11211", seed=6))
    assert post(account, snap).status_code == 202
    r = account.get(url, params={"prefix": "sess", "ttl_s": 6})
    assert r.status_code == 200, r.text
    b = r.json()
    sess = snap["prefixes"][1]
    tw = sess["ttl_whatif"]
    total = sum(p["requests"] for p in snap["prefixes"]) + snap["prefix_other"]["requests"]
    want = what_if(
        snap["ttl_whatif_ttls_s"],
        tw["hit_ratio"],
        tw["live_byte_s"],
        60.0,
        sess["points"],
        sess["hit_ratio"],
        sess["bytes"],
        sess["requests"] / total,
        snap["measured"]["hit_ratio"],
        6,
        tw["sampled_hit_ratio"],
    )
    assert b["snapshot_id"] == snap["snapshot_id"] and b["prefix"] == "sess" and b["ttl_s"] == 6
    k = sess["hit_ratio"] / tw["sampled_hit_ratio"]  # the sample's bias, corrected
    assert b["sample_correction"] == k
    assert b["allowed_hit_ratio"] == min(1.0, k * tw["hit_ratio"][1 + snap["ttl_whatif_ttls_s"].index(6)])
    assert b["allowed_hit_ratio_today"] == min(1.0, k * tw["hit_ratio"][0])
    assert abs(b["live_bytes_today"] - sess["bytes"]) < 1  # the sample's live bytes at 3 s = its bytes
    assert b["prefix_hit_ratio"] == want.prefix_hit_ratio and b["server_hit_ratio"] == want.server_hit_ratio
    assert b["memory_for_today_hit_ratio"] == want.memory_for_today_hit_ratio and b["reachable"]
    assert b["bound"]  # 6 s allows more than today's 3 s: the in-memory answer is a bound
    assert b["memory_change_bytes"] == want.memory_for_today_hit_ratio - sess["bytes"]
    # a longer TTL than today's: more hits allowed, more live bytes, the server's hit ratio up
    assert b["allowed_hit_ratio"] > b["allowed_hit_ratio_today"] and b["live_bytes"] > b["live_bytes_today"]
    assert b["server_hit_ratio_unbounded"] > snap["measured"]["hit_ratio"]
    assert [g["ttl_s"] for g in b["grid"]] == snap["ttl_whatif_ttls_s"]
    assert "cache-aside" in b["gaps"] and "ttlwhatif.py" in b["model"]
    # between two TTLs of the grid: read in log TTL, between its neighbours
    r5 = account.get(url, params={"prefix": "sess", "ttl_s": 5}).json()
    assert k * tw["hit_ratio"][4] < r5["allowed_hit_ratio"] < k * tw["hit_ratio"][5]

    def bad(params: dict[str, Any], code: str, loc: list[str]) -> None:
        refused(account, url, params, code, loc)

    bad({"prefix": "nope", "ttl_s": 6}, "unknown_prefix", ["query", "prefix"])
    bad({"prefix": "user", "ttl_s": 6}, "no_ttl_data", ["query", "prefix"])
    bad({"prefix": "sess", "ttl_s": 65537}, "ttl_out_of_range", ["query", "ttl_s"])
    for v in (0, 1.5, 2**32 + 1):  # not a whole number of seconds in memcached's range
        r = account.get(url, params={"prefix": "sess", "ttl_s": v})
        assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "ttl_s"], (v, r.text)
    r = account.get(url, params={"prefix": "sess"})
    assert r.status_code == 422 and r.json()["detail"][0]["loc"] == ["query", "ttl_s"]
    r = other.get(url, params={"prefix": "sess", "ttl_s": 6})
    assert r.status_code == 404 and r.json()["code"] == "not_found"
    few = add_breakdown(make_snapshot("10.0.0.14:11211", seed=7))
    few["prefixes"][1]["ttl_whatif"]["sampled_reads"] = 199
    assert post(account, few).status_code == 202
    bad({"prefix": "sess", "ttl_s": 6}, "too_few_reads", ["query", "prefix"])
