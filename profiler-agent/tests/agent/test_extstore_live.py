"""The agent beside a memcached with a flash tier (extstore), on every version of the matrix built
with it: memcached -m 32 -o ext_path=FILE:256m under a look-aside zipf load whose values (100 to
1,500 B, at least ext_item_size = 512 B for most) memcached writes to flash, leaving their headers
in RAM in its smallest class (96 B chunks: the load's keys are at most 7 bytes). Real memcached,
the real agent binary, memcached's own counters as the truth.

What must hold: the `extwrite` lines are not counted as evictions; the headers are told apart from
whole items (the 96 B class holds nothing else here, so memcached's item count of that class is
the number of headers); flash reads, hits and writes are memcached's; and the agent's hit ratio,
flash hits included, is memcached's.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_harness import ROOT, Agent, Memcached, kill_leftovers, loadgen_bin  # noqa: E402
from version_matrix import stats  # noqa: E402

FLASH = 256 * 1024 * 1024
HEADER_CLASS = 1  # sizeof(item) 48 + key <= 7 + 1 + item_hdr 12 + CAS 8 <= 96 B


def matrix() -> list[tuple[str, str]]:
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "memcached-versions.sh")], check=True, capture_output=True, text=True
    ).stdout
    return [tuple(line.split(" ", 1)) for line in out.splitlines() if line.strip()]  # type: ignore[misc]


def has_extstore(binary: str) -> bool:
    """memcached -h lists the ext_path option only in builds with extstore."""
    out = subprocess.run([binary, "-h"], capture_output=True, text=True, timeout=10)
    return "ext_path" in out.stdout + out.stderr


VERSIONS = matrix()
WITH_EXTSTORE = [(v, b) for v, b in VERSIONS if has_extstore(b)]


@pytest.fixture(autouse=True)
def _no_leftover_processes():
    yield
    kill_leftovers()


def test_which_versions_of_the_matrix_have_extstore():
    """1.6.x builds it by default (since 1.6.0); 1.5.x only with --enable-extstore, which the
    matrix's build does not pass. A 1.6 without it means the matrix's build changed."""
    without = [v for v, b in VERSIONS if (v, b) not in WITH_EXTSTORE]
    assert all(tuple(map(int, v.split(".")[:2])) < (1, 6) for v in without), without
    assert len(WITH_EXTSTORE) >= 4, WITH_EXTSTORE


@pytest.mark.parametrize("version,binary", WITH_EXTSTORE, ids=[v for v, _ in WITH_EXTSTORE])
def test_flash_tier_is_measured_and_told_apart(tmp_path, version, binary):
    # ext_item_age=2: every version flushes items older than 2 s. At its defaults (no age limit)
    # memcached flushes only to keep a class's free chunks above a target; 1.6.14 sets that target
    # from its slab automover, and at -m 32 it flushed nothing within the load's 12 s.
    m = Memcached(
        mem_mb=32, binary=binary, extra=["-o", f"ext_path={tmp_path}/flash.dat:256m,ext_item_age=2"]
    )
    agent = Agent(tmp_path, m.addr, "--interval", "4")
    try:
        agent.wait_log("watch_connected", timeout=30)
        subprocess.run(
            [
                loadgen_bin(),
                "--server",
                m.addr,
                "--dist",
                "zipf",
                "--alpha",
                "0.9",
                "--keys",
                "200000",
                "--min-value",
                "100",
                "--value-size",
                "1500",
                "--conns",
                "1",
                "--requests",
                "0",
                "--duration",
                "12",
                "--seed",
                "7",
                "--quiet",
            ],
            check=True,
            capture_output=True,
            timeout=120,
        )
        st = stats(m.port)
        # Every counter the agent sums must be in a closed window: wait for a window that saw
        # no get at all (the load has ended before it began).
        end = time.time() + 120
        while time.time() < end:
            snaps = agent.snapshots()
            if snaps and snaps[-1]["measured"]["cmd_get"] == 0 and len(snaps) >= 3:
                break
            time.sleep(0.2)
        assert agent.stop() == 0
        # the storage thread goes on flushing after the load (items older than 2 s), so class 1
        # goes on filling with headers and evicting them
        after, items_after = stats(m.port), stats(m.port, b"stats items")
    finally:
        m.stop()
    snaps = agent.snapshots()
    assert snaps and snaps[-1]["measured"]["cmd_get"] == 0, "no idle window after the load"
    assert all("extstore" in s for s in snaps), "every window of a server with flash says so"
    ext = [s["extstore"] for s in snaps]

    # The tier as memcached reports it.
    assert int(st["extstore_limit_maxbytes"]) == FLASH
    assert all(e["flash"]["limit_bytes"] == FLASH for e in ext)
    assert ext[-1]["settings"]["item_size"] == 512
    assert ext[-1]["settings"]["item_age"] == 2
    # (compaction and page evictions go on after the load: the live objects only move down)
    assert 0 < ext[-1]["flash"]["objects_used"] <= int(after["extstore_objects_written"])
    assert ext[-1]["flash"]["pages_used"] + ext[-1]["flash"]["pages_free"] <= FLASH // (64 << 20)

    # Flash reads, hits and writes: memcached's counters, window by window, summed.
    def total(field: str) -> int:
        return sum(e["window"][field] for e in ext)

    # (a blind window, one the agent could not see, uploads nothing: its counts are missing)
    blind = agent.log().count("window_blind")
    same = (lambda a, b: a == b) if blind == 0 else (lambda a, b: a <= b)
    assert same(total("flash_reads"), int(st["get_extstore"])), (st["get_extstore"], blind)
    assert total("flash_reads") > 1000
    assert same(total("flash_misses"), int(st["miss_from_extstore"]))
    # (a window's hits are its reads less its misses, at least 0: a read dispatched just before
    # a window's end can miss in the next one, one read per window at most)
    served = int(st["get_extstore"]) - int(st["miss_from_extstore"]) - int(st["get_aborted_extstore"])
    assert total("flash_hits") - served <= len(snaps)
    assert blind or total("flash_hits") >= served
    written = total("objects_written")
    assert blind or int(st["extstore_objects_written"]) <= written
    assert written <= int(after["extstore_objects_written"])
    assert written > 1000
    busy = [e for s, e in zip(snaps, ext, strict=True) if s["measured"]["get_hits"] > 1000]
    assert busy, "no window under load"
    for s, e in zip(snaps, ext, strict=True):
        if s["measured"]["get_hits"] > 1000:
            share = e["window"]["flash_hit_share"]
            assert share == pytest.approx(e["window"]["flash_hits"] / s["measured"]["get_hits"], abs=1e-6)
            assert 0 <= share < 1
    assert any(e["window"]["flash_hit_share"] > 0.05 for e in busy)
    assert any(e["window"]["writes_per_s"] > 0 and e["window"]["reads_per_s"] > 0 for e in busy)

    # extwrite lines are not evictions: the stream saw tens of thousands of them, and the
    # evictions the agent counted stay memcached's (lines lost to the stream only lower them).
    extwrites = sum(e["stream"]["extwrite_lines"] for e in ext)
    evicted = sum(s["measured"]["evictions"] for s in snaps)
    seen = sum(s["diagnostics"]["evictions"] for s in snaps)
    assert extwrites > 0.2 * int(st["extstore_objects_written"]), (extwrites, st["extstore_objects_written"])
    assert seen <= evicted * 1.01 + 10, (seen, evicted, extwrites)
    # the header evictions the stream told apart are memcached's evictions from class 1
    told = sum(e["stream"]["header_evictions"] for e in ext)
    assert told <= int(items_after[f"items:{HEADER_CLASS}:evicted"])

    # Headers are not whole items: class 1 holds only headers here (the smallest whole item of
    # the load, 48 + 8 + key + 100 B of value, needs a 192 B chunk); the agent says so.
    hdr_now = next(c["items"] for c in snaps[-1]["classes"] if c["id"] == HEADER_CLASS)
    assert hdr_now > 1000
    last = ext[-1]["ram"]
    by_class = {c["id"]: c["header_items"] for c in last["classes"]}
    # (a store the stream lost leaves a re-stored key looking flushed: its next hit, whole in a
    # small class, can read as a header there before the class is learned; a few at most)
    assert HEADER_CLASS in by_class, by_class
    assert sum(n for c, n in by_class.items() if c != HEADER_CLASS) <= 0.01 * by_class[HEADER_CLASS], by_class
    # Every live flash object has its header in RAM: at least objects_used, at most the items.
    for s, e in zip(snaps, ext, strict=True):
        items_now = {c["id"]: c["items"] for c in s["classes"]}
        for c in e["ram"]["classes"]:
            assert c["header_items"] <= items_now[c["id"]]
        assert e["ram"]["header_items"] >= min(e["flash"]["objects_used"], items_now.get(HEADER_CLASS, 0))
    # Past that the count comes from the stream (extwrite in; eviction, store, delete out), for
    # the headers whose flash page memcached evicted: lines memcached skipped or the agent dropped
    # never reach it (every lost line an extwrite, at worst; memcached flushes what is left in
    # RAM in one burst after the load, and the lines it skips then are extwrites), nor the few
    # keys the table had to let go.
    lost = sum(s["loss"][f] for s in snaps for f in ("worker_dropped", "watcher_skipped", "agent_dropped"))
    low = 0.95 * hdr_now - lost - ext[-1]["stream"]["untracked_headers"]
    assert low <= by_class[HEADER_CLASS] <= hdr_now, (by_class, hdr_now, lost)
    chunk = {c["id"]: c["chunk_size"] for c in last["classes"]}
    assert last["header_items"] == sum(by_class.values())
    assert last["header_bytes"] == sum(n * chunk[c] for c, n in by_class.items())
    assert last["whole_items"] == snaps[-1]["measured"]["curr_items"] - last["header_items"]

    # The hit ratio, flash hits included (memcached counts a flash hit as a get_hit), is
    # memcached's: the self-check of every window that had reads passed.
    checked = [s["diagnostics"]["self_check"] for s in snaps]
    assert all(c["result"] in ("ok", "too_few_reads") for c in checked), checked
    assert sum(c["result"] == "ok" for c in checked) >= 2
