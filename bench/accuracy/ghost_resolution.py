#!/usr/bin/env python3
"""The agent's curve above today's memory against exact LRU, per ghost filter count.

Offline and deterministic (no memcached): the accuracy benchmark's seeded reads (hc-loadgen
--print-keys, warm-up then the measured phase continuing the scan, `bench_accuracy.seeded_reads`)
go through `hitcurve-agent replay` at N items with the ghost factor K and each filter count F, and
the curve is compared with the simulator's exact LRU over the same reads (`hitcurve_sim.exact_lru`)
at the replay's points. Why: the counting ghost places a reuse distance beyond N only to within
one filter's span, (K - 1) N / (F - 1), so a cliff above N (the scan mix's loop comes back after
~4.1 N distinct keys) is smeared over that span. Printed per workload and F: mean and max
|error| in pp per region (N-2N, 2N-3N, 3N-4N, 4N-KN), the curve at 4N and 4.25N, the profile's
memory (the replay's `memory_bytes`, what the agent's profile holds) and the replay's seconds
(CPU of one process; compare the rows of one run, the machine is shared).

  .venv/bin/python bench/accuracy/ghost_resolution.py [--workloads scan-mix,zipf1.1]
      [--filters 9,17,33] [--items 110000] [--ghost-factor 5]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_accuracy import AGENT, ROOT, WORKLOADS, seeded_reads  # noqa: E402

sys.path.insert(0, str(ROOT / "worker"))
from hitcurve_worker.trace_data import sim_module  # noqa: E402


def replay(path: Path, items: int, k: float, filters: int) -> dict:
    out = subprocess.run(
        [
            str(AGENT),
            "replay",
            "--format",
            "lirs",
            "--cache-size",
            str(items),
            "--ghost-factor",
            f"{k:g}",
            "--filters",
            str(filters),
            "--points",
            "400",
            str(path),
        ],
        capture_output=True,
        check=True,
        text=True,
    )
    return json.loads(out.stdout)


def _at(x: np.ndarray, curve: np.ndarray, f: float) -> float:
    return float(np.interp(f, x, curve))


def regions(k: float) -> list[tuple[float, float]]:
    edges = [1.0, 2.0, 3.0, 4.0, k]
    return [(a, b) for a, b in zip(edges, edges[1:], strict=False) if b > a]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="scan-mix,zipf1.1")
    ap.add_argument("--filters", default="9,17,33")
    ap.add_argument("--items", type=int, default=110000, help="N: items at M (the bench: ~110k at 32 MiB)")
    ap.add_argument("--ghost-factor", type=float, default=5.0)
    ap.add_argument("--warm", type=int, default=2400000)
    ap.add_argument("--measured", type=int, default=1200000)
    a = ap.parse_args()
    hs = sim_module()
    n, k = a.items, a.ghost_factor
    for name in a.workloads.split(","):
        keys = seeded_reads(WORKLOADS[name], a.warm, a.measured)
        with tempfile.TemporaryDirectory() as td:
            path = Path(td) / "reads.lirs"
            np.savetxt(path, keys, fmt="%d")
            runs = {f: replay(path, n, k, int(f)) for f in a.filters.split(",")}
        xs = [p[0] for p in next(iter(runs.values()))["points"]]
        sizes = [max(1, round(s)) for s in xs]
        ref = {int(r["size"]): float(r["hit_ratio"]) for r in hs.exact_lru(keys, sizes)}
        exact = np.array([ref[s] for s in sizes])
        x = np.array(xs) / n
        at = partial(_at, x)

        print(
            f"\n{name}: {len(keys)} reads, N = {n} items, K = {k:g}; exact LRU at 4N {at(exact, 4):.3f}, "
            f"4.25N {at(exact, 4.25):.3f}"
        )
        head = " | ".join(f"{lo:g}-{hi:g}N mean/max" for lo, hi in regions(k))
        print(f"| F | span | {head} | at 4N | at 4.25N | profile MB | replay s |")
        print("|---" * (7 + len(regions(k))) + "|")
        for f, r in runs.items():
            curve = np.array([p[1] for p in r["points"]])
            err = (curve - exact) * 100
            cells = []
            for lo, hi in regions(k):
                m = (x > lo) & (x <= hi)
                cells.append(f"{np.abs(err[m]).mean():.2f} / {np.abs(err[m]).max():.2f}")
            prof = r["profile"]
            print(
                f"| {f} | {(k - 1) / (int(f) - 1):.2f}N | "
                + " | ".join(cells)
                + f" | {at(curve, 4):.3f} | {at(curve, 4.25):.3f} | {prof['memory_bytes'] / 1e6:.1f}"
                f" | {prof['elapsed_s']:.1f} |"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
