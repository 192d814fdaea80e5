"""The agent on every memcached version, through a recording proxy: what it sends
(never anything from the hazard list, one watcher connection for its life) and the stats-only
mode where `watch` is refused. Real memcached processes (the version matrix of
scripts/memcached-versions.sh), the real agent binary."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from agent_harness import ROOT, Agent, Memcached, Proxy, kill_leftovers, loadgen_bin  # noqa: E402

ALLOWED = {
    b"watch fetchers mutations evictions deletions",
    b"watch fetchers mutations evictions",
    b"stats",
    b"stats items",
    b"stats slabs",
    b"stats settings",
}


def matrix() -> list[tuple[str, str]]:
    out = subprocess.run(
        ["bash", str(ROOT / "scripts" / "memcached-versions.sh")], check=True, capture_output=True, text=True
    ).stdout
    return [tuple(line.split(" ", 1)) for line in out.splitlines() if line.strip()]  # type: ignore[misc]


VERSIONS = matrix()


@pytest.fixture(autouse=True)
def _no_leftover_processes():
    yield
    kill_leftovers()


def load(addr: str, seconds: float, keys: int = 20000) -> None:
    subprocess.run(
        [loadgen_bin(), "--server", addr, "--keys", str(keys), "--requests", "0", "--duration", str(seconds),
         "--value-size", "500", "--quiet"],
        check=True, capture_output=True, timeout=seconds + 30,
    )


@pytest.mark.parametrize("version,binary", VERSIONS, ids=[v for v, _ in VERSIONS])
def test_the_agent_sends_nothing_from_the_hazard_list(tmp_path, version, binary):
    m = Memcached(mem_mb=8, binary=binary)
    proxy = Proxy(m.port)
    agent = Agent(tmp_path, proxy.addr, "--interval", "1")
    try:
        agent.wait_log("watch_connected", timeout=20)
        load(m.addr, 3)
        agent.wait_log("msg=window", count=2, timeout=20)
        assert agent.stop() == 0
    finally:
        proxy.stop()
        m.stop()
    sent = proxy.commands()
    assert sent and set(sent) <= ALLOWED, sorted(set(sent) - ALLOWED)
    watchers = [conn for conn in proxy.connections if any(c.startswith(b"watch") for c in conn)]
    assert len(watchers) == 1, "one watcher connection for the agent's life"
    expect = "deletions" if tuple(map(int, version.split("."))) >= (1, 6, 20) else "no_deletions"
    assert f"mode={expect}" in agent.log()
    snaps = agent.snapshots()
    assert snaps and snaps[-1]["server"]["version"] == version
    assert snaps[-1]["diagnostics"]["features"]["watch"] == expect


@pytest.mark.slow
def test_stats_only_mode_where_watch_is_refused(tmp_path):
    binary = dict(VERSIONS).get("1.6.45", "/usr/bin/memcached")
    m = Memcached(mem_mb=8, binary=binary)  # 8 MiB: it evicts, so the model has a curve
    proxy = Proxy(m.port, refuse_watch=True)
    agent = Agent(tmp_path, proxy.addr, "--interval", "2")
    try:
        agent.wait_log("watch_refused", timeout=20)
        load(m.addr, 16, keys=30000)
        agent.wait_log("stats_only_window", count=5, timeout=30)
        assert agent.proc.poll() is None, "the agent keeps running"
        assert agent.stop() == 0
    finally:
        proxy.stop()
        m.stop()
    log = agent.log()
    assert log.count("msg=watch_refused") == 1, "said once"
    assert "window_blind" not in log and "window_resynced" not in log
    sent = proxy.commands()
    assert set(sent) <= ALLOWED
    snaps = agent.snapshots()
    assert snaps and all(s["basis"] == "stats_only" and s["classes"] == [] for s in snaps)
    assert all(s["diagnostics"]["features"]["watch"] == "refused" for s in snaps)
    busy = [s for s in snaps if s["measured"]["cmd_get"] > 1000 and s["measured"]["evictions"] > 0]
    assert busy, [s["measured"] for s in snaps]
    fitted = [s for s in busy if s["stats_model"]["fitted"]]
    assert fitted, [s["stats_model"]["state"] for s in busy]
    for s in fitted:
        sm = s["stats_model"]
        pts = sm["points"]
        assert len(pts) == 100 and sm["unit"] == "items"
        xs, ys = [p[0] for p in pts], [p[1] for p in pts]
        assert all(b > a for a, b in zip(xs, xs[1:], strict=False))
        assert all(b >= a for a, b in zip(ys, ys[1:], strict=False))
        # the model passes through what memcached measured at the size it holds
        at = min(range(100), key=lambda i: abs(xs[i] - sm["current_items"]))
        assert abs(ys[at] - s["measured"]["hit_ratio"]) < 0.03, (ys[at], s["measured"]["hit_ratio"])

