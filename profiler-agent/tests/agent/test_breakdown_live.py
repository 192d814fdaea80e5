"""The agent's breakdown (prefixes, hot keys, TTL curves) against real memcached: a seeded workload with known
prefixes, value sizes and TTLs (breakdown_load.py) beside the agent. What the agent reports per prefix, its
hot keys and its expired/evicted counts are compared with what the load driver counted itself and with
memcached's own counters.

The driver paces itself (memcached's logger thread drops lines when it does not get the CPU,
and this machine is shared), slows down further when memcached reports dropped lines, and the
loss the agent measured and reported is added to the tolerance of the counts it must reduce
(requests, evictions, expiries): within 2 % of memcached's counters on a lossless stream, as
the issue asks, plus exactly what the agent says it missed. Hit ratios are loss-robust and keep
their 1 pp bound.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from itertools import pairwise
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_harness import Agent, Client, Memcached, agent_bin, key_hash, kill_leftovers  # noqa: E402
from breakdown_load import Driver  # noqa: E402


@pytest.fixture(autouse=True)
def _no_leftover_processes():
    yield
    kill_leftovers()


def trickle(c: Client, seconds: float) -> int:
    """Reads of a key without a prefix: memcached's logger stays awake and the agent's stream
    time keeps moving (expiries are applied in stream time). Returns how many."""
    end = time.time() + seconds
    n = 0
    while time.time() < end:
        c.get(b"__warmup__")
        n += 1
        time.sleep(0.01)
    return n


def favour(proc: subprocess.Popen) -> None:
    """Best effort: raise the scheduling priority of every memcached thread (as root), so its
    logger thread keeps draining the workers' buffers on a machine shared with other jobs."""
    try:
        for tid in os.listdir(f"/proc/{proc.pid}/task"):
            os.setpriority(os.PRIO_PROCESS, int(tid), -10)
    except OSError:
        pass


def monotone_points(pts: list) -> bool:
    xs, ys = [p[0] for p in pts], [p[1] for p in pts]
    return (len(pts) == 100 and xs[0] > 0 and all(b > a for a, b in pairwise(xs))
            and all(0 <= y <= 1 for y in ys) and all(b >= a for a, b in pairwise(ys)))


