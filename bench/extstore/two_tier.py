"""The simulator's two-tier model of memcached's extstore against real memcached with extstore.

Real memcacheds at several (RAM, flash) points, each `-m RAM -o ext_path=FILE:FLASHm`, are driven
at the same time with the same request stream: hc-loadgen's look-aside client (get; on a miss,
set) on one connection with the same seed, whose read sequence does not depend on hits or misses.
The same stream (hc-loadgen --print-keys) goes through the simulator's `extstore` model at each
point. Phase 1 warms up, phase 2 (another seed, same distribution) is measured: memcached's hit
ratio is get_hits / cmd_get over phase 2, the model's is its hit ratio with phase 1 as warm-up.
Also printed: LRU and memcached's segmented LRU (mcslru) at the RAM size alone, what a RAM-only
model says of the same server.

    .venv/bin/python bench/extstore/two_tier.py [--binary /usr/bin/memcached] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import array
import json
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import hitcurve_sim

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "profiler-agent" / "tests" / "agent"))
from agent_harness import Memcached, loadgen_bin  # noqa: E402
from version_matrix import stats  # noqa: E402

MIB = 1 << 20
# memcached's item: 48 B struct + 8 B CAS + key + 1 + value + "\r\n"; the simulator charges 48 B
# plus the object's size, so the object's size is everything past the 48 B struct
ITEM_EXTRA = 8 + 1 + 2


def pages_by_kind(sl: dict[str, str], a: argparse.Namespace) -> dict[str, int]:
    """memcached's 1 MiB pages at the end: the headers' class (1), the classes under ext_item_size
    (never flushed) and the flushable ones (the automover takes these down to 2 pages each)."""
    out = {"header": 0, "small": 0, "flushable": 0}
    for k, v in sl.items():
        cls, _, field = k.partition(":")
        if field != "total_pages" or not cls.isdigit():
            continue
        chunk = int(sl[f"{cls}:chunk_size"])
        kind = "header" if cls == "1" else "small" if chunk < a.ext_item_size else "flushable"
        out[kind] += int(v)
    return out


def load_args(a: argparse.Namespace, seed: int, n: int) -> list[str]:
    return [
        "--dist", "zipf", "--alpha", str(a.alpha), "--keys", str(a.keys),
        "--min-value", str(a.min_value), "--value-size", str(a.value_size),
        "--conns", "1", "--requests", str(n), "--seed", str(seed), "--quiet", "--pipeline", str(a.pipeline),
    ]  # fmt: skip


def value_size(a: argparse.Namespace, ids: array.array) -> array.array:
    """hc-loadgen's value size per key (loadgen.c value_size_of), recomputed here."""
    M = (1 << 64) - 1

    def mix64(x: int) -> int:  # tracereader's tr_mix64 (splitmix64's finaliser)
        x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9 & M
        x = (x ^ (x >> 27)) * 0x94D049BB133111EB & M
        return x ^ (x >> 31)

    span = a.value_size - a.min_value + 1
    memo: dict[int, int] = {}
    out = array.array("I")
    for i in ids:
        v = memo.get(i)
        if v is None:
            v = memo[i] = a.min_value + mix64(i ^ 0x5A1E5) % span + len(f"k{i}") + ITEM_EXTRA
        out.append(v)
    return out


def stream(a: argparse.Namespace, seed: int, n: int) -> array.array:
    out = subprocess.run(
        [loadgen_bin(), "--print-keys", *load_args(a, seed, n)], check=True, capture_output=True, text=True
    ).stdout.split()
    if any(not t.isdigit() for t in out):
        raise SystemExit("the stream has updates or deletes: this bench replays reads only")
    return array.array("Q", map(int, out))


