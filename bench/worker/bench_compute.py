"""The worker's curve mathematics alone: CPU per `pipeline.compute` on
realistic inputs, no database, no Celery.

Each input is a snapshot as the drain hands it to `compute`: 20-40 slab classes x 100 points
(`hitcurve_testing.snapshots.synthetic_classes`, converted as the worker reads its rows,
`merge.classes_from_rows`), servers of 64 MiB-4 GiB, concave and noisy curves, the agent's ghost
reach and filters, a measured hit ratio near the model's (none for a few), the previous window's
calibrated curve, up to 60 accuracy errors, a policy correction for most (with the ghost view
above today's memory for half of those) and the agent's TTL-aware merged curve for some. A few
stats-only windows (`compute_stats_only`) are timed apart.

`inputs(seed)` is also what the fifth pass's golden comparison ran on (the outputs before and after
each change compared for a few hundred seeds, outside the repository).

Usage: .venv/bin/python bench/worker/bench_compute.py [--inputs 60] [--rounds 5] [--classes N] [--profile]
"""

from __future__ import annotations

import argparse
import cProfile
import os
import pstats
import random
import time
import uuid
from datetime import UTC, datetime, timedelta

import numpy as np

from hitcurve_testing.snapshots import synthetic_classes
from hitcurve_worker import pipeline
from hitcurve_worker.merge import classes_from_rows, merge, row_from_protocol
from hitcurve_worker.policy_correction import FACTORS, Correction

AT = datetime(2026, 11, 27, 4, 0, tzinfo=UTC)
PAGES = (64, 256, 1024, 4096)


def _correction(rnd: random.Random, current: float, items: float) -> Correction:
    """A stored correction as correction_tasks writes it: lru and mcslru at FACTORS x today's
    memory (mcslru a few pp above lru below today), the ghost view above today for half of them;
    now and then computed for a smaller server (not applied) or another reference (no lift)."""
    ref = current * rnd.choice((1.0, 1.0, 1.0, 1.05, 1.5, 0.5))
    f = np.asarray(FACTORS)
    lru = 0.9 * (1 - (1 + 2 * f) ** -1.2)
    policy = np.minimum(lru + rnd.uniform(0.0, 0.04) * np.exp(-f), 1.0)
    ghost = policy - np.where(f > 1, rnd.uniform(0, 0.02) * (f - 1), 0.0) if rnd.random() < 0.5 else None
    return Correction(f * ref, lru, policy, 50_000, 90_000, 0.01, ref, items, ghost_view=ghost)


def inputs(seed: int, classes: int | None = None) -> pipeline.Inputs:
    """One varied, realistic snapshot's inputs (seeded); `classes`: that many, else 20-40."""
    rnd = random.Random(seed)
    n = rnd.randint(20, 40) if classes is None else classes
    pages = rnd.choice(PAGES)
    protocol = synthetic_classes(n, pages, seed=seed, concave=rnd.random() < 0.3)
    if rnd.random() < 0.8:  # the agent reports its ghost (older agents do not)
        for c in protocol:
            c["curve"]["ghost_reach_items"] = c["curve"]["current_items"] * rnd.uniform(1.5, 2.0)
            c["curve"]["ghost_filters"] = rnd.choice((9, 33))
    if rnd.random() < 0.1:  # an idle class: no reads, or no items
        protocol[rnd.randrange(n)]["requests"] = 0
    classes = classes_from_rows([row_from_protocol(c) for c in protocol])
    res = merge(classes)
    kind = rnd.random()
    measured: float | None
    if kind < 0.08:
        measured = None
    elif kind < 0.13:
        measured = min(1.0, float(res.proportional.max()) + 0.02)  # above the model's maximum
    elif kind < 0.16:
        measured = res.model_at_current * rnd.uniform(0.0, 0.1)  # far below: the rescaling clamped
    else:
        measured = res.model_at_current * rnd.uniform(0.85, 1.12)
    start = AT - timedelta(minutes=1 + seed % 7)
    window = pipeline.Window(
        uuid.UUID(int=1),
        uuid.UUID(int=2),
        uuid.UUID(int=seed + 10),
        start,
        start + timedelta(seconds=60),
        measured,
        rnd.choice((None, 500, 1_200_000, 3_000_000)),
    )
    previous = None
    if rnd.random() < 0.85:
        scale = rnd.uniform(0.9, 1.1)
        ys = np.maximum.accumulate(np.clip(res.proportional * rnd.uniform(0.95, 1.05), 0, 1))
        previous = pipeline.Previous(
            uuid.UUID(int=seed + 99), (res.memory_bytes * scale).tolist(), ys.tolist()
        )
    history = [rnd.gauss(0, 1.0) for _ in range(rnd.choice((0, 3, 20, 60, 80)))]
    inp = pipeline.Inputs(window, classes, previous=previous, history_pp=history)
    if rnd.random() < 0.7:
        items = float(sum(c.current_items for c in classes))
        inp.correction = _correction(rnd, float(res.current_bytes), items)
    if rnd.random() < 0.2:  # the window's traffic carries TTLs: the agent's merged SHARDS++ curve
        top = 2.0 * res.current_bytes
        xs = np.linspace(top / 100, top, 100).round()
        ys = np.round(rnd.uniform(0.7, 0.95) * (1 - np.exp(-xs / (rnd.uniform(0.05, 0.5) * top))), 6)
        inp.ttl_curve = pipeline.TtlCurve(xs.tolist(), ys.tolist())
    return inp


