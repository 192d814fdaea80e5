"""Cluster curves from server curves (pure, no database).

Servers behind consistent hashing share one keyspace: each holds a share of the keys and sees
the reads for them. Keeping today's split of memory between servers (share w_i = M_i / sum M),
the cluster at total memory T hits sum_i r_i h_i(w_i T) / sum_i r_i, with r_i the server's reads.
With N equal nodes of size S, hashing gives each node 1/N of the keys; a node holding a key-hash
share f with memory S behaves like the whole keyspace with S/f (spatial sampling, Waldspurger et
al. ATC'17), so the cluster's hit ratio is the cluster curve at T = N*S.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np
from numpy.typing import NDArray

from hitcurve_worker.calibrate import curve_at

FloatArray = NDArray[np.float64]
MAX_NODES = 256


@dataclass
class ServerInput:
    key: str  # server id, for the record of inputs
    sizes_bytes: FloatArray
    hit_ratios: FloatArray
    current_bytes: float
    reads: float  # request weight: gets in the window
    measured: float | None = None
    band_low: FloatArray | None = None
    band_high: FloatArray | None = None


@dataclass
class ClusterResult:
    sizes_bytes: FloatArray
    hit_ratios: FloatArray
    band_low: FloatArray | None
    band_high: FloatArray | None
    current_bytes: float
    measured: float | None
    node_size_bytes: int | None
    node_counts: list[int]
    node_hit_ratios: list[float]
    used: list[str] = field(default_factory=list)
    skipped: dict[str, str] = field(default_factory=dict)

    def at(self, total_bytes: float) -> float:
        return float(curve_at(self.sizes_bytes, self.hit_ratios, total_bytes))

    def memory_for(self, target: float) -> float | None:
        """Smallest total memory reaching `target` on this curve, None when it never does."""
        xs = np.concatenate(([0.0], self.sizes_bytes))
        ys = np.concatenate(([0.0], self.hit_ratios))
        if target <= 0:
            return 0.0
        j = int(np.searchsorted(ys, target, side="left"))
        if j >= len(ys):
            return None
        y0, y1 = ys[j - 1], ys[j]
        return float(xs[j - 1] + (target - y0) / (y1 - y0) * (xs[j] - xs[j - 1])) if y1 > y0 else float(xs[j])


def combine(
    servers: list[ServerInput], node_size_bytes: int | None = None, points: int = 100
) -> ClusterResult:
    used = [s for s in servers if s.current_bytes > 0 and s.reads > 0 and len(s.sizes_bytes)]
    skipped = {
        s.key: ("no memory in use" if s.current_bytes <= 0 else "no reads" if s.reads <= 0 else "empty curve")
        for s in servers
        if s not in used
    }
    if not used:
        raise ValueError("no server with memory, reads and a curve")
    total_now = float(sum(s.current_bytes for s in used))
    reads = np.array([s.reads for s in used], dtype=np.float64)
    weights = reads / reads.sum()
    share = np.array([s.current_bytes / total_now for s in used])
    # The grid stops where the first server's curve ends, so nothing is extrapolated.
    t_max = min(float(s.sizes_bytes[-1]) / w for s, w in zip(used, share, strict=True))
    grid = np.linspace(t_max / points, t_max, points)
    hit = np.zeros(points)
    low = np.zeros(points)
    high = np.zeros(points)
    has_band = all(s.band_low is not None and s.band_high is not None for s in used)
    for s, w, sh in zip(used, weights, share, strict=True):
        q = grid * sh
        hit += w * curve_at(s.sizes_bytes, s.hit_ratios, q)
        if has_band:
            assert s.band_low is not None and s.band_high is not None
            low += w * curve_at(s.sizes_bytes, s.band_low, q)
            high += w * curve_at(s.sizes_bytes, s.band_high, q)
    measured_pairs = [(s.measured, s.reads) for s in used if s.measured is not None]
    measured = (
        (sum(m * r for m, r in measured_pairs) / sum(r for _, r in measured_pairs))
        if measured_pairs
        else None
    )
    node = int(node_size_bytes) if node_size_bytes else int(round(total_now / len(used)))
    n_max = max(1, min(MAX_NODES, int(math.floor(t_max / node)))) if node > 0 else 0
    counts = list(range(1, n_max + 1))
    node_hits = [float(curve_at(grid, hit, n * node)) for n in counts]
    return ClusterResult(
        sizes_bytes=grid,
        hit_ratios=np.clip(np.maximum.accumulate(hit), 0.0, 1.0),
        band_low=np.clip(np.maximum.accumulate(low), 0.0, 1.0) if has_band else None,
        band_high=np.clip(np.maximum.accumulate(high), 0.0, 1.0) if has_band else None,
        current_bytes=total_now,
        measured=measured,
        node_size_bytes=node if node > 0 else None,
        node_counts=counts,
        node_hit_ratios=node_hits,
        used=[s.key for s in used],
        skipped=skipped,
    )
