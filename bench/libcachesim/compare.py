"""Hitcurve's simulator side by side with libCacheSim (PyPI `libcachesim`, pinned in
requirements.lock here), in one run: every policy both implement, on the shared traces at 5
cache sizes each (log-spaced from 2 % of the trace's distinct keys, but at least 100 objects,
to 40 %; objects, unit sizes). libCacheSim's W-TinyLFU caches nothing below 100 objects
(its 1 % window rounds to 0), hence the floor.

Hit ratios are compared per (trace, policy, size); speed is end to end in wall time:
Hitcurve = one `bin/hitcurve-sim` process per (trace, policy) with the 5 sizes on one thread,
including decompressing and parsing the original trace; libCacheSim = one TraceReader over
its binary oracleGeneral trace (prepared once, not timed) plus `process_trace` per size,
also one thread. Run with bench/libcachesim/run.sh (installs the pinned libCacheSim).
"""

import argparse
import gzip
import json
import lzma
import os
import subprocess
import sys
import tempfile
import time

import libcachesim as lcs
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM = os.path.join(ROOT, "bin", "hitcurve-sim")
LOW, HIGH, NSIZES = 0.02, 0.4, 5


def sizes_for(distinct):
    lo = max(100, int(LOW * distinct))
    hi = max(lo + 4, int(HIGH * distinct))
    return sorted({int(round(lo * (hi / lo) ** (i / (NSIZES - 1)))) for i in range(NSIZES)})


TRACES = [
    ("arc-OLTP.lis.zst", "arc"),
    ("arc-P3.lis.zst", "arc"),
    ("cache2k-web07.trace.xz", "cache2k"),
    ("cache2k-web12.trace.xz", "cache2k"),
    ("lirs-2_pools.trace.gz", "lirs"),
    ("lirs-cpp.trace.gz", "lirs"),
    ("lirs-cs.trace.gz", "lirs"),
    ("lirs-gli.trace.gz", "lirs"),
    ("lirs-loop.trace.gz", "lirs"),
    ("lirs-multi1.trace.gz", "lirs"),
    ("lirs-multi2.trace.gz", "lirs"),
    ("lirs-multi3.trace.gz", "lirs"),
    ("lirs-ps.trace.gz", "lirs"),
    ("lirs-scan.trace.gz", "lirs"),
    ("lirs-sprite.trace.gz", "lirs"),
    ("lirs-zigzag.trace.gz", "lirs"),
]

# Hitcurve name -> (libCacheSim constructor, Hitcurve --param matching its parameters).
# Parameters are libCacheSim's defaults; where ours differ by default they are set here
# (simulator/README.md, "libCacheSim comparison", lists every difference).
SHARED = {
    "lru": (lambda n: lcs.LRU(n), None),
    "fifo": (lambda n: lcs.FIFO(n), None),
    "clock": (lambda n: lcs.Clock(n), None),
    "gclock": (lambda n: lcs.Clock(n, n_bit_counter=2), "gclock.k=3"),
    "arc": (lambda n: lcs.ARC(n), None),
    "s3fifo": (lambda n: lcs.S3FIFO(n), None),
    "clockpro": (lambda n: lcs.ClockPro(n), None),
    "sieve": (lambda n: lcs.Sieve(n), None),
    "twoq": (lambda n: lcs.TwoQ(n), None),
    "lfu": (lambda n: lcs.LFU(n), None),
    "gdsf": (lambda n: lcs.GDSF(n), None),
    "opt": (lambda n: lcs.Belady(n), None),
    "lirs": (lambda n: lcs.LIRS(n), None),
    "wtinylfu": (lambda n: lcs.WTinyLFU(n), None),
    "lhd": (lambda n: lcs.LHD(n), None),
}


