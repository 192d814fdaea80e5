#!/usr/bin/env python3
"""Overhead benchmark of hitcurve-agent with a client nobody here wrote: memaslap
(Debian's libmemcached-tools ships it as `memcaslap`).

Alternating runs in one sitting, each on a fresh memcached, at saturation:
  alone   memcached only
  bare    memcached + a bare reader that sends `watch fetchers mutations evictions` and
          discards the stream (the floor any watch-based agent pays)
  agent   memcached + hitcurve-agent run (default settings, snapshots to a directory)
Reports throughput (memaslap TPS) and p99 latency per configuration (median over rounds),
the agent's CPU and peak RSS, and the event loss the agent measured.

p99 comes from memaslap's log2 latency histogram (factor-2 buckets), interpolated
geometrically inside the bucket, so it is coarse; the throughput figure is exact.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "bin" / "hitcurve-agent"
MEMASLAP = "memcaslap"
BARE = r"""
import socket, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])))
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
s.sendall(b"watch fetchers mutations evictions\r\n")
while s.recv(4 << 20):
    pass
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_port(port: int) -> None:
    for _ in range(250):
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    raise RuntimeError("memcached did not start")


def cpu_seconds(pid: int) -> float:
    f = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def p99_from_log2(text: str) -> float:
    block = text.rsplit("Total Statistics", 1)[1].split("Log2 Dist:", 1)[1]
    counts: dict[int, int] = {}
    for line in block.splitlines():
        m = re.match(r"\s+(\d+):\s+([\d\s]+)$", line)
        if not m:
            if counts:
                break
            continue
        base = int(m.group(1))
        for i, c in enumerate(m.group(2).split()):
            counts[base + i] = int(c)
    total = sum(counts.values())
    acc = 0
    for b in sorted(counts):
        if acc + counts[b] >= 0.99 * total:
            frac = (0.99 * total - acc) / counts[b]
            return 2 ** (b + frac)  # microseconds
        acc += counts[b]
    return float("nan")


def run_once(mode: str, secs: int, threads: int, conc: int, tmp: Path) -> dict:
    port = free_port()
    cmd = ["memcached", "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "256"]
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    mc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wait_port(port)
    side = None
    snapdir = tmp / f"snaps-{time.time_ns()}"
    if mode == "bare":
        side = subprocess.Popen([sys.executable, "-c", BARE, str(port)])
    elif mode == "agent":
        side = subprocess.Popen(
            [
                str(AGENT),
                "run",
                "--memcached",
                f"127.0.0.1:{port}",
                "--interval",
                "5",
                "--snapshot-dir",
                str(snapdir),
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
    time.sleep(0.7)
    cpu0 = cpu_seconds(side.pid) if side else 0.0
    r = subprocess.run(
        [
            MEMASLAP,
            "-s",
            f"127.0.0.1:{port}",
            "-T",
            str(threads),
            "-c",
            str(conc),
            "-t",
            f"{secs}s",
            "-S",
            f"{secs}s",
        ],
        capture_output=True,
        text=True,
        timeout=secs + 60,
    )
    out = {"mode": mode}
    m = re.search(r"TPS:\s+(\d+)", r.stdout)
    out["tps"] = int(m.group(1)) if m else float("nan")
    out["p99_us"] = p99_from_log2(r.stdout)
    if side:
        out["cpu_pct"] = 100 * (cpu_seconds(side.pid) - cpu0) / secs
        out["rss_mb"] = peak_rss_mb(side.pid)
        side.send_signal(signal.SIGTERM)
        side.wait(60)
    if mode == "agent":
        snaps = [json.loads(p.read_text()) for p in sorted(snapdir.glob("snapshot-*.json"))]
        seen = sum(s["loss"]["events_seen"] for s in snaps)
        lost = sum(
            s["loss"]["worker_dropped"]
            + s["loss"]["agent_dropped"]
            + max(s["loss"]["stream_skipped"], s["loss"]["watcher_skipped"])
            for s in snaps
        )
        out["events_seen"] = seen
        out["loss_ratio"] = lost / (seen + lost) if seen + lost else 0.0
        out["events_per_s"] = seen / secs
    mc.kill()
    mc.wait()
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=int, default=8)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--json")
    a = ap.parse_args()
    if not AGENT.exists():
        print(f"missing {AGENT}: make -C profiler-agent all", file=sys.stderr)
        return 2
    runs = []
    with tempfile.TemporaryDirectory() as td:
        for rnd in range(a.rounds):
            order = ["alone", "bare", "agent"]
            order = order[rnd % 3 :] + order[: rnd % 3]  # rotate so no mode always runs first
            for mode in order:
                r = run_once(mode, a.seconds, a.threads, a.concurrency, Path(td))
                r["round"] = rnd
                runs.append(r)
                print(json.dumps(r), flush=True)
    print(f"\nmemaslap -T {a.threads} -c {a.concurrency}, {a.seconds} s runs, {a.rounds} rounds (median):")
    med = {}
    for mode in ("alone", "bare", "agent"):
        rs = [r for r in runs if r["mode"] == mode]
        med[mode] = {k: statistics.median(r[k] for r in rs) for k in rs[0] if k not in ("mode", "round")}
        print(
            f"  {mode:>6}: {med[mode]['tps']:>9.0f} ops/s  p99 {med[mode]['p99_us']:>7.0f} us"
            + (
                f"  cpu {med[mode]['cpu_pct']:.0f}%  rss {med[mode]['rss_mb']:.1f} MiB"
                if mode != "alone"
                else ""
            )
            + (
                f"  events {med[mode]['events_per_s']:.0f}/s  loss {med[mode]['loss_ratio']:.2%}"
                if mode == "agent"
                else ""
            )
        )
    base = med["alone"]["tps"]
    bare_cost = 100 * (1 - med["bare"]["tps"] / base)
    agent_cost = 100 * (1 - med["agent"]["tps"] / base)
    print(
        f"  throughput cost vs alone: bare reader {bare_cost:.1f} %, agent {agent_cost:.1f} % "
        f"-> agent minus bare {agent_cost - bare_cost:.1f} pp (target <= 2 pp)"
    )
    pb, pa = med["bare"]["p99_us"], med["agent"]["p99_us"]
    print(
        f"  p99: alone {med['alone']['p99_us']:.0f} us, bare {pb:.0f} us, agent {pa:.0f} us "
        f"-> agent vs bare {100 * (pa / pb - 1):+.1f} %"
    )
    if a.json:
        Path(a.json).write_text(json.dumps({"runs": runs, "median": med}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
