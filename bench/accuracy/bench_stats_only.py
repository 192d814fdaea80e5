#!/usr/bin/env python3
"""How far a stats-only curve is from real memcached at other sizes: the band width
of `basis: stats_only` answers comes from here (hitcurve.rules.band.STATS_ONLY_PER_DOUBLING_PP).

For each workload: a memcached of size M started with `-W` (watch refused, as on ElastiCache
Serverless), the agent attached (it falls back to stats-only mode and fits its Che + Zipf model
to `stats`), hc-loadgen's seeded warm-up and measured phases; then the same seeded workload
against fresh memcacheds of M/4, M/2, 2M and 4M, their real hit ratios from `stats`.
Predictions are what the product answers: each fitted window's model through the worker's own
conversion (hitcurve_worker.pipeline.compute_stats_only), read at each size with the API's
interpolation (hitcurve.rules.curves.fit_stored, PCHIP), read-weighted over the measured phase's windows.

Printed per size: measured, stats-only prediction, |error| pp, |error| per doubling from M; then
the RMS of the per-doubling errors (the band constant) and the coverage of the 90 % band that
constant gives, next to the watch-based curve's figures (profiler-agent/loadgen/README.md).

Run: .venv/bin/python bench/accuracy/bench_stats_only.py  (about 2-3 minutes per workload)
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_accuracy import (  # noqa: E402
    AGENT,
    LOADGEN,
    MIB,
    WORKLOADS,
    Memcached,
    _ts,
    memcached_binary,
    run_phases,
)

# The watch-based curve (corrected, what the worker stores), |error| pp at M/4, M/2, 2M, 4M:
# profiler-agent/loadgen/README.md, quiet run of 2026-11-22 (M = 32 MiB, same workloads).
WATCH_REFERENCE = {
    "zipf0.9": (0.27, 0.05, 0.10, 1.47),
    "zipf1.1": (0.11, 0.06, 0.08, 0.08),
    "scan-mix": (0.46, 0.05, 0.41, 2.83),
}


def window_prediction(snap: dict, sizes: list[float]) -> list[float] | None:
    """What the worker and the API make of one stats-only window, read at `sizes` (bytes)."""
    from hitcurve.rules.curves import fit_stored
    from hitcurve_worker.pipeline import StatsModel, Window, compute_stats_only

    sm = snap.get("stats_model") or {}
    if not sm.get("fitted"):
        return None
    mem = snap.get("memory") or {}
    memory = float(mem.get("total_malloced") or snap["server"]["limit_maxbytes"])
    model = StatsModel(
        [p[0] for p in sm["points"]], [p[1] for p in sm["points"]], float(sm["current_items"]), memory
    )
    at = datetime.now(UTC)
    w = Window(uuid.uuid4(), uuid.uuid4(), uuid.uuid4(), at, at, snap["measured"]["hit_ratio"])
    rows = compute_stats_only(w, model, None, [], at)
    f = fit_stored(rows.server_curve["sizes_bytes"], rows.server_curve["hit_ratio_calibrated"])
    assert f is not None
    return [float(f(s)) for s in sizes]


def bench_workload(
    name: str, wl: dict, mem: int, warm: int, measured: int, factors: list[float], tmp: Path, ghost: float
) -> dict:
    mc = Memcached(memcached_binary(), mem, "-W")  # watch answers CLIENT_ERROR, as where a site disables it
    snapdir = tmp / f"snaps-{name}"
    shutil.rmtree(snapdir, ignore_errors=True)
    log_path = tmp / f"agent-{name}.log"
    with open(log_path, "w") as log:
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
                "--spool-dir",
                str(tmp / f"spool-{name}"),
                "--ghost-factor",
                str(ghost),
            ],
            stdout=log,
            stderr=log,
        )
        time.sleep(0.5)
        measured_m, t0, t1 = run_phases(mc.port, wl, warm, measured)
        time.sleep(4)
        agent.send_signal(signal.SIGTERM)
        agent.wait(60)
    mc.stop()
    assert "watch_refused" in log_path.read_text(), "the agent did not fall back to stats-only mode"
    snaps = [json.loads(p.read_text()) for p in sorted(snapdir.glob("snapshot-*.json"))]
    inside = [
        s
        for s in snaps
        if _ts(s["window"]["end"]) > t0 + 1
        and _ts(s["window"]["start"]) < t1 - 1
        and s["measured"]["hit_ratio"] is not None
    ]
    all_f = sorted([1.0, *factors])
    sizes = [f * mem * MIB for f in all_f]
    acc = [0.0] * len(all_f)
    weight = 0.0
    states: dict[str, int] = {}
    alphas = []
    for s in inside:
        states[s["stats_model"]["state"]] = states.get(s["stats_model"]["state"], 0) + 1
        p = window_prediction(s, sizes)
        if p is None:
            continue
        alphas.append(s["stats_model"]["alpha"])
        wgt = float(s["measured"]["cmd_get"]) or 1.0
        acc = [a + wgt * v for a, v in zip(acc, p, strict=True)]
        weight += wgt
    if weight == 0:
        raise RuntimeError(f"{name}: no fitted stats-only window in the measured phase ({states})")
    pred = [a / weight for a in acc]
    rows = []
    for i, f in enumerate(all_f):
        if f == 1.0:
            hr = measured_m
        else:
            mcf = Memcached(memcached_binary(), int(mem * f))
            hr, _, _ = run_phases(mcf.port, wl, warm, measured)
            mcf.stop()
        rows.append({"factor": f, "mem_mb": int(mem * f), "measured": hr, "stats_only": pred[i]})
    return {
        "workload": name,
        "windows": len(inside),
        "fitted": len(alphas),
        "states": states,
        "alpha": (min(alphas), max(alphas)),
        "rows": rows,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mem", type=int, default=32, help="M in MiB (default 32)")
    ap.add_argument("--warm", type=int, default=600000)
    ap.add_argument("--measured", type=int, default=600000)
    ap.add_argument("--workloads", default="zipf0.9,zipf1.1,scan-mix")
    ap.add_argument("--ghost-factor", type=float, default=6, help="the model's reach, x today's items")
    ap.add_argument("--json", help="also write the results here")
    a = ap.parse_args()
    for b in (AGENT, LOADGEN):
        if not b.exists():
            print(f"missing {b}: make build", file=sys.stderr)
            return 2
    from hitcurve.rules import band

    factors = [0.25, 0.5, 2.0, 4.0]
    results = []
    per_doubling: list[float] = []
    with tempfile.TemporaryDirectory() as td:
        for name in a.workloads.split(","):
            t = time.time()
            r = bench_workload(
                name, WORKLOADS[name], a.mem, a.warm, a.measured, factors, Path(td), a.ghost_factor
            )
            r["seconds"] = round(time.time() - t, 1)
            results.append(r)
            ref = WATCH_REFERENCE.get(name)
            print(
                f"\n== {name}: M = {a.mem} MiB, {r['fitted']} of {r['windows']} windows fitted "
                f"(states {r['states']}), alpha {r['alpha'][0]:.3f}-{r['alpha'][1]:.3f}, {r['seconds']} s"
            )
            print(
                f"{'size':>6} {'MiB':>4} {'measured':>8} | {'stats-only':>10} {'|err|':>6} "
                f"{'/doubling':>9} | watch-based |err| (README)"
            )
            k = 0
            for row in r["rows"]:
                err = abs(row["stats_only"] - row["measured"]) * 100
                d = abs(math.log2(row["factor"]))
                if d > 0:
                    per_doubling.append(err / d)
                ref_txt = ""
                if ref and row["factor"] != 1.0:
                    ref_txt = f"{ref[k]:.2f}"
                    k += 1
                print(
                    f"{row['factor']:>5}M {row['mem_mb']:>4} {row['measured']:>8.4f} | "
                    f"{row['stats_only']:>10.4f} {err:>6.2f} {(err / d if d else 0):>9.2f} | {ref_txt}"
                )
            sys.stdout.flush()
    rms = math.sqrt(sum(v * v for v in per_doubling) / len(per_doubling))
    inside = 0
    total = 0
    for r in results:
        for row in r["rows"]:
            if row["factor"] == 1.0:
                continue
            d = abs(math.log2(row["factor"]))
            w = band.Z * math.sqrt(band.PRIOR_DRIFT_PP**2 + (band.STATS_ONLY_PER_DOUBLING_PP * d) ** 2)
            total += 1
            inside += abs(row["stats_only"] - row["measured"]) * 100 <= w
    print(
        f"\nstats-only |error| per doubling from M: RMS {rms:.2f} pp, max {max(per_doubling):.2f} pp "
        f"(watch-based curve: band.PER_DOUBLING_PP = {band.PER_DOUBLING_PP} pp)"
    )
    print(
        f"band with STATS_ONLY_PER_DOUBLING_PP = {band.STATS_ONLY_PER_DOUBLING_PP} pp at "
        f"{band.CONFIDENCE:.0%}: {inside} of {total} measured sizes inside"
    )
    if a.json:
        Path(a.json).write_text(json.dumps({"results": results, "rms_per_doubling_pp": rms}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