def read_keys(path, fmt):
    """The trace's integer keys, decoded exactly as tracereader/src/fmt_*.c do."""
    if fmt == "cache2k":
        with lzma.open(path) as f:
            return np.frombuffer(f.read(), dtype=">i4").astype(np.int64)
    if fmt == "lirs":
        with gzip.open(path, "rt") as f:
            vals = [int(x) for x in (ln.strip() for ln in f) if x and x != "*"]
        return np.array(vals, dtype=np.int64)
    text = subprocess.run(["zstd", "-dc", path], check=True, capture_output=True).stdout
    starts, counts = [], []
    for ln in text.split(b"\n"):
        f = ln.split()
        if len(f) >= 2:
            starts.append(int(f[0]))
            counts.append(int(f[1]))
    starts = np.array(starts, dtype=np.int64)
    counts = np.array(counts, dtype=np.int64)
    # start, start+1, ..., start+n-1 for every line
    offs = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    return np.repeat(starts, counts) + offs


def write_oracle(keys, path):
    """libCacheSim's oracleGeneral binary: <uint32 time, uint64 id, uint32 size, int64 next>;
    next = the position of the key's next request (Belady needs it), INT64_MAX if none."""
    n = len(keys)
    _, inv = np.unique(keys, return_inverse=True)
    nxt = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    # next access for every request: sort by (key, time), link neighbours with the same key
    order = np.lexsort((np.arange(n), inv))  # grouped by key, in time order
    same = inv[order][1:] == inv[order][:-1]
    nxt[order[:-1][same]] = order[1:][same]
    rec = np.zeros(n, dtype=np.dtype([("t", "<u4"), ("id", "<u8"), ("sz", "<u4"), ("nx", "<i8")]))
    rec["t"] = np.arange(n, dtype=np.uint32)
    rec["id"] = inv.astype(np.uint64) + 1
    rec["sz"] = 1
    rec["nx"] = nxt
    rec.tofile(path)
    return int(inv.max() + 1) if n else 0


def run_ours(path, fmt, policy, sizes, param, max_requests):
    cmd = [
        SIM,
        "--policy",
        policy,
        "--format",
        fmt,
        "--threads",
        "1",
        "--sizes",
        ",".join(map(str, sizes)),
        path,
    ]
    if param:
        cmd[1:1] = ["--param", param]
    if max_requests:
        cmd[1:1] = ["--max-requests", str(max_requests)]
    t0 = time.perf_counter()
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    wall = time.perf_counter() - t0
    res = json.loads(out)
    return {r["size"]: r["hit_ratio"] for r in res["results"]}, wall, res["trace"]["requests"]


