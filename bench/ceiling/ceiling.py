#!/usr/bin/env python3
"""memcached's watch ceiling on this machine: what one watcher (the agent) costs memcached, and
how much of the stream memcached's logger loses as the request rate grows.

For memcached -t 1 and -t 2 and a ladder of client settings (hc-loadgen, zipf 0.9 over 100,000
keys, 100-byte values; 1, 2 and 4 connections, request/response and pipelined 16 deep), each
setting runs `--rounds` times as a pair on fresh memcacheds, one right after the other, the order
alternating round by round:
  bare     memcached alone
  watched  memcached with hitcurve-agent beside it (its defaults, snapshots to a directory)
Per run, from memcached's own `stats` before and after the load: requests/s (cmd_get +
cmd_set), and for the watched run the logger's counters: log_worker_written, log_worker_dropped
(a worker's 64 KiB log buffer was full), log_watcher_skipped (the watcher's buffer was full:
the agent did not read fast enough), log_watcher_sent. Loss = (worker_dropped +
watcher_skipped) / (worker_written + worker_dropped), the share of the lines memcached meant
to log that the agent never got.

Printed: per setting the bare and watched rates (median of the rounds), their ratio
(watched / bare, per round and the median: a shared machine moves absolute rates, a pair
minutes apart moves less) and the watched runs' loss; the saturating setting is the fastest
bare one. The agent's CPU per run too (utime + stime from /proc).

    .venv/bin/python bench/ceiling/ceiling.py [--seconds 5] [--rounds 2] [--threads 1,2]
        [--memcached /usr/bin/memcached] [--json OUT]
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "profiler-agent" / "loadgen"))
from bench_overhead import cpu_seconds, free_port, wait_port  # noqa: E402

AGENT = ROOT / "bin" / "hitcurve-agent"
LOADGEN = ROOT / "bin" / "hc-loadgen"
# (connections, pipeline depth): request/response, then pipelined, each at 1, 2 and 4 clients
LADDER = [(1, 1), (2, 1), (4, 1), (1, 16), (2, 16), (4, 16)]
COUNTERS = ("cmd_get", "cmd_set", "log_worker_written", "log_worker_dropped", "log_watcher_skipped",
            "log_watcher_sent")


def stats(port: int) -> dict[str, int]:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(b"stats\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            d = s.recv(65536)
            if not d:
                raise ConnectionError("closed")
            buf += d
    out = {}
    for line in buf.decode().splitlines():
        p = line.split(" ")
        if len(p) == 3 and p[0] == "STAT" and p[1] in COUNTERS:
            out[p[1]] = int(p[2])
    return out


def run_once(binary: str, threads: int, conns: int, pipeline: int, watched: bool, secs: float,
             tmp: Path) -> dict:
    port = free_port()
    cmd = [binary, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", "64", "-t", str(threads)]
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    mc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    agent = None
    try:
        wait_port(port)
        if watched:
            agent = subprocess.Popen(
                [str(AGENT), "run", "--memcached", f"127.0.0.1:{port}", "--interval", "5",
                 "--snapshot-dir", str(tmp / f"snaps-{time.time_ns()}")],
                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            )
            # attached: memcached counts one watcher (a stream nobody reads costs nothing)
            end = time.time() + 30
            while time.time() < end:
                with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
                    s.sendall(b"stats\r\n")
                    time.sleep(0.05)
                    if b"STAT log_watchers 1" in s.recv(65536):
                        break
                time.sleep(0.1)
        a = stats(port)
        cpu0 = cpu_seconds(agent.pid) if agent else 0.0
        t0 = time.time()
        subprocess.run(
            [str(LOADGEN), "--server", f"127.0.0.1:{port}", "--dist", "zipf", "--keys", "100000",
             "--conns", str(conns), "--pipeline", str(pipeline), "--requests", "0",
             "--duration", str(secs), "--quiet"],
            stdout=subprocess.DEVNULL, check=True, timeout=secs + 60,
        )
        dt = time.time() - t0
        b = stats(port)
        d = {k: b.get(k, 0) - a.get(k, 0) for k in COUNTERS}
        out = {"threads": threads, "conns": conns, "pipeline": pipeline, "watched": watched,
               "rate": (d["cmd_get"] + d["cmd_set"]) / dt, **d}
        if agent:
            out["agent_cpu_pct"] = 100 * (cpu_seconds(agent.pid) - cpu0) / dt
            meant = d["log_worker_written"] + d["log_worker_dropped"]
            out["loss"] = (d["log_worker_dropped"] + d["log_watcher_skipped"]) / meant if meant else 0.0
        return out
    finally:
        if agent:
            agent.send_signal(signal.SIGTERM)
            try:
                agent.wait(30)
            except subprocess.TimeoutExpired:
                agent.kill()
                agent.wait()
        mc.kill()
        mc.wait()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--rounds", type=int, default=2)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--memcached", default="/usr/bin/memcached")
    ap.add_argument("--json", default="")
    args = ap.parse_args(argv)
    subprocess.run(["make", "-s", "-C", str(ROOT / "profiler-agent"), "all"], check=True)
    runs: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="hc-ceiling-") as td:
        tmp = Path(td)
        for threads in (int(x) for x in args.threads.split(",")):
            for conns, pipeline in LADDER:
                for r in range(args.rounds):
                    order = (False, True) if r % 2 == 0 else (True, False)
                    for watched in order:
                        x = run_once(args.memcached, threads, conns, pipeline, watched, args.seconds, tmp)
                        x["round"] = r
                        x["load"] = os.getloadavg()[0]
                        runs.append(x)
                        print(json.dumps(x), file=sys.stderr, flush=True)
    version = subprocess.run([args.memcached, "-V"], capture_output=True, text=True).stdout.strip()
    print(f"{version}, {args.seconds:g} s a run, {args.rounds} rounds a setting, load average "
          f"{min(x['load'] for x in runs):.1f}-{max(x['load'] for x in runs):.1f}\n")
    print("| -t | conns x pipeline | bare req/s | watched req/s | watched / bare (rounds) | "
          "loss % (worker dropped + watcher skipped) | agent CPU % |")
    print("|---|---|---|---|---|---|---|")
    fastest: dict[int, tuple[float, str]] = {}
    for threads in sorted({x["threads"] for x in runs}):
        for conns, pipeline in LADDER:
            sel = [x for x in runs if (x["threads"], x["conns"], x["pipeline"]) == (threads, conns, pipeline)]
            bare = {x["round"]: x for x in sel if not x["watched"]}
            wat = {x["round"]: x for x in sel if x["watched"]}
            ratios = [wat[r]["rate"] / bare[r]["rate"] for r in bare if r in wat and bare[r]["rate"]]
            b = statistics.median(x["rate"] for x in bare.values())
            w = statistics.median(x["rate"] for x in wat.values())
            loss = statistics.median(100 * x["loss"] for x in wat.values())
            dropped = sum(x["log_worker_dropped"] for x in wat.values())
            skipped = sum(x["log_watcher_skipped"] for x in wat.values())
            cpu = statistics.median(x["agent_cpu_pct"] for x in wat.values())
            name = f"{conns} x {pipeline}"
            if b > fastest.get(threads, (0.0, ""))[0]:
                fastest[threads] = (b, name)
            print(f"| {threads} | {name} | {b:,.0f} | {w:,.0f} | {statistics.median(ratios):.3f} "
                  f"({', '.join(f'{q:.3f}' for q in ratios)}) | {loss:.2f} ({dropped:,} + {skipped:,}) | "
                  f"{cpu:.0f} |")
    for threads, (b, name) in sorted(fastest.items()):
        print(f"\nsaturation, -t {threads}: {name} ({b:,.0f} req/s bare)")
    if args.json:
        Path(args.json).write_text(json.dumps(runs, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
