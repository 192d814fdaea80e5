#!/usr/bin/env python3
"""Why the live curve reads low at 2M: the agent's ghost view against memcached itself.

Offline and deterministic (no memcached): the accuracy benchmark's seeded reads (warm-up, then
the measured phase continuing the scan, `bench_accuracy.seeded_reads`) through the simulator at
N items (the live run's items at M) and x N for each factor x:

  lru        plain LRU at x N (what the agent's curve is below N);
  mcslru     memcached's segmented LRU at x N (matches real memcached 1.6.18 within 0.01-0.2 pp
             at M/4 .. 4M over the measured phase, bench_accuracy's phase-matched row);
  ghost      what the agent measures above N: memcached at N plus a ghost of the (x - 1) N keys
             it evicted last, in eviction order (simulator `mcslru.base` = N);
  lift       mcslru - ghost: what the live curve misses above today's memory.

Counted over the measured phase (the bench's real memcacheds are measured there). With
`--continue K` the workload goes on for K x 100k more reads as the bench's stationary phase does
(seeds 3, 4, ...), and mcslru and ghost are printed over successive `--span` reads: whether
memcached at x N has settled by the measured phase.

  .venv/bin/python bench/accuracy/ghost_view.py [--workloads scan-mix,zipf0.9,zipf1.1]
      [--items 110368] [--factors 1,1.5,2,3,4] [--continue 36 --span 600000]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_accuracy import LOADGEN, ROOT, WORKLOADS, continue_scan, seeded_reads  # noqa: E402

sys.path.insert(0, str(ROOT / "worker"))
from hitcurve_worker.trace_data import sim_module  # noqa: E402

WARM, MEASURED, CHUNK = 2_400_000, 1_200_000, 100_000


def continued(wl: dict, keys: np.ndarray, chunks: int) -> np.ndarray:
    """`keys` followed by `chunks` x CHUNK reads of seeds 3, 4, ... (the scan carried on), as
    bench_accuracy.stationary_phase sends them."""
    parts = [keys]
    for seed in range(3, 3 + chunks):
        extra: list[str] = []
        if "scan" in wl["args"]:
            n = int(wl["args"][wl["args"].index("--keys") + 1])
            scan_len = int(wl["args"][wl["args"].index("--scan-len") + 1])
            last = int(parts[-1][parts[-1] >= n][-1]) - n
            extra = continue_scan(wl, (last + 1) % scan_len)
        r = subprocess.run(
            [
                str(LOADGEN),
                "--requests",
                str(CHUNK),
                "--seed",
                str(seed),
                "--print-keys",
                *wl["args"],
                *extra,
            ],
            capture_output=True,
            check=True,
        )
        parts.append(np.array(r.stdout.split(), dtype=np.uint64))
    return np.concatenate(parts)


def run(
    hs, keys: np.ndarray, lo: int, hi: int, sizes: list[int], policy: str, base: int = 0
) -> dict[int, float]:
    params = {"mcslru": {"base": base}} if base else None
    out = hs.simulate(keys[:hi], [policy], sizes, unit="items", warmup=lo / hi, threads=2, params=params)
    return {int(r["size"]): float(r["hit_ratio"]) for r in out}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="scan-mix,zipf0.9,zipf1.1")
    ap.add_argument("--items", type=int, default=110368, help="N: memcached's items at M in the live run")
    ap.add_argument("--factors", default="1,1.5,2,3,4")
    ap.add_argument("--continue", dest="chunks", type=int, default=0, help="more reads, in 100k chunks")
    ap.add_argument("--span", type=int, default=600_000, help="reads per row of the continued run")
    a = ap.parse_args()
    hs = sim_module()
    n = a.items
    factors = [float(f) for f in a.factors.split(",")]
    sizes = [round(f * n) for f in factors]
    for name in a.workloads.split(","):
        wl = WORKLOADS[name]
        keys = seeded_reads(wl, WARM, MEASURED)
        lru = run(hs, keys, WARM, WARM + MEASURED, sizes, "lru")
        mcs = run(hs, keys, WARM, WARM + MEASURED, sizes, "mcslru")
        ghost = run(hs, keys, WARM, WARM + MEASURED, sizes, "mcslru", base=n)
        if all(ghost[k] == mcs[k] for k in sizes):
            # an older build of the extension ignores the unknown parameter
            raise SystemExit("hitcurve_sim has no mcslru.base: rebuild it (pip install -e simulator/python)")
        print(f"\n== {name}: N = {n} items, measured phase (reads {WARM}..{WARM + MEASURED})")
        print(f"{'x N':>5} {'lru':>7} {'mcslru':>7} {'ghost':>7} {'lift pp':>8} {'mcslru-lru pp':>14}")
        for f, k in zip(factors, sizes, strict=True):
            print(
                f"{f:>5g} {lru[k]:>7.4f} {mcs[k]:>7.4f} {ghost[k]:>7.4f} {(mcs[k] - ghost[k]) * 100:>+8.2f} "
                f"{(mcs[k] - lru[k]) * 100:>+14.2f}"
            )
        if a.chunks:
            more = continued(wl, keys, a.chunks)
            print(f"   continued to {len(more)} reads: mcslru / ghost / lift pp per {a.span} reads")
            for lo in range(WARM, len(more) - a.span + 1, a.span):
                m = run(hs, more, lo, lo + a.span, sizes, "mcslru")
                g = run(hs, more, lo, lo + a.span, sizes, "mcslru", base=n)
                print(
                    f"   {lo / 1e6:4.1f}-{(lo + a.span) / 1e6:4.1f}M  "
                    + "  ".join(
                        f"{f:g}N {m[k]:.4f}/{g[k]:.4f}/{(m[k] - g[k]) * 100:+.2f}"
                        for f, k in zip(factors, sizes, strict=True)
                    )
                )
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