@pytest.mark.slow
def test_prefixes_hot_keys_and_leave_counts_match_the_driver_and_memcached(tmp_path):
    m = Memcached(mem_mb=8)  # small: feed and tmp values are evicted, sess and tmp expire
    favour(m.proc)
    try:
        agent = Agent(tmp_path, m.addr, "--interval", "600", "--ghost-factor", "2", "--prefix-top", "4",
                      "--hot-keys", "10", "--hot-keys-clear", "1")
        agent.wait_log("watch_connected")
        agent.wait_log("memcached_instance")
        c = Client(m.port)
        warm = trickle(c, 0.3)
        before = c.stats()
        d = Driver(m.port, seed=3)
        started = time.monotonic()
        rate, dropped = 3000.0, int(before["log_worker_dropped"])
        for _ in range(10):  # 1 s slices; halve the rate whenever memcached dropped lines
            counts = d.run(seconds=1, rate=rate)
            now = int(c.stats()["log_worker_dropped"])
            if now > dropped:
                rate, dropped = max(rate / 2, 500), now
        d.close()
        # Let every TTL pass (the longest that matters is tmp's 5 s), make memcached reclaim
        # what expired, and keep stream time moving so the agent applies the same expiries.
        warm += trickle(c, 6)
        assert c.raw(b"lru_crawler crawl all\r\n", (b"OK",))[-1].strip() == b"OK"
        warm += trickle(c, 2)
        counts.key_reads[b"__warmup__"] += warm  # a hot key too, and not the driver's
        after = c.stats()
        elapsed = time.monotonic() - started  # since the first feed item was set
        evicted_mc = int(after["evictions"]) - int(before["evictions"])
        c.close()
        assert agent.stop() == 0
    finally:
        m.stop()
    snaps = agent.snapshots()
    assert len(snaps) == 1
    s = snaps[0]
    loss = s["loss"]["loss_ratio"]
    assert s["loss"]["agent_dropped"] == 0 and s["loss"]["malformed"] == 0  # never the agent's
    if loss > 0.05:
        pytest.skip(f"memcached's logger lost {loss:.1%} of the stream (machine too busy): {s['loss']}")

    if evicted_mc < 1000:  # the driver slowed down for memcached's logger and never filled it
        pytest.skip(f"machine too busy: the driver slowed to {rate:.0f}/s and memcached evicted only "
                    f"{evicted_mc} items (> 1,000 needed to compare counts)")

    # Prefixes: the top 4 by requests, the rest (tmp and the unprefixed trickle) as "other".
    assert s["prefix_rule"] == "delimiter ':' depth 1"
    got = {p["prefix"]: p for p in s["prefixes"]}
    assert list(got) == ["user", "sess", "feed", "cfg"]
    for name, p in got.items():
        want = counts.hits[name] / counts.gets[name]
        assert abs(p["hit_ratio"] - want) <= 0.01, (name, p["hit_ratio"], want)
        assert abs(p["requests"] - counts.gets[name]) <= (0.01 + loss) * counts.gets[name] + 5
        assert monotone_points(p["points"])
        assert p["points"][-1][0] == 2 * 8 * 1048576  # (0, k x limit_maxbytes], k = 2
    other = s["prefix_other"]
    assert abs(other["requests"] - counts.gets["tmp"]) < (0.05 + loss) * counts.gets["tmp"] + 2000
    # Memory held: memcached's stored bytes (stats `bytes` at the window's end) split in
    # proportion to the agent's resident estimate in chunks, which alone sums above it; the
    # shares add up to at most what memcached stores, exactly (each rounded down).
    stored = s["measured"]["bytes"]
    held = sum(p["bytes"] for p in s["prefixes"]) + other["bytes"]
    diag = s["diagnostics"]
    assert held <= stored, (held, stored, diag)
    scale = diag["prefix_bytes_scale"]
    assert 0 < scale <= 1 and (scale == 1 or diag["prefix_bytes_estimated"] > stored), diag
    assert held >= min(stored, diag["prefix_bytes_estimated"]) - len(s["prefixes"]) - 1, (held, diag)
    # Before the split: cfg's 40 keys (50 B values, all resident, tracked without sampling)
    # take 120-byte chunks; user's 3000 keys of 300 B take 384-byte chunks and are sampled (at
    # most all of them resident, with sampling noise).
    chunk = {cl["chunk_size"] for cl in s["classes"]}
    assert 120 in chunk and 384 in chunk
    assert got["cfg"]["bytes"] == int(40 * 120 * scale), (got["cfg"]["bytes"], scale)
    assert 0.3 * 3000 * 384 * scale < got["user"]["bytes"] <= 1.15 * 3000 * 384 * scale
    # every key of the driver has a prefix: none is lost to "(none)" on its way through the agent
    assert diag["prefix_lost"] <= 0.0005 * s["loss"]["events_seen"] + 2, diag
    # Leave reasons per prefix: user and cfg have no TTL, sess's values are small (never
    # evicted), feed's TTL (30 s) outlives the test.
    assert got["user"]["left"]["expired"] == 0 and got["cfg"]["left"]["expired"] == 0
    assert got["sess"]["left"]["expired"] > 100 and got["sess"]["left"]["evicted"] == 0
    assert got["feed"]["left"]["evicted"] > 100
    if elapsed < 29:  # a very busy machine stretched the test past feed's TTL: then some expire
        assert got["feed"]["left"]["expired"] == 0, elapsed

    # Hot keys in clear (--hot-keys-clear 1): top-10 recall against the driver's exact count.
    exact = [k.decode() for k, _ in counts.key_reads.most_common(10)]
    hot = s["hot_keys"]
    assert len(hot) == 10 and s["hot_keys_hashed"] is False
    assert all(not h["hashed"] for h in hot)  # each was read again after it became hot
    recall = len(set(exact) & {h["key"] for h in hot}) / 10
    assert recall >= 0.9, (exact, hot)
    top = hot[0]
    true_count = counts.key_reads[top["key"].encode()]
    # the sketch's own error bound, plus what the stream lost (as for every count above)
    assert abs(top["requests"] - true_count) <= top["error"] + (0.01 + loss) * true_count + 1
    assert len(s["hot_keys_by_bytes"]) == 10
    assert s["hot_keys_by_bytes"][0]["bytes"] >= 300  # the heaviest are user/feed keys

    # Expired vs evicted against memcached's counters (items leave by expiry through a read
    # that finds them expired, the tail reclaim or the LRU crawler).
    def delta(k: str) -> int:
        return int(after[k]) - int(before[k])

    evicted = sum(cl["left"]["evicted"] for cl in s["classes"])
    expired = sum(cl["left"]["expired"] for cl in s["classes"])
    mc_evicted = delta("evictions")
    mc_expired = delta("get_expired") + delta("reclaimed") + delta("crawler_reclaimed")
    assert mc_evicted > 1000 and mc_expired > 1000
    assert abs(evicted - mc_evicted) <= (0.02 + loss) * mc_evicted, (evicted, mc_evicted, loss)
    assert abs(expired - mc_expired) <= (0.02 + loss) * mc_expired, (expired, mc_expired, loss)

    # TTL-aware curves: per class beside the LRU points, merged in bytes with the oblivious one.
    with_ttl = [cl for cl in s["classes"] if "ttl_points" in cl["curve"]]
    assert with_ttl and all(monotone_points(cl["curve"]["ttl_points"]) for cl in with_ttl)
    # Every read reaches its class's TTL-aware curve, also a miss of a key the agent has not seen
    # stored yet (its class is known at the refill): tmp's 4 KB values have a class of their own,
    # read once or twice within their 5 s TTL (the driver measured a hit ratio of a few %); before
    # the misses were deferred to the set, that class's curve read 17-61 %.
    tmp_hr = counts.hits["tmp"] / counts.gets["tmp"]
    big = [cl for cl in with_ttl if cl["chunk_size"] >= 4000]
    assert big, [cl["chunk_size"] for cl in with_ttl]
    for cl in big:
        top = cl["curve"]["ttl_points"][-1]
        assert top[1] <= tmp_hr + 0.05, (cl["chunk_size"], top, tmp_hr)
    assert monotone_points(s["ttl_points"]) and monotone_points(s["ttl"]["oblivious_points"])
    assert s["ttl"]["unit"] == "bytes"
    # expired items take no space in the TTL-aware working set
    assert s["ttl"]["working_set_bytes"] < s["ttl"]["working_set_bytes_oblivious"]


