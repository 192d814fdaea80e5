#!/usr/bin/env python3
"""Pool-split what-if against real memcached.

A seeded workload of two prefixes with the same read share and popularity but different item
sizes (the case where separate pools beat one, arXiv 1708.01673) runs on one memcached of M
bytes beside the agent (the pool). From the agent's windows the backend's model
(backend/hitcurve/breakdown/poolsplit.py) predicts the hit ratio with prefix P alone in a pool of X and
the rest alone in M - X, for several X. The same seeded requests then run on two fresh
memcacheds of X and M - X (each request sent to its prefix's instance), whose hit ratios are
measured from `stats`. Printed side by side, with the pool's measured and predicted hit ratio.

Run: .venv/bin/python profiler-agent/loadgen/bench_split.py [--seconds 45] [--mb 8]
       [--save runs.json] [--load runs.json]
About 4 minutes on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "profiler-agent" / "tests" / "agent"))
sys.path.insert(0, str(ROOT / "backend"))
from agent_harness import Agent, Client, Memcached, kill_leftovers  # noqa: E402
from breakdown_load import Driver, Prefix  # noqa: E402

from hitcurve.breakdown.poolsplit import split  # noqa: E402  (the API's model)

# Same share and popularity; items of 100 B and 4000 B (chunks of 192 B and ~4.5 KiB).
SPLIT_MIX = (
    Prefix("small", 0.5, 30000, 100, 0),
    Prefix("big", 0.5, 3000, 4000, 0),
)
RATE = 3000.0
MIB = 1 << 20


class RoutedDriver(Driver):
    """The seeded driver with each prefix's requests sent to its own memcached."""

    def __init__(self, ports: dict[str, int], mix=SPLIT_MIX, seed: int = 11):
        first = next(iter(ports.values()))
        super().__init__(first, mix=mix, seed=seed)
        self.conns = {}
        for name, port in ports.items():
            d = Driver(port, mix=mix, seed=0)
            self.conns[name] = (d.s, d.f)

    def step(self) -> None:  # the parent's step, on the picked prefix's connection
        state = self.rng.getstate()
        p, _ = self._pick()
        self.rng.setstate(state)
        self.s, self.f = self.conns[p.name]
        super().step()