def stats_only(
    seed: int,
) -> tuple[pipeline.Window, pipeline.StatsModel, pipeline.Previous | None, list[float]]:
    """A stats-only window's arguments (the agent's Che + Zipf model, 100 points over 5x items)."""
    rnd = random.Random(seed)
    items = rnd.randint(10_000, 2_000_000)
    h = rnd.uniform(0.5, 0.95)
    top = min(0.999, h + 0.15)
    s_ = items * (top - h) / h
    xs = [5 * items * (i + 1) / 100 for i in range(100)]
    ys = [round(top * (1 - 1 / (1 + x / s_)), 6) for x in xs]
    memory = float(rnd.choice(PAGES) << 20)
    w = pipeline.Window(uuid.UUID(int=1), uuid.UUID(int=3), uuid.UUID(int=seed), AT, AT, h, 1_000_000)
    prev = (
        pipeline.Previous(uuid.UUID(int=seed + 1), [x * memory / items for x in xs], ys) if seed % 3 else None
    )
    return (
        w,
        pipeline.StatsModel(xs, ys, float(items), memory),
        prev,
        [rnd.gauss(0, 1) for _ in range(seed % 70)],
    )


def run(all_inputs: list[pipeline.Inputs], rounds: int) -> list[float]:
    """CPU ms per compute, per round (each round computes every input once)."""
    out = []
    for _ in range(rounds):
        c0 = time.process_time()
        for inp in all_inputs:
            pipeline.compute(inp, AT)
        out.append((time.process_time() - c0) / len(all_inputs) * 1e3)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--inputs", type=int, default=60)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--classes", type=int, help="slab classes per snapshot (default: 20-40)")
    ap.add_argument("--profile", action="store_true", help="cProfile one round instead of timing")
    a = ap.parse_args()
    all_inputs = [inputs(s, a.classes) for s in range(a.inputs)]
    classes = sum(len(i.classes) for i in all_inputs) / len(all_inputs)
    print(f"{a.inputs} inputs, {classes:.1f} classes each on average; load average {os.getloadavg()[0]:.2f}")
    if a.profile:
        prof = cProfile.Profile()
        prof.enable()
        run(all_inputs, 1)
        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(30)
        return
    run(all_inputs, 1)  # warm caches and imports
    per = run(all_inputs, a.rounds)
    print("compute, CPU ms per snapshot by round: " + ", ".join(f"{v:.3f}" for v in per))
    print(f"median {sorted(per)[len(per) // 2]:.3f} ms")
    so = [stats_only(s) for s in range(a.inputs)]
    c0 = time.process_time()
    for _ in range(a.rounds):
        for w, m, p, h in so:
            pipeline.compute_stats_only(w, m, p, h, AT)
    per_window = (time.process_time() - c0) / (a.rounds * len(so)) * 1e3
    print(f"compute_stats_only, CPU ms per window: {per_window:.3f}")
    print(f"load average {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
