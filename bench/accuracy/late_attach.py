#!/usr/bin/env python3
"""An agent attached beside a memcached that is already full and evicting (late attach).

The common install: memcached has run for days, the agent starts beside it. The keys memcached
evicted before cannot reach the agent's ghost, so its curve past N + the ghost's entries is a
bound ("more than") until the ghost has held (K - 1) x N evicted keys; from then on every key it
lacks lies beyond K x N, the class says `curve.ghost_complete`, and 4M is a value
(profiler-agent/src/core/ghost.h, `covered`). This run shows when that happens on real memcached
and how the answers at 2M and 4M then compare with a from-start agent's and with real memcached.

One memcached 1.6.18 at M (default 32 MiB) with TWO agents on their defaults (only `--interval`
shortened, as bench_accuracy.py does): "early" attached before the first request, "late" attached
after the warm-up (memcached full, evicting for millions of requests). Phases (hc-loadgen, seeded,
bench_accuracy's workloads): warm-up (seed 1), then chunks (seeds 100, 101, ...) until the late
agent's largest classes say ghost_complete (at most --max-bridge requests), then the measured
phase (seed 2). Each agent's windows go through the worker's pipeline and the API's answer
(bench_accuracy.product_path); the answer after the measured phase is compared with real
memcached started at 2M and 4M replaying exactly the same phases.

    .venv/bin/python bench/accuracy/late_attach.py [--workload zipf0.9] [--keep DIR] [--json F]
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
import bench_accuracy as ba  # noqa: E402

CHUNK = 200000
SIZES = [2.0, 4.0]


def start_agent(port: int, snapdir: Path, interval: float) -> subprocess.Popen:
    shutil.rmtree(snapdir, ignore_errors=True)
    snapdir.mkdir(parents=True)
    log = open(snapdir / "agent.log", "w")  # noqa: SIM115
    return subprocess.Popen(ba.agent_command(port, snapdir, interval), stdout=log, stderr=log)


def windows(snapdir: Path) -> list[dict]:
    out = []
    for f in snapdir.glob("snapshot-*.json"):
        try:
            out.append(json.loads(f.read_text()))
        except (OSError, ValueError):
            continue  # being written
    return sorted(out, key=lambda s: s["window"]["end"])


def big_classes(snap: dict, share: float = 0.9) -> list[dict]:
    """The classes holding `share` of the items (the ones the answer at 2M/4M rests on)."""
    cls = sorted(snap["classes"], key=lambda c: -c["items"])
    total, out, acc = sum(c["items"] for c in cls) or 1, [], 0
    for c in cls:
        if acc >= share * total:
            break
        out.append(c)
        acc += c["items"]
    return out


def complete(snap: dict) -> bool:
    return all(c["curve"].get("ghost_complete") for c in big_classes(snap))


class Load:
    """hc-loadgen calls that continue one workload: a scan carries on where the previous call's
    stopped (bench_accuracy.continue_scan; restarting it at key 0 each call re-reads recent keys,
    a transient memcached sees and the agent's newest windows do not)."""

    def __init__(self, port: int, wl: dict):
        self.port, self.wl, self.scan_end = port, wl, None

    def run(self, requests: int, seed: int) -> None:
        extra = ba.continue_scan(self.wl, self.scan_end) if self.scan_end is not None else []
        self.scan_end = ba.loadgen(self.port, self.wl, requests, seed, *extra).get("scan_end")


def phases(port: int, wl: dict, warm: int, bridge: list[int], measured: int) -> tuple[float, dict, dict]:
    """Replay the run's phases on a reference memcached; the measured phase's hit ratio."""
    ld = Load(port, wl)
    ld.run(warm, 1)
    for seed in bridge:
        ld.run(CHUNK, seed)
    s0 = ba.stats(port)
    ld.run(measured, 2)
    s1 = ba.stats(port)
    h = int(s1["get_hits"]) - int(s0["get_hits"])
    m = int(s1["get_misses"]) - int(s0["get_misses"])
    return h / (h + m), s0, s1


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workload", default="zipf0.9", choices=sorted(ba.WORKLOADS))
    ap.add_argument("--mem", type=int, default=32)
    ap.add_argument("--warm", type=int, default=2400000)
    ap.add_argument("--measured", type=int, default=1200000)
    ap.add_argument("--max-bridge", type=int, default=8000000, help="most requests waiting for complete")
    ap.add_argument("--interval", type=float, default=2)
    ap.add_argument("--keep", help="keep both agents' snapshots here")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    wl = ba.WORKLOADS[a.workload]
    binary = ba.memcached_binary()
    base = Path(a.keep or tempfile.mkdtemp(prefix="late-attach-"))
    base.mkdir(parents=True, exist_ok=True)
    early_dir, late_dir = base / "early", base / "late"
    mc = ba.Memcached(binary, a.mem)
    early = start_agent(mc.port, early_dir, a.interval)
    late = None
    res: dict = {"workload": a.workload, "mem": a.mem, "warm": a.warm, "measured": a.measured}
    t_start = time.time()
    try:
        time.sleep(0.5)
        ld = Load(mc.port, wl)
        ld.run(a.warm, 1)
        st = ba.stats(mc.port)
        res["evictions_before_attach"] = int(st["evictions"])
        print(
            f"warm-up done: memcached evicted {st['evictions']} items before the late agent attached",
            flush=True,
        )
        late = start_agent(mc.port, late_dir, a.interval)
        t_attach = time.time()
        ev0 = int(st["evictions"])
        time.sleep(1.5)
        bridge: list[int] = []
        seen_complete_at = None
        while len(bridge) * CHUNK < a.max_bridge:
            seed = 100 + len(bridge)
            ld.run(CHUNK, seed)
            bridge.append(seed)
            snaps = windows(late_dir)
            # two windows in a row complete: the latch holds, not one lucky window
            if len(snaps) >= 2 and complete(snaps[-1]) and complete(snaps[-2]):
                seen_complete_at = len(bridge) * CHUNK
                break
        res["bridge_requests"] = len(bridge) * CHUNK
        res["bridge_seeds"] = bridge
        print(
            f"bridge: {res['bridge_requests']} requests after attaching; late agent complete: "
            f"{seen_complete_at is not None}",
            flush=True,
        )
        s0 = ba.stats(mc.port)
        t0 = time.time()
        ld.run(a.measured, 2)
        s1 = ba.stats(mc.port)
        t1 = time.time()
        time.sleep(a.interval + 2)
        h = int(s1["get_hits"]) - int(s0["get_hits"])
        m = int(s1["get_misses"]) - int(s0["get_misses"])
        res["measured_at_M"] = h / (h + m)
        res["load_avg_end"] = Path("/proc/loadavg").read_text().split()[:3]
        for p in (early, late):
            p.send_signal(signal.SIGTERM)
            p.wait(120)
    finally:
        for p in (early, late):
            if p is not None and p.poll() is None:
                p.kill()
        mc.stop()
    res["agent_seconds"] = round(time.time() - t_start, 1)

    # when the late agent's classes became complete, against evictions since it attached
    trail = []
    for s in windows(late_dir):
        cls = big_classes(s)
        trail.append(
            {
                "end_s": round(ba._ts(s["window"]["end"]) - t_attach, 1),
                "evictions_since_attach": int(s["memory"]["evictions_total"]) - ev0,
                "loss": round(float(s["loss"]["loss_ratio"]), 4),
                "classes": [
                    [
                        c["id"],
                        c["curve"]["current_items"],
                        round(c["curve"]["ghost_reach_items"] / c["curve"]["current_items"], 2),
                        bool(c["curve"].get("ghost_complete")),
                    ]
                    for c in cls
                ],
            }
        )
    res["late_windows"] = trail
    first = next((w for w in trail if all(c[3] for c in w["classes"])), None)
    n_items = sum(c[1] for c in trail[-1]["classes"]) if trail else 0
    res["late_complete_first"] = first
    res["items_big_classes"] = n_items
    print(
        f"late agent: {len(trail)} windows; big classes hold N = {n_items} items; first window all "
        f"complete: {first and first['end_s']} s after attaching, "
        f"{first and first['evictions_since_attach']} evictions since ((K-1) N = {4 * n_items})",
        flush=True,
    )

    # real memcached at 2M and 4M over the same phases
    measured = {}
    for f in SIZES:
        ref = ba.Memcached(binary, int(a.mem * f))
        try:
            measured[f] = phases(ref.port, wl, a.warm, res["bridge_seeds"], a.measured)[0]
        finally:
            ref.stop()
    res["real"] = {str(f): measured[f] for f in SIZES}
    sizes = [int(f * a.mem * ba.MIB) for f in SIZES]
    res["answers"] = {}
    for name, d in (("early", early_dir), ("late", late_dir)):
        prod = ba.product_path(d, sizes, None, until=t1 + a.interval + 1.5)
        last = [p for p in prod.polls if p.window_end <= t1 + a.interval + 1.5][-1]
        res["answers"][name] = [
            {
                "factor": f,
                "status": ans.status,
                "predicted": ans.hit_ratio,
                "at_least": getattr(ans, "hit_ratio_at_least", None),
                "error_pp": None if ans.hit_ratio is None else round((ans.hit_ratio - measured[f]) * 100, 2),
            }
            for f, ans in zip(SIZES, last.ratios, strict=True)
        ]
        # polls of the measured phase: how many answered 4M as a value
        res["answers"][name + "_measured_polls_4M_status"] = sorted(
            {p.ratios[1].status for p in prod.polls if t0 < p.window_end <= t1 + a.interval + 1.5}
        )
    print(f"real memcached: 2M {measured[2.0]:.4f}, 4M {measured[4.0]:.4f}; at M {res['measured_at_M']:.4f}")
    for name in ("early", "late"):
        for r in res["answers"][name]:
            print(f"  {name:5s} {r['factor']:g}M: {r['status']} {r['predicted']} ({r['error_pp']} pp)")
    if a.json:
        Path(a.json).write_text(json.dumps(res, indent=1, default=str))
    return 0


if __name__ == "__main__":
    sys.exit(main())