def measure(drivers_ports: dict[str, int], seconds: float, routed: bool) -> float:
    """Seeded run of RATE x seconds requests; hit ratio over the last 2/3 (the first third warms
    the cache up). Counted in requests, not time: on a loaded machine the driver runs below RATE,
    and a time-boxed warm-up then left the split's caches colder than the pool's (one run measured
    small 2 MiB + big 6 MiB at 0.7510, the same requests at 0.8101 on a quieter machine)."""
    n = int(RATE * seconds)
    ports = sorted(set(drivers_ports.values()))
    d = RoutedDriver(drivers_ports) if routed else Driver(ports[0], mix=SPLIT_MIX, seed=11)
    clients = [Client(p) for p in ports]
    d.run(requests=n // 3, rate=RATE)
    s0 = [c.stats() for c in clients]
    d.run(requests=n - n // 3, rate=RATE)
    s1 = [c.stats() for c in clients]
    hits = sum(int(b["get_hits"]) - int(a["get_hits"]) for a, b in zip(s0, s1, strict=True))
    miss = sum(int(b["get_misses"]) - int(a["get_misses"]) for a, b in zip(s0, s1, strict=True))
    for c in clients:
        c.close()
    d.close()
    return hits / (hits + miss)


def pool_run(mb: int, seconds: float) -> dict:
    m = Memcached(mem_mb=mb)
    try:
        with tempfile.TemporaryDirectory() as t:
            agent = Agent(Path(t), m.addr, "--interval", f"{seconds / 3:.1f}", "--ghost-factor", "4")
            agent.wait_log("watch_connected", timeout=120)
            agent.wait_log("memcached_instance", timeout=120)
            hr = measure({p.name: m.port for p in SPLIT_MIX}, seconds, routed=False)
            time.sleep(1.0)
            agent.stop()
            snaps = [s for s in agent.snapshots() if s.get("prefixes")]
        return {"mb": mb, "seconds": seconds, "measured": hr, "windows": snaps[1:] or snaps}
    finally:
        m.stop()
        kill_leftovers()


def split_run(mb_p: float, mb_rest: float, prefix: str, seconds: float) -> float:
    a, b = Memcached(mem_mb=max(1, round(mb_p))), Memcached(mem_mb=max(1, round(mb_rest)))
    try:
        ports = {p.name: (a.port if p.name == prefix else b.port) for p in SPLIT_MIX}
        return measure(ports, seconds, routed=True)
    finally:
        a.stop()
        b.stop()
        kill_leftovers()


MAX_LOSS = 0.05  # windows that lost more of the stream are left out (and counted)


def usable(wins: list[dict]) -> list[dict]:
    """Full windows with little stream loss: the agent's last window at shutdown holds a few
    hundred reads (its curves are noise: -24 pp on the check in one run), and lost events bend
    the prefix curves away from memcached's counters (at load 70: 35 % loss, -6 to -10 pp)."""
    top = max(w["measured"]["cmd_get"] for w in wins)
    return [w for w in wins if w["measured"]["cmd_get"] >= top / 4 and w["loss"]["loss_ratio"] <= MAX_LOSS]


def predict(win: dict, prefix: str, mb: int, x_mb: float):
    ps = win["prefixes"]
    other = win.get("prefix_other") or {"requests": 0, "bytes": 0}
    reads = sum(p["requests"] for p in ps) + other["requests"]
    resident = sum(p["bytes"] for p in ps) + other["bytes"]
    p = next(q for q in ps if q["prefix"] == prefix)
    return split(win["ttl_points"], p["points"], p["requests"] / reads, p["bytes"] / resident,
                 mb * MIB, mb * MIB, chosen=x_mb * MIB,
                 measured_hit_ratio=win["measured"]["hit_ratio"],
                 measured_prefix_hit_ratio=p["hit_ratio"])


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=45)
    ap.add_argument("--mb", type=int, default=8)
    ap.add_argument("--save", help="keep the runs (agent windows, measured splits) in this file")
    ap.add_argument("--load", help="predict from saved runs (memcached runs only for missing splits)")
    a = ap.parse_args()
    pool = json.loads(Path(a.load).read_text()) if a.load else pool_run(a.mb, a.seconds)
    M = pool["mb"]
    wins = usable(pool["windows"])
    if not wins:
        sys.exit("the agent wrote no window with prefixes")
    loss = max(w["loss"]["loss_ratio"] for w in wins)
    names = [p.name for p in SPLIT_MIX]
    print(f"# pool-split what-if, seeded workload of two prefixes {[(p.name, p.size) for p in SPLIT_MIX]} "
          f"(value bytes), same read share and popularity; M = {M} MiB, {pool['seconds']:.0f} s per run "
          f"at {RATE:.0f} req/s; {len(wins)} full agent windows after the warm-up with stream loss <= "
          f"{MAX_LOSS:.0%} (of {len(pool['windows'])}), largest {loss:.2%}")
    for i, w in enumerate(wins):
        for name in names:
            sp = predict(w, name, M, M / 2)
            p = next(q for q in w["prefixes"] if q["prefix"] == name)
            gain = 100 * (sp.best.hit_ratio - sp.pooled_hit_ratio)
            print(f"# window {i}, P = {name}: memcached {w['measured']['hit_ratio']:.4f}, merged LRU "
                  f"curve at M {at_raw(w, M):.4f} (calibrated: sizes x {sp.scale:.3f}); P measured "
                  f"{p['hit_ratio']:.4f}, its curve at its occupancy {p['bytes'] / MIB:.2f} MiB: check "
                  f"{sp.check_pp:+.2f} pp; split in today's proportions {sp.today.hit_ratio:.4f}; best: "
                  f"P {sp.best.prefix_bytes / MIB:.2f} MiB -> {sp.best.hit_ratio:.4f} ({gain:+.2f} pp); "
                  f"kappa {sp.kappa:.3f}")
    print(f"| pools | measured memcached | predicted, P = {names[0]} | err pp | predicted, P = {names[1]} "
          "| err pp |")
    print("|---|---|---|---|---|---|")
    raw = sum(at_raw(w, M) for w in wins) / len(wins)
    print(f"| one pool of {M} MiB | {pool['measured']:.4f} | merged LRU curve {raw:.4f} | "
          f"{100 * (raw - pool['measured']):+.2f} | (the split model is calibrated here) | |")
    measured = pool.setdefault("splits", {})
    rows = []
    for x in (M / 4, M / 2, 3 * M / 4):
        key = f"{x:g}"
        if key not in measured:
            measured[key] = split_run(x, M - x, names[0], pool["seconds"])
            if a.save:
                Path(a.save).write_text(json.dumps(pool))
        hr = measured[key]
        p0 = sum(predict(w, names[0], M, x).chosen.hit_ratio for w in wins) / len(wins)
        p1 = sum(predict(w, names[1], M, M - x).chosen.hit_ratio for w in wins) / len(wins)
        rows.append((x, hr, p0, p1))
        print(f"| {names[0]} {x:g} MiB + {names[1]} {M - x:g} MiB | {hr:.4f} | {p0:.4f} | "
              f"{100 * (p0 - hr):+.2f} | {p1:.4f} | {100 * (p1 - hr):+.2f} |", flush=True)
    if a.save:
        Path(a.save).write_text(json.dumps(pool))
    print(json.dumps({"pool": pool["measured"], "pool_lru_curve": raw, "splits": rows, "loss": loss,
                      "load": os.getloadavg()}))


def at_raw(win: dict, mb: float) -> float:
    from hitcurve.breakdown.poolsplit import _lin

    return _lin(win["ttl_points"])(mb * MIB)


if __name__ == "__main__":
    main()
