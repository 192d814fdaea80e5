"""Page moves are not cache pressure. When the size mix shifts, memcached's automover
takes slab pages from a class that no longer needs them. From 1.6.34 it frees a page by evicting
that class's COLD tail, and those evictions are counted and logged exactly like evictions under
memory pressure (memcached does not mark their source); before 1.6.34 they are not counted as
evictions at all. The agent reports, per class and window, how many of its evictions a page move
caused (pagemove.h), so the product can tell "this class is short of memory" from "memcached
moved this class's memory elsewhere".

A real memcached before and after 1.6.34 (the version matrix of scripts/memcached-versions.sh)
is filled with small items, then the traffic moves to large items whose working set fits in
memory once pages have moved. The source class's evictions in a window must be (nearly) all
page-move evictions from 1.6.34 on, and there must be none before."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_harness import Agent, Client, Memcached, kill_leftovers, loadgen_bin  # noqa: E402
from test_agent_versions import VERSIONS  # noqa: E402

BEFORE, AFTER = "1.6.24", "1.6.45"  # either side of 1.6.34
CASES = [(v, b) for v, b in VERSIONS if v in (BEFORE, AFTER)]


@pytest.fixture(autouse=True)
def _no_leftover_processes():
    yield
    kill_leftovers()


def load(
    addr: str, seconds: float, keys: int, value_size: int, update_frac: float, seed: int, niceness: int = 19
) -> None:
    # nice: on a busy machine the agent must keep up with the stream, or the windows of interest
    # come out blind (no snapshot); fewer requests per second change nothing about page moves
    subprocess.run(
        ["nice", "-n", str(niceness), loadgen_bin(), "--server", addr, "--dist", "uniform",
         "--keys", str(keys),
         "--value-size", str(value_size), "--update-frac", str(update_frac), "--requests", "0",
         "--duration", str(seconds), "--seed", str(seed), "--quiet"],
        check=True, capture_output=True, timeout=seconds + 60,
    )


def stat(port: int, name: str) -> int:
    c = Client(port)
    try:
        return int(c.stats()[name])
    finally:
        c.close()


def slabs_moved(port: int) -> int:
    return stat(port, "slabs_moved")


def fill(addr: str, port: int, deadline_s: float = 240) -> None:
    """Small items until memcached is full (it has evicted one), in 4 s steps: a fixed-time fill
    starved by a busy machine (CI's fresh clone at load 25-35) left memcached a page or two of small
    items, so no class had a page to spare and memcached refused every page move (NOSPARE)."""
    end = time.monotonic() + deadline_s
    step = 0
    while stat(port, "evictions") == 0:
        assert time.monotonic() < end, f"memcached did not fill in {deadline_s:.0f} s of small items"
        step += 1
        # not niced: at nice 19 beside CI's load (25-35) the fill got so little CPU that 240 s did
        # not fill 16 MB; the fill's windows are not the ones the checks read
        load(addr, 4, keys=90000, value_size=150, update_frac=0.0, seed=step, niceness=0)  # ~22 MB


def reassign_to_large_class(port: int) -> bytes:
    """One page for the large items' class (the biggest chunk size holding pages) from the class
    holding the most pages (the small items'): `slabs reassign <src> <dst>` runs the page mover
    the automover runs, so its evictions are counted (or not) exactly as the automover's. The
    source is named: `-1` let memcached pick a class with free chunks, whose page move rescued
    its items and evicted none (1.6.45 under load)."""
    c = Client(port)
    try:
        rows = c.raw(b"stats slabs\r\n", (b"END",))[:-1]
        chunk, pages = {}, {}
        for line in rows:
            name, value = line.decode().split()[1:3]
            if ":" in name:
                cls, field = name.split(":", 1)
                if field == "chunk_size":
                    chunk[int(cls)] = int(value)
                elif field == "total_pages":
                    pages[int(cls)] = int(value)
        dst = max((k for k in pages if pages[k] > 0), key=lambda k: chunk.get(k, 0))
        src = max((k for k in pages if k != dst), key=lambda k: pages[k])
        answers = (b"OK", b"BUSY", b"NOSPARE", b"BADCLASS", b"NOTFULL", b"UNSAFE", b"SAME")
        return c.raw(b"slabs reassign %d %d\r\n" % (src, dst), answers)[-1].strip()
    finally:
        c.close()


ANSWERS: list[bytes] = []  # memcached's answers to the test's own page-move requests, for the failure message


def run_shift(tmp: Path, binary: str) -> tuple[list[dict], Agent]:
    tmp.mkdir(parents=True, exist_ok=True)
    ANSWERS.clear()  # this try's answers: the checks below read this try's snapshots
    # the automover decides over slab_automove_window seconds: 30 before 1.6.34, 10 from it (on a
    # quiet machine 1.6.24 moved no page within the shift); the same 10 s on both sides
    m = Memcached(
        mem_mb=16, binary=binary, extra=["-o", "slab_reassign,slab_automove=1,slab_automove_window=10"]
    )
    agent = Agent(tmp, m.addr, "--interval", "2")
    try:
        agent.wait_log("watch_connected", timeout=60)
        # one 3 KB item while memory is free: the large class holds a page from the start, so it
        # is listed in `stats slabs` as a page move's destination (a class without pages is not,
        # and at CI's load the test's own requests then named a source with no spare page)
        c = Client(m.port)
        assert c.set(b"page-probe", b"x" * 3000) == b"STORED"
        c.close()
        fill(m.addr, m.port)
        # two windows with no traffic: the small items' own evictions (memory pressure while they
        # filled memcached) land in windows before the shift, never in a window where the class
        # loses a page (a busy machine stretched the fill into the shift's first window)
        n = agent.log().count("msg=window ")
        agent.wait_log("msg=window ", count=n + 2, timeout=120)
        # the same first 4,000 keys rewritten as 3 KB values: ~13 MB, fits once pages move
        load(m.addr, 25, keys=4000, value_size=3000, update_frac=0.5, seed=7)
        # A busy machine gives the niced load too little CPU to press the automover within 25 s
        # (1.6.24 moved no page in 180 s more at CI's load): the rewrite goes on in 5 s steps,
        # each asking memcached for a page move itself while the automover has made none.
        extra = 0
        while slabs_moved(m.port) == 0 and extra < 8:
            extra += 1
            ANSWERS.append(reassign_to_large_class(m.port))
            load(m.addr, 5, keys=4000, value_size=3000, update_frac=0.5, seed=7 + extra)
        n = agent.log().count("msg=window ")
        agent.wait_log("msg=window ", count=n + 2, timeout=120)
        assert agent.stop() == 0
    finally:
        m.stop()
    return agent.snapshots(), agent


def moves(snaps: list[dict]) -> list[tuple[dict, dict]]:
    """(snapshot, class) for every class that lost pages in a written window: the source
    classes of page moves, found from consecutive windows' page counts."""
    out = []
    for prev, cur in zip(snaps, snaps[1:], strict=False):
        if prev["window"]["end"] != cur["window"]["start"]:
            continue  # a blind window between them: not consecutive
        pages = {c["id"]: c["pages"] for c in prev["classes"]}
        out += [(cur, c) for c in cur["classes"] if c["pages"] < pages.get(c["id"], 0)]
    return out


@pytest.mark.slow
@pytest.mark.timeout(900)
@pytest.mark.parametrize("version,binary", CASES, ids=[v for v, _ in CASES])
def test_page_move_evictions_do_not_read_as_pressure(tmp_path, version, binary):
    started = time.monotonic()
    for attempt in range(3):  # a busy machine can make every window of the shift blind
        snaps, agent = run_shift(tmp_path / f"try{attempt}", binary)
        moved = moves(snaps)
        if moved or time.monotonic() - started > 250:  # no try that cannot end in time
            break
    assert sum(s["measured"]["slabs_moved"] for s in snaps) > 0, f"no page moved; reassign said {ANSWERS}"
    assert moved, f"no written window saw a class lose pages:\n{agent.log()[-3000:]}"
    for s in snaps:
        total = sum(c["page_move_evictions"] for c in s["classes"])
        assert total <= s["measured"]["page_move_evictions"] <= s["measured"]["evictions"], s["measured"]
        for c in s["classes"]:
            assert 0 <= c["page_move_evictions"] <= c["evictions"], c
    if version == BEFORE:
        # memcached < 1.6.34 does not count page-move evictions as evictions: nothing to take out
        assert all(s["measured"]["page_move_evictions"] == 0 for s in snaps)
        assert all(c["evictions"] == 0 for _, c in moved), [(c["id"], c["evictions"]) for _, c in moved]
        return
    evicting = [(s, c) for s, c in moved if c["evictions"] > 0]
    assert evicting, "from 1.6.34 a page move evicts from the source class"
    for s, c in evicting:
        pressure = c["evictions"] - c["page_move_evictions"]
        # all but a sliver are page-move evictions: the source class had no other reason to evict
        assert pressure <= 0.02 * c["evictions"] + 64, (s["window"], c["id"], c["evictions"], pressure)