def run_lcs(binpath, make, sizes):
    out, wall = {}, 0.0
    for s in sizes:
        t0 = time.perf_counter()
        reader = lcs.TraceReader(binpath, lcs.TraceType.ORACLE_GENERAL_TRACE)
        miss, _ = make(s).process_trace(reader)
        wall += time.perf_counter() - t0
        out[s] = 1.0 - miss
    return out, wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument(
        "--traces-dir",
        default=os.environ.get("HITCURVE_TRACES_DIR", os.path.join(ROOT, "..", "shared", "traces")),
    )
    ap.add_argument("--policies", default=",".join(SHARED))
    ap.add_argument("--traces", default="", help="comma-separated substrings to select traces")
    ap.add_argument(
        "--max-requests",
        type=int,
        default=1_000_000,
        help="the first N requests of each trace (arc-P3 and cache2k are 2-4x longer; 0 = all)",
    )
    ap.add_argument(
        "--grid",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="also time the 20 policies x 20 sizes x 1M requests grid",
    )
    args = ap.parse_args()
    pols = [p for p in args.policies.split(",") if p]
    sel = [s for s in args.traces.split(",") if s]
    traces = [t for t in TRACES if not sel or any(s in t[0] for s in sel)]
    print(
        f"libcachesim {getattr(lcs, '__version__', '?')} vs {SIM}; {NSIZES} sizes from "
        f"max(100, {LOW} x distinct keys) to {HIGH} x distinct, unit sizes, 1 thread each; "
        f"machine: {os.cpu_count()} CPUs, load {os.getloadavg()[0]:.1f}"
    )
    mlrows = []
    print(f"{'trace':24} {'policy':9} {'size':>7} {'ours':>6} {'lcs':>6} {'d_pp':>6}")
    tot = {p: [0.0, 0.0, 0, 0.0] for p in pols}  # ours wall, lcs wall, requests simulated, max |d|
    with tempfile.TemporaryDirectory() as tmp:
        for fname, fmt in traces:
            path = os.path.join(args.traces_dir, fname)
            keys = read_keys(path, fmt)
            if args.max_requests:
                keys = keys[: args.max_requests]
            binpath = os.path.join(tmp, fname + ".oracleGeneral")
            distinct = write_oracle(keys, binpath)
            sizes = sizes_for(distinct)
            mlc, _, _ = run_ours(path, fmt, "mlclock", sizes, None, args.max_requests)
            clk, _, _ = run_ours(path, fmt, "clock", sizes, None, args.max_requests)
            mlrows.append((fname, [(s, clk[s], mlc[s]) for s in sizes]))
            for p in pols:
                make, param = SHARED[p]
                ours, w_ours, nreq = run_ours(path, fmt, p, sizes, param, args.max_requests)
                if nreq != len(keys):
                    sys.exit(f"{fname}: hitcurve-sim read {nreq} requests, this script {len(keys)}")
                theirs, w_lcs = run_lcs(binpath, make, sizes)
                t = tot[p]
                t[0] += w_ours
                t[1] += w_lcs
                t[2] += len(keys) * len(sizes)
                for s in sizes:
                    d = (ours[s] - theirs[s]) * 100
                    t[3] = max(t[3], abs(d))
                    flag = "  <-- > 0.5 pp" if abs(d) > 0.5 else ""
                    print(f"{fname:24} {p:9} {s:>7} {ours[s]:6.4f} {theirs[s]:6.4f} {d:+6.2f}{flag}")
                sys.stdout.flush()
    print()
    print(
        f"{'policy':9} {'max|d| pp':>9} {'ours s':>8} {'lcs s':>8} {'ours Mreq/s':>11} "
        f"{'lcs Mreq/s':>10} {'speed-up':>8}"
    )
    for p in pols:
        w_o, w_l, n, md = tot[p]
        print(
            f"{p:9} {md:9.2f} {w_o:8.2f} {w_l:8.2f} {n / w_o / 1e6:11.2f} "
            f"{n / w_l / 1e6:10.2f} {w_l / w_o:7.1f}x"
        )
    so = sum(t[0] for t in tot.values())
    sl = sum(t[1] for t in tot.values())
    print(f"{'all':9} {'':9} {so:8.2f} {sl:8.2f} {'':11} {'':10} {sl / so:7.1f}x")
    print("(reference: >= 3x on every shared policy; hit ratios within 0.5 pp where definitions match,")
    print(" exceptions explained in simulator/README.md, 'libCacheSim comparison')")
    print()
    print("ML-CLOCK vs CLOCK (Hitcurve only; hit ratio, difference in pp)")
    wins = losses = total = 0
    for fname, rows in mlrows:
        cells = "  ".join(f"{s}: {c:.4f}->{m:.4f} ({(m - c) * 100:+.2f})" for s, c, m in rows)
        print(f"  {fname:24} {cells}")
        for _, c, m in rows:
            total += 1
            wins += m > c + 0.001
            losses += m < c - 0.001
    print(f"  ML-CLOCK better than CLOCK by > 0.1 pp at {wins}, worse at {losses}, of {total} points")
    if args.grid:
        grid(args.traces_dir)


def grid(traces_dir):
    """20 policies x 20 sizes x the first 1M requests of arc-P3, all CPUs, end to end."""
    path = os.path.join(traces_dir, "arc-P3.lis.zst")
    sizes = ",".join(str(int(2000 * 1.3**i)) for i in range(20))
    t0 = time.perf_counter()
    out = subprocess.run(
        [SIM, "--policy", "all", "--format", "arc", "--max-requests", "1000000", "--sizes", sizes, path],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    wall = time.perf_counter() - t0
    res = json.loads(out)["results"]
    cpu = sum(r["cpu_seconds"] for r in res)
    npol = len({r["policy"] for r in res})
    print()
    print(
        f"grid: {npol} policies x 20 sizes (2000..{sizes.rsplit(',', 1)[1]} objects) x 1M requests "
        f"of arc-P3: wall {wall:.1f} s, simulation CPU {cpu:.1f} s over {os.cpu_count()} CPUs "
        f"(load average {os.getloadavg()[0]:.1f}); reference: <= 30 s on this 2-core machine"
    )


if __name__ == "__main__":
    main()
