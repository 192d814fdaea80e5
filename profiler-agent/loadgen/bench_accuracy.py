#!/usr/bin/env python3
"""Live accuracy benchmark of hitcurve-agent (issue 4).

For each workload: run hc-loadgen against a fresh memcached of size M with the agent attached
and read the agent's per-class curves; then run the same seeded workload against fresh
memcacheds of M/4, M/2, 2M and 4M and measure their real hit ratios from `stats`. Prints
|predicted - measured| in percentage points at each size, raw and calibrated (the curve shifted
so that it matches the measured hit ratio at M, which is what the backend does with the
snapshot's `measured.hit_ratio`).

Prediction at f x M: every class's capacity scales by f (memcached's automover keeps eviction
ages equal across classes, so pages follow demand): sum_c reads_c * h_c(f * N_c) / sum_c reads_c.

Bounded: about 1 minute per workload with the defaults on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from itertools import pairwise
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
AGENT = ROOT / "bin" / "hitcurve-agent"
LOADGEN = ROOT / "bin" / "hc-loadgen"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def stats(port: int) -> dict[str, str]:
    with socket.create_connection(("127.0.0.1", port)) as s:
        s.sendall(b"stats\r\n")
        buf = b""
        while not buf.endswith(b"END\r\n"):
            buf += s.recv(65536)
    out = {}
    for line in buf.decode().splitlines():
        if line.startswith("STAT "):
            _, k, v = line.split(" ", 2)
            out[k] = v
    return out


class Memcached:
    def __init__(self, mem_mb: int):
        self.port = free_port()
        cmd = ["memcached", "-l", "127.0.0.1", "-p", str(self.port), "-U", "0", "-m", str(mem_mb)]
        if os.geteuid() == 0:
            cmd += ["-u", "root"]
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(200):
            try:
                stats(self.port)
                return
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("memcached did not start")

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def loadgen(port: int, wl: dict, requests: int, seed: int) -> dict:
    cmd = [
        str(LOADGEN),
        "--server",
        f"127.0.0.1:{port}",
        "--requests",
        str(requests),
        "--seed",
        str(seed),
        "--pipeline",
        str(wl.get("pipeline", 8)),
        "--quiet",
        *wl["args"],
    ]
    r = subprocess.run(cmd, capture_output=True, text=True, check=True)
    return json.loads(r.stdout)


def run_phases(port: int, wl: dict, warm: int, measured: int) -> tuple[float, float, float]:
    """Warm-up then measured phase (same seeded stream split in two: seeds differ per phase so
    the measured phase continues the workload rather than replaying the warm-up)."""
    loadgen(port, wl, warm, seed=1)
    t0 = time.time()
    s0 = stats(port)
    loadgen(port, wl, measured, seed=2)
    s1 = stats(port)
    t1 = time.time()
    h = int(s1["get_hits"]) - int(s0["get_hits"])
    m = int(s1["get_misses"]) - int(s0["get_misses"])
    return h / (h + m), t0, t1


def interp(points: list[list[float]], x: float) -> float:
    if x <= points[0][0]:
        return points[0][1] * x / points[0][0]
    for (x0, y0), (x1, y1) in pairwise(points):
        if x <= x1:
            return y0 + (y1 - y0) * (x - x0) / (x1 - x0)
    return points[-1][1]


def predict(snaps: list[dict], f: float) -> float:
    """Read-weighted hit ratio at f x current size over the given windows."""
    num = den = 0.0
    for s in snaps:
        for c in s["classes"]:
            if c["requests"] <= 0:
                continue
            n = c["curve"]["current_items"]
            num += c["requests"] * interp(c["curve"]["points"], f * n)
            den += c["requests"]
    return num / den if den else float("nan")


def exact_lru(wl: dict, warm: int, measured: int, capacities: list[int]) -> list[float]:
    """Exact LRU (look-aside: a miss inserts) over the same seeded read sequence, hit ratio of
    the measured phase at each capacity in items: separates the estimator's error from the
    gap between LRU and memcached's segmented LRU."""
    from collections import OrderedDict

    def keys(seed: int, n: int) -> list[int]:
        cmd = [str(LOADGEN), "--print-keys", "--requests", str(n), "--seed", str(seed), *wl["args"]]
        return [
            int(x) for x in subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.split()
        ]

    seq_warm, seq_meas = keys(1, warm), keys(2, measured)
    out = []
    for cap in capacities:
        cache: OrderedDict[int, None] = OrderedDict()
        hits = 0
        for phase, seq in ((0, seq_warm), (1, seq_meas)):
            for k in seq:
                if k in cache:
                    cache.move_to_end(k)
                    hits += phase
                else:
                    cache[k] = None
                    if len(cache) > cap:
                        cache.popitem(last=False)
        out.append(hits / len(seq_meas))
    return out


