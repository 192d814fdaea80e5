#!/usr/bin/env python3
"""TTL what-if against real memcached: "if prefix P's TTL were X".

A seeded cache-aside workload (tests/agent/breakdown_load.py: a get, and on a miss a set with
the prefix's TTL) of two prefixes runs beside the agent on one memcached: P = `sess` with TTL
3 s and `user` without TTL, in separate slab classes (100 B and 600 B values). From the agent's
windows the backend's model (backend/hitcurve/breakdown/ttlwhatif.py, the API's) predicts, for P's TTL X:
P's hit ratio and the server's with memory for every live item (the replay's own figures), and
the bytes P's live items hold. The same seeded requests then run on fresh memcacheds with P's
TTL set to X; P's and the server's hit ratios are counted by the load driver itself, and P's
memory read from `stats slabs` (its class's used chunks x chunk size, sampled each second:
memcached also holds expired items until its crawler or a read reclaims them, so this is at
least the live bytes).

Second part (--memory): P alone (1000 B items) at a memcached of 4 MiB that evicts; the model
predicts, for TTL X, P's hit ratio in the same memory and the memory for today's hit ratio; both
re-run on real memcached (-m rounded up to whole MiB).

Run: .venv/bin/python profiler-agent/loadgen/bench_ttlwhatif.py [--seconds 40] [--memory]
About 4 minutes (9 with --memory) on a 2-core machine.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import threading
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "profiler-agent" / "tests" / "agent"))
sys.path.insert(0, str(ROOT / "backend"))
from agent_harness import Agent, Client, Memcached, kill_leftovers  # noqa: E402
from breakdown_load import Driver, Prefix  # noqa: E402

from hitcurve.breakdown.ttlwhatif import what_if  # noqa: E402  (the API's model)

P = "sess"
TODAY_TTL = 3


def mix(ttl: int) -> tuple[Prefix, ...]:
    return (Prefix(P, 0.5, 8000, 100, ttl), Prefix("user", 0.5, 3000, 600, 0))


def alone(ttl: int) -> tuple[Prefix, ...]:
    # 1000 B values (chunks of ~1.2 KiB): at TTL 3 s its live items outgrow -m 4, memcached evicts
    return (Prefix(P, 1.0, 30000, 1000, ttl, 0.8),)


RATE = 3000.0
CORRECT = True  # --raw: the replay's columns without the sample-bias correction
ALONE = False  # the memory part: P alone, every class is P's
MAX_LOSS = 0.05
MIB = 1 << 20


def p_bytes(c: Client) -> int:
    """Bytes of P's slab class(es): chunks under 400 B (P's 100 B items; `user`'s take ~700 B) in
    the mix; every class when P runs alone."""
    lines = c.raw(b"stats slabs\r\n", (b"END",))
    cls: dict[str, dict[str, int]] = {}
    for ln in lines:
        parts = ln.decode().split()
        if len(parts) == 3 and ":" in parts[1]:
            k, name = parts[1].split(":", 1)
            cls.setdefault(k, {})[name] = int(parts[2])
    limit = 400 if not ALONE else 1 << 30
    return sum(
        v["used_chunks"] * v["chunk_size"] for v in cls.values() if v.get("chunk_size", 1 << 30) < limit
    )


def drive(port: int, prefixes: tuple[Prefix, ...], seconds: float, sample_bytes: bool) -> dict:
    """Seeded run of RATE x seconds requests, counted in requests (not time: a loaded machine
    runs the driver below RATE); the first third warms the cache up, the rest is measured by the
    driver's own counts; P's class bytes sampled every second meanwhile."""
    n = int(RATE * seconds)
    d = Driver(port, mix=prefixes, seed=11)
    d.run(requests=n // 3, rate=RATE)
    g0, h0 = dict(d.counts.gets), dict(d.counts.hits)
    samples: list[int] = []
    stop = threading.Event()

    def sampler() -> None:
        c = Client(port)
        while not stop.wait(1.0):
            samples.append(p_bytes(c))
        c.close()

    th = threading.Thread(target=sampler)
    if sample_bytes:
        th.start()
    d.run(requests=n - n // 3, rate=RATE)
    stop.set()
    if sample_bytes:
        th.join()
    d.close()
    gets = {k: d.counts.gets[k] - g0.get(k, 0) for k in d.counts.gets}
    hits = {k: d.counts.hits[k] - h0.get(k, 0) for k in d.counts.hits}
    return {
        "p": hits[P] / gets[P],
        "server": sum(hits.values()) / sum(gets.values()),
        "p_bytes": sum(samples) / len(samples) if samples else None,
    }


def baseline(prefixes: tuple[Prefix, ...], mb: int, seconds: float) -> dict:
    m = Memcached(mem_mb=mb)
    try:
        with tempfile.TemporaryDirectory() as t:
            agent = Agent(Path(t), m.addr, "--interval", f"{seconds / 4:.1f}")
            agent.wait_log("watch_connected", timeout=120)
            agent.wait_log("memcached_instance", timeout=120)
            got = drive(m.port, prefixes, seconds, sample_bytes=True)
            time.sleep(1.0)
            agent.stop()
            got["windows"] = [s for s in agent.snapshots() if s.get("prefixes")]
        return got
    finally:
        m.stop()
        kill_leftovers()


def rerun(prefixes: tuple[Prefix, ...], mb: int, seconds: float) -> dict:
    m = Memcached(mem_mb=mb)
    try:
        return drive(m.port, prefixes, seconds, sample_bytes=True)
    finally:
        m.stop()
        kill_leftovers()


def usable(wins: list[dict]) -> list[dict]:
    """Full windows after the first (warm-up) with little stream loss, whose P has a what-if."""
    wins = wins[1:]
    top = max(w["measured"]["cmd_get"] for w in wins)
    return [
        w
        for w in wins
        if w["measured"]["cmd_get"] >= top / 2
        and w["loss"]["loss_ratio"] <= MAX_LOSS
        and any(p["prefix"] == P and p.get("ttl_whatif") for p in w["prefixes"])
    ]


def predict(win: dict, ttl: float):
    ps = win["prefixes"]
    other = win.get("prefix_other") or {"requests": 0}
    reads = sum(p["requests"] for p in ps) + other["requests"]
    p = next(q for q in ps if q["prefix"] == P)
    tw = p["ttl_whatif"]
    at = datetime.fromisoformat
    secs = (at(win["window"]["end"]) - at(win["window"]["start"])).total_seconds()
    return what_if(
        win["ttl_whatif_ttls_s"],
        tw["hit_ratio"],
        tw["live_byte_s"],
        secs,
        p["points"],
        p["hit_ratio"],
        p["bytes"],
        p["requests"] / reads,
        win["measured"]["hit_ratio"],
        ttl,
        tw.get("sampled_hit_ratio") if CORRECT else None,
    )


def mean(xs: list[float | None]) -> float | None:
    ys = [x for x in xs if x is not None]
    return sum(ys) / len(ys) if ys else None


def part_ttl(seconds: float, ttls: list[int], mb: int, runs: dict) -> None:
    base = runs.setdefault("base", None) or baseline(mix(TODAY_TTL), mb, seconds)
    runs["base"] = base
    wins = usable(base["windows"])
    if not wins:
        sys.exit("no usable agent window with P's what-if")
    loss = max(w["loss"]["loss_ratio"] for w in wins)
    print(
        f"# TTL what-if, unbounded memory: P = {P!r} (TTL {TODAY_TTL} s, 8000 keys, Zipf 0.9, 100 B, "
        f"half the reads) beside 'user' (no TTL, 3000 keys, 600 B); memcached -m {mb}, {seconds:.0f} s "
        f"per run at {RATE:.0f} req/s (first third warm-up); {len(wins)} agent windows "
        f"(of {len(base['windows'])}), "
        f"stream loss <= {loss:.2%}"
    )
    w0 = [predict(w, TODAY_TTL) for w in wins]
    print(
        f"# today (TTL {TODAY_TTL} s): P measured by the driver {base['p']:.4f}, the agent's P hit ratio "
        f"{mean([next(q for q in w['prefixes'] if q['prefix'] == P)['hit_ratio'] for w in wins]):.4f}, "
        f"replay at today's TTLs {mean([x.allowed_today for x in w0]):.4f}, at the grid's {TODAY_TTL} s "
        f"{mean([x.allowed for x in w0]):.4f}; P's class bytes (memcached) {base['p_bytes'] / MIB:.2f} MiB, "
        f"live bytes (replay) {mean([x.live_bytes_today for x in w0]) / MIB:.2f} MiB; "
        f"server {base['server']:.4f}"
    )
    print(
        "| P's TTL | P hit ratio predicted | measured | err pp | server predicted | measured | err pp | "
        "P live MiB predicted | memcached's P class MiB |"
    )
    print("|---|---|---|---|---|---|---|---|---|")
    rows = []
    for x in ttls:
        key = f"ttl{x}"
        if key not in runs:
            runs[key] = rerun(mix(x), mb, seconds)
        got = runs[key]
        pr = [predict(w, x) for w in wins]
        ph, sh, lb = (
            mean([q.allowed for q in pr]),
            mean([q.server_hit_ratio_unbounded for q in pr]),
            mean([q.live_bytes for q in pr]),
        )
        rows.append(
            {
                "ttl": x,
                "p_pred": ph,
                "p_meas": got["p"],
                "s_pred": sh,
                "s_meas": got["server"],
                "live_pred": lb,
                "class_bytes": got["p_bytes"],
            }
        )
        print(
            f"| {x} s | {ph:.4f} | {got['p']:.4f} | {100 * (ph - got['p']):+.2f} | {sh:.4f} | "
            f"{got['server']:.4f} | {100 * (sh - got['server']):+.2f} | {lb / MIB:.2f} | "
            f"{got['p_bytes'] / MIB:.2f} |",
            flush=True,
        )
    runs["ttl_rows"] = rows


def part_memory(seconds: float, ttls: list[int], mb: int, runs: dict) -> None:
    global ALONE
    ALONE = True
    base = runs.get("mem_base") or baseline(alone(TODAY_TTL), mb, seconds)
    runs["mem_base"] = base
    wins = usable(base["windows"])
    if not wins:
        sys.exit("no usable agent window with P's what-if (memory part)")
    print(
        f"# TTL what-if in limited memory: P alone (TTL {TODAY_TTL} s, 30000 keys, Zipf 0.8, 1000 B) on "
        f"memcached -m {mb}; P measured {base['p']:.4f}, its class {base['p_bytes'] / MIB:.2f} MiB; "
        f"{len(wins)} windows"
    )
    print(
        "| P's TTL | hit ratio at -m same, predicted | measured | err pp | memory for today's hit ratio, "
        "predicted | measured hit ratio at -m that (rounded up) | err pp vs today's |"
    )
    print("|---|---|---|---|---|---|---|")
    rows = []
    for x in ttls:
        pr = [predict(w, x) for w in wins]
        ph = mean([q.prefix_hit_ratio for q in pr])
        need = mean([q.memory_for_today_hit_ratio for q in pr])
        key = f"mem_ttl{x}"
        if key not in runs:
            runs[key] = rerun(alone(x), mb, seconds)
        got = runs[key]
        # P holds its class's share of -m; memcached's -m for P's need keeps that proportion
        frac = base["p_bytes"] / (mb * MIB)
        need_mb = None if need is None else max(1, math.ceil(need / frac / MIB))
        k2 = f"mem_need{x}_{need_mb}"
        if need_mb is not None and k2 not in runs:
            runs[k2] = rerun(alone(x), need_mb, seconds)
        at_need = runs.get(k2)
        rows.append(
            {
                "ttl": x,
                "p_pred": ph,
                "p_meas": got["p"],
                "need_bytes": need,
                "need_mb": need_mb,
                "p_at_need": at_need["p"] if at_need else None,
            }
        )
        need_s = "unreachable" if need is None else f"{need / MIB:.2f} MiB (-m {need_mb})"
        at_s = f"{at_need['p']:.4f} | {100 * (at_need['p'] - base['p']):+.2f}" if at_need else "- | -"
        print(
            f"| {x} s | {ph:.4f} | {got['p']:.4f} | {100 * (ph - got['p']):+.2f} | {need_s} | {at_s} |",
            flush=True,
        )
    runs["mem_rows"] = rows


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=40)
    ap.add_argument("--ttls", default="1,2,6,12")
    ap.add_argument("--mb", type=int, default=64)
    ap.add_argument("--memory", action="store_true", help="also the limited-memory part")
    ap.add_argument("--memory-mb", type=int, default=4)
    ap.add_argument("--save", help="keep the runs in this file (and reuse the ones it has)")
    ap.add_argument("--raw", action="store_true", help="no sample-bias correction (the API applies it)")
    a = ap.parse_args()
    global CORRECT
    CORRECT = not a.raw
    runs = json.loads(Path(a.save).read_text()) if a.save and Path(a.save).exists() else {}
    ttls = [int(x) for x in a.ttls.split(",")]
    t0 = time.time()
    part_ttl(a.seconds, ttls, a.mb, runs)
    if a.save:
        Path(a.save).write_text(json.dumps(runs))
    if a.memory:
        part_memory(a.seconds, ttls, a.memory_mb, runs)
        if a.save:
            Path(a.save).write_text(json.dumps(runs))
    print(json.dumps({"load": os.getloadavg(), "seconds": round(time.time() - t0)}))


if __name__ == "__main__":
    main()