def test_hashed_by_default_and_prefix_options_are_checked(tmp_path):
    b = agent_bin()
    for args, msg in (
        (["--prefix-regex", "([a-"], "bad prefix regex"),
        (["--prefix-top", "101"], "prefix-top"),
        (["--prefix-delimiter", "::"], "one character"),
        (["--prefix-depth", "9"], "prefix-depth"),
        (["--hot-keys", "101"], "hot-keys"),
    ):
        r = subprocess.run([b, "run", *args], capture_output=True, text=True)
        assert r.returncode == 2 and msg in r.stderr, (args, r.stderr)
    m = Memcached(mem_mb=16)
    try:
        agent = Agent(tmp_path, m.addr, "--interval", "600", "--prefix-regex", "^([a-z]+)[0-9]")
        agent.wait_log("watch_connected")
        agent.wait_log("memcached_instance")
        c = Client(m.port)
        trickle(c, 0.3)
        for i in range(300):
            k = b"ab%d" % (i % 7) if i % 3 else b"zz%d" % (i % 50)
            if not c.get(k):
                c.set(k, b"x" * 20)
        long_key = b"p" * 200 + b"1"
        c.set(long_key, b"x")
        c.get(long_key)
        trickle(c, 1.0)
        c.close()
        assert agent.stop() == 0
    finally:
        m.stop()
    s = agent.snapshots()[0]
    names = [p["prefix"] for p in s["prefixes"]]
    # ab (200 reads), the unprefixed trickle (~130) and zz (100); no match -> "(none)"
    assert names[0] == "ab" and set(names[1:3]) == {"zz", "(none)"}
    assert s["prefix_rule"] == "regex ^([a-z]+)[0-9]"
    assert all(len(n) <= 64 for n in names) and "p" * 64 in names  # cut at the protocol limit
    assert s["diagnostics"]["prefix_cut"] >= 2
    assert s["hot_keys_hashed"] is True
    hot = s["hot_keys"]
    assert all(re.fullmatch(r"xxh3:[0-9a-f]{16}", h["key"]) and h["hashed"] for h in hot)
    # the trickle key (~130 reads) and the 7 ab keys (~28 each) lead; zz keys have 2 each
    want = {"xxh3:" + key_hash(b"ab%d" % i) for i in range(7)} | {"xxh3:" + key_hash(b"__warmup__")}
    assert {h["key"] for h in hot[:8]} == want