def bench_workload(
    name: str,
    wl: dict,
    mem: int,
    warm: int,
    measured: int,
    factors: list[float],
    tmp: Path,
    ghost: float,
    max_keys: int,
) -> dict:
    mc = Memcached(mem)
    snapdir = tmp / f"snaps-{name}"
    log = open(tmp / f"agent-{name}.log", "w")  # noqa: SIM115
    agent = subprocess.Popen(
        [
            str(AGENT),
            "run",
            "--memcached",
            f"127.0.0.1:{mc.port}",
            "--interval",
            "3",
            "--stats-interval",
            "1",
            "--snapshot-dir",
            str(snapdir),
            "--ghost-factor",
            str(ghost),
            "--profile-max-keys",
            str(max_keys),
        ],
        stdout=log,
        stderr=log,
    )
    time.sleep(0.5)
    measured_m, t0, t1 = run_phases(mc.port, wl, warm, measured)
    time.sleep(4)  # the window containing the end of the measured phase closes
    agent.send_signal(signal.SIGTERM)
    agent.wait(60)
    log.close()
    mc_items = int(stats(mc.port)["curr_items"])
    mc.stop()
    snaps = [json.loads(p.read_text()) for p in sorted(snapdir.glob("snapshot-*.json"))]

    def ts(s):  # ISO (ms, Z) -> epoch seconds
        from datetime import datetime

        return datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()

    # windows mostly inside the measured phase
    inside = [s for s in snaps if ts(s["window"]["end"]) > t0 + 1 and ts(s["window"]["start"]) < t1 - 1]
    loss = max((s["loss"]["loss_ratio"] for s in inside), default=0)
    loss_mean = sum(s["loss"]["events_seen"] * s["loss"]["loss_ratio"] for s in inside) / max(
        1, sum(s["loss"]["events_seen"] for s in inside)
    )
    pred_m = predict(inside, 1.0)
    shift = measured_m - pred_m
    rows = [
        {"factor": 1.0, "mem_mb": mem, "measured": measured_m, "predicted": pred_m, "calibrated": measured_m}
    ]
    for f in factors:
        mcf = Memcached(int(mem * f))
        hr, _, _ = run_phases(mcf.port, wl, warm, measured)
        mcf.stop()
        p = predict(inside, f)
        rows.append(
            {
                "factor": f,
                "mem_mb": int(mem * f),
                "measured": hr,
                "predicted": p,
                "calibrated": min(1.0, max(0.0, p + shift)),
            }
        )
    if wl.get("single_class"):
        n_items = sum(c["curve"]["current_items"] for c in inside[-1]["classes"] if c["requests"] > 0)
        lru = exact_lru(wl, warm, measured, [round(r["factor"] * n_items) for r in rows])
        for r, h in zip(rows, lru, strict=True):
            r["exact_lru"] = h
    return {
        "workload": name,
        "windows": len(inside),
        "loss_max": loss,
        "loss_mean": loss_mean,
        "items_at_M": mc_items,
        "rows": sorted(rows, key=lambda r: r["factor"]),
    }


WORKLOADS = {
    "zipf0.9": {
        "single_class": True,
        "args": ["--dist", "zipf", "--alpha", "0.9", "--keys", "1000000", "--value-size", "200"],
    },
    "zipf1.1": {
        "single_class": True,
        "args": ["--dist", "zipf", "--alpha", "1.1", "--keys", "1000000", "--value-size", "200"],
    },
    "scan-mix": {
        "single_class": True,
        "args": [
            "--dist",
            "scan",
            "--alpha",
            "0.9",
            "--keys",
            "1000000",
            "--value-size",
            "200",
            "--scan-frac",
            "0.2",
            "--scan-len",
            "200000",
        ],
    },
    "etc": {"args": ["--dist", "etc", "--alpha", "0.9", "--keys", "1000000", "--max-value", "4096"]},
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mem", type=int, default=32, help="M in MiB (default 32)")
    ap.add_argument("--warm", type=int, default=600000)
    ap.add_argument("--measured", type=int, default=600000)
    ap.add_argument("--workloads", default="zipf0.9,zipf1.1,scan-mix")
    ap.add_argument("--ghost-factor", type=float, default=4)
    ap.add_argument("--profile-max-keys", type=int, default=0, help="0 = track every key")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    for b in (AGENT, LOADGEN):
        if not b.exists():
            print(f"missing {b}: make -C profiler-agent all; make -C profiler-agent/loadgen", file=sys.stderr)
            return 2
    factors = [0.25, 0.5, 2.0, 4.0]
    results = []
    with tempfile.TemporaryDirectory() as td:
        for name in a.workloads.split(","):
            t = time.time()
            r = bench_workload(
                name,
                WORKLOADS[name],
                a.mem,
                a.warm,
                a.measured,
                factors,
                Path(td),
                a.ghost_factor,
                a.profile_max_keys,
            )
            r["seconds"] = round(time.time() - t, 1)
            results.append(r)
            print(
                f"\n== {name}: M = {a.mem} MiB, {r['items_at_M']} items at M, {r['windows']} windows, "
                f"stream loss mean {r['loss_mean']:.2%} max {r['loss_max']:.2%}, "
                f"{r['seconds']} s"
            )
            print(
                f"{'size':>8} {'MiB':>5} {'measured':>9} {'pred raw':>9} {'|err| pp':>9} {'pred cal':>9} "
                f"{'|err| pp':>9} target"
            )
            for row in r["rows"]:
                target = {1.0: 1, 0.5: 2, 2.0: 2}.get(row["factor"], 4)
                print(
                    f"{row['factor']:>7}M {row['mem_mb']:>5} {row['measured']:>9.4f} "
                    f"{row['predicted']:>9.4f} {abs(row['predicted'] - row['measured']) * 100:>9.2f} "
                    f"{row['calibrated']:>9.4f} {abs(row['calibrated'] - row['measured']) * 100:>9.2f}"
                    f"  <= {target} pp"
                    + (f"   exact LRU {row['exact_lru']:.4f}" if "exact_lru" in row else "")
                )
            sys.stdout.flush()
    if a.json:
        Path(a.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
