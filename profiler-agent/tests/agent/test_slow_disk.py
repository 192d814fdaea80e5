"""A disk whose fsync does not finish must not hold up a window.

Under two concurrent `make test` runs one fsync held the agent 80 s with no window: the spool
entry and the snapshot-dir files were fsync'ed on the main thread. `slow_fsync.c`, preloaded
into the agent only, makes every fsync wait while a gate file exists. With the writer thread
the windows keep closing (and the watch reader keeps reading) while the first fsync is stuck;
once the disk lets go, every window is on disk, in the spool in window order, exactly once.
On the old code no window closes while the gate stands (the main thread sits in fsync), so
the wait below runs into its deadline. Everything waits for events with generous deadlines.
"""

from __future__ import annotations

import gzip
import json
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_harness import Agent, Client, Memcached, free_port, kill_leftovers  # noqa: E402

HERE = Path(__file__).resolve().parent
WINDOWS_WHILE_STUCK = 6


@pytest.fixture(autouse=True)
def _no_leftover_processes():
    yield
    kill_leftovers()


@pytest.fixture()
def shim(tmp_path) -> Path:
    so = tmp_path / "slow_fsync.so"
    src = HERE / "slow_fsync.c"
    subprocess.run(["cc", "-shared", "-fPIC", "-O2", "-o", str(so), str(src), "-ldl"], check=True)
    return so


def _window_times(log: str) -> list[str]:
    return re.findall(r"^ts=(\S+) level=\S+ msg=window ", log, flags=re.M)


def test_windows_keep_closing_while_fsync_is_stuck(tmp_path, shim):
    mc = Memcached(mem_mb=64)
    gate = tmp_path / "fsync-gate"
    gate.touch()
    entered = Path(str(gate) + ".entered")
    spool = tmp_path / "spool"
    key = tmp_path / "agent.key"
    key.write_text("hca_test_key\n")
    agent = Agent(
        tmp_path,
        mc.addr,
        "--interval",
        "1",
        "--backend-url",
        f"http://127.0.0.1:{free_port()}",  # nobody listens: everything stays in the spool
        "--agent-key-file",
        str(key),
        "--spool-dir",
        str(spool),
        "--trace-rate",
        "1",
        "--shutdown-timeout",
        "1",
        env={"LD_PRELOAD": str(shim), "HC_FSYNC_GATE": str(gate)},
    )
    agent.wait_log("memcached_instance", timeout=60)
    c = Client(mc.port)
    i = 0

    def traffic(n: int = 200) -> None:
        nonlocal i
        for _ in range(n):
            k = b"d%d" % (i % 400)
            if not c.get(k):
                c.set(k, b"v" * 60)
            i += 1

    deadline = time.time() + 120
    while not entered.exists() and time.time() < deadline:
        traffic()
        time.sleep(0.01)
    assert entered.exists(), "no fsync was reached:\n" + agent.log()
    stuck_at = len(_window_times(agent.log()))
    # The first fsync is stuck for as long as the gate stands: windows must keep closing.
    deadline = time.time() + 120
    while len(_window_times(agent.log())) < stuck_at + WINDOWS_WHILE_STUCK and time.time() < deadline:
        assert agent.proc.poll() is None, agent.log()
        traffic()
        time.sleep(0.01)
    closed = len(_window_times(agent.log())) - stuck_at
    assert closed >= WINDOWS_WHILE_STUCK, f"{closed} windows closed while fsync was stuck:\n{agent.log()}"
    assert not list(spool.glob("*.json.gz")), "an entry reached the spool through a stuck fsync"
    gate.unlink()  # the disk lets go
    traffic()
    c.close()
    assert agent.stop(timeout=120) == 0
    mc.stop()
    log = agent.log()
    assert "writer_queue_full" not in log and "write_failed" not in log, log
    # Every window is on disk once: the snapshot dir and the spool hold the same snapshots, and
    # the spool's sequence follows the windows.
    snaps = agent.snapshots()
    assert len(snaps) >= stuck_at + WINDOWS_WHILE_STUCK
    spooled = []
    for p in sorted(spool.glob("*-snapshot-*.json.gz")):
        seq = int(p.name.split("-", 1)[0])
        spooled.append((seq, json.loads(gzip.decompress(p.read_bytes()))))
    ids = [d["snapshot_id"] for _, d in spooled]
    assert sorted(ids) == sorted(s["snapshot_id"] for s in snaps) and len(set(ids)) == len(ids)
    starts = [d["window"]["start"] for _, d in spooled]
    assert starts == sorted(starts)
    assert [s["snapshot_id"] for s in snaps] == ids  # the dir's file order is the same order
    chunks = sorted(spool.glob("*-trace-*.json.gz"))
    assert len(chunks) == len(agent.traces())
    seqs = sorted(int(p.name.split("-", 1)[0]) for p in spool.glob("*.json.gz"))
    assert len(set(seqs)) == len(seqs)
    assert (spool / "next_seq").read_text().strip() == str(seqs[-1] + 1)