def drive(mcs: list[Memcached], a: argparse.Namespace, seed: int, n: int) -> list[dict]:
    """The same phase on every memcached at once, so their background threads see the same rate."""
    res: list[dict] = [{} for _ in mcs]

    def one(k: int) -> None:
        p = subprocess.run(
            [loadgen_bin(), "--server", mcs[k].addr, *load_args(a, seed, n)],
            check=True, capture_output=True, text=True, timeout=3600,
        )  # fmt: skip
        res[k] = json.loads(p.stdout.strip().splitlines()[-1]) if p.stdout.strip() else {}

    th = [threading.Thread(target=one, args=(k,)) for k in range(len(mcs))]
    for t in th:
        t.start()
    for t in th:
        t.join()
    return res


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--binary", default="/usr/bin/memcached")
    ap.add_argument("--points", default="32:256,16:256,64:256,32:128,32:1024", help="RAM:flash MiB, ...")
    ap.add_argument("--keys", type=int, default=1_000_000)
    ap.add_argument("--alpha", type=float, default=0.9)
    ap.add_argument("--min-value", type=int, default=100)
    ap.add_argument("--value-size", type=int, default=1500)
    ap.add_argument("--warmup", type=int, default=3_000_000)
    ap.add_argument("--measure", type=int, default=1_000_000)
    ap.add_argument("--pipeline", type=int, default=1, help="hc-loadgen --pipeline (1: request/response)")
    ap.add_argument("--ext-item-size", type=int, default=512, help="memcached's ext_item_size (its default)")
    ap.add_argument("--ext", default="", help="more ext options for memcached, e.g. ext_item_age=2")
    ap.add_argument("--params", default="", help="more extstore.* model parameters, k=v,...")
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    points = [tuple(int(x) for x in p.split(":")) for p in a.points.split(",")]

    t0 = time.time()
    with tempfile.TemporaryDirectory(prefix="hc-ext-", dir="/var/tmp") as d:
        mcs = []
        for ram, flash in points:
            opt = f"ext_path={d}/flash-{ram}-{flash}.dat:{flash}m,ext_item_size={a.ext_item_size}"
            opt += f",{a.ext}" if a.ext else ""
            mcs.append(Memcached(mem_mb=ram, binary=a.binary, extra=["-o", opt]))
        try:
            version = stats(mcs[0].port)["version"]
            drive(mcs, a, 11, a.warmup)
            before = [stats(m.port) for m in mcs]
            lg = drive(mcs, a, 12, a.measure)
            after = [stats(m.port) for m in mcs]
            slabs = [pages_by_kind(stats(m.port, b"stats slabs"), a) for m in mcs]
        finally:
            for m in mcs:
                m.stop()
    live_s = time.time() - t0

    keys = stream(a, 11, a.warmup)
    keys.extend(stream(a, 12, a.measure))
    sizes = value_size(a, keys)
    warm = a.warmup / len(keys)
    rows = []
    for (ram, flash), b, e, g, pg in zip(points, before, after, lg, slabs, strict=True):

        def delta(f: str, b: dict = b, e: dict = e) -> int:
            return int(e.get(f, 0)) - int(b.get(f, 0))

        real = delta("get_hits") / max(1, delta("cmd_get"))
        params = f"extstore.flash={flash * MIB},extstore.item_size={a.ext_item_size}" + (
            f",{a.params}" if a.params else ""
        )
        common = dict(object_sizes=sizes, unit="bytes", slab=True, warmup=warm, threads=1)
        model = hitcurve_sim.simulate(keys, ["extstore"], [ram * MIB], params=params, **common)[0]
        ram_only = {
            r["policy"]: r["hit_ratio"]
            for r in hitcurve_sim.simulate(keys, ["lru", "mcslru"], [ram * MIB], **common)
        }
        rows.append(
            {
                "ram_mib": ram,
                "flash_mib": flash,
                "memcached": real,
                "model": model["hit_ratio"],
                "error_pp": 100 * (model["hit_ratio"] - real),
                "lru_ram_only": ram_only["lru"],
                "mcslru_ram_only": ram_only["mcslru"],
                "loadgen_hit_ratio": g.get("hit_ratio"),
                "flash_hits": delta("get_extstore") - delta("miss_from_extstore"),
                "flash_miss": delta("miss_from_extstore"),
                "written": delta("extstore_objects_written"),
                "page_evictions": delta("extstore_page_evictions"),
                "compactions": delta("extstore_compact_rescues"),
                "evictions": delta("evictions"),
                "recaches": delta("recache_from_extstore"),
                "pages": pg,
                "slabs_moved": int(e.get("slabs_moved", 0)),
            }
        )
    # the product's answer pins the grid to the one point memcached measured (hitcurve.sizing.flash
    # TwoTier.offset): the first point plays today's server, the others are predicted
    offset = rows[0]["memcached"] - rows[0]["model"]
    for r in rows:
        r["pinned"] = min(1.0, max(0.0, r["model"] + offset))
        r["pinned_error_pp"] = 100 * (r["pinned"] - r["memcached"])
    print(f"memcached {version} ({a.binary}), zipf {a.alpha} over {a.keys:,} keys,", end=" ")
    print(f"values {a.min_value}-{a.value_size} B, hc-loadgen --pipeline {a.pipeline},")
    print(f"{a.warmup:,} warm-up + {a.measure:,} measured requests; live phase {live_s:.0f} s")
    cols = [
        ("RAM MiB", lambda r: f"{r['ram_mib']}"),
        ("flash MiB", lambda r: f"{r['flash_mib']}"),
        ("memcached", lambda r: f"{r['memcached']:.4f}"),
        ("model", lambda r: f"{r['model']:.4f}"),
        ("error pp", lambda r: f"{r['error_pp']:+.2f}"),
        ("pinned at the first point", lambda r: f"{r['pinned']:.4f}"),
        ("its error pp", lambda r: f"{r['pinned_error_pp']:+.2f}"),
        ("LRU, RAM only", lambda r: f"{r['lru_ram_only']:.4f}"),
        ("mcslru, RAM only", lambda r: f"{r['mcslru_ram_only']:.4f}"),
        ("flash hits", lambda r: f"{r['flash_hits']:,}"),
        ("flash misses", lambda r: f"{r['flash_miss']:,}"),
        ("written", lambda r: f"{r['written']:,}"),
        ("page evictions", lambda r: f"{r['page_evictions']:,}"),
        ("compaction rescues", lambda r: f"{r['compactions']:,}"),
        ("evictions", lambda r: f"{r['evictions']:,}"),
        (
            "pages header/small/flushable",
            lambda r: "/".join(str(r["pages"][k]) for k in ("header", "small", "flushable")),
        ),
        ("slabs moved", lambda r: f"{r['slabs_moved']:,}"),
    ]
    print("| " + " | ".join(c for c, _ in cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(f(r) for _, f in cols) + " |")
    if a.out:
        a.out.write_text(
            json.dumps({"version": version, "args": vars(a) | {"out": str(a.out)}, "rows": rows}, indent=1)
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
