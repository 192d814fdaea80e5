#!/usr/bin/env python3
"""What memcached really holds at a given `-m`: pages, chunks and items per slab class.

For each -m (and memcached option set) a fresh memcached is filled with unique keys whose value
sizes follow a known, seeded mix, until it has set `--fill` times its limit in value bytes (so it
is full and has evicted for a while); then `stats`, `stats slabs` and `stats items` are read: per
class its chunk size, chunks per page, pages, used chunks and items, and overall total_malloced,
limit_maxbytes and hash_bytes. Printed beside the -m model's figures (hitcurve.rules.memlimit):
the pages the model says memcached holds at that -m and the -m it gives for what memcached held.

  .venv/bin/python bench/memlimit/measure.py --mem 8,16,32,64,128 [--mix web] [--opt -I 2m]
  [--binary .run/memcached/1.6.24/memcached] [--json out.json]

Sets are pipelined with noreply over one connection; the run is bounded by the fill (at most
--fill x the largest -m in value bytes).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "backend"))

from hitcurve.rules import memlimit  # noqa: E402

MIB = 1 << 20
# value-size mixes: (bytes, weight); "twitter": small values of Twitter's clusters (Yang, Yue,
# Rashmi, OSDI'20: most values below 1 KB), "web": web objects of 300-3,300 B, "wide": log-spread
# up to 200 KB (values of many classes, a few pages each at small -m)
MIXES = {
    "small": [(40, 0.3), (120, 0.3), (300, 0.25), (600, 0.15)],
    "web": [(300, 0.2), (700, 0.25), (1200, 0.25), (2000, 0.2), (3300, 0.1)],
    "wide": [(int(50 * 1.6**k), 1.0) for k in range(19)],  # 50 B .. ~225 KB
}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def command(sock: socket.socket, what: str) -> list[list[str]]:
    sock.sendall(what.encode() + b"\r\n")
    buf = b""
    while not buf.endswith(b"END\r\n"):
        chunk = sock.recv(1 << 16)
        if not chunk:
            raise RuntimeError("memcached closed the connection")
        buf += chunk
    return [line.split(" ")[1:] for line in buf.decode().splitlines() if line.startswith("STAT ")]


def start(binary: str, mem: int, opts: list[str]) -> tuple[subprocess.Popen, int]:
    port = free_port()
    cmd = [binary, "-l", "127.0.0.1", "-p", str(port), "-U", "0", "-m", str(mem), *opts]
    if os.geteuid() == 0:
        cmd += ["-u", "root"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(500):
        try:
            socket.create_connection(("127.0.0.1", port)).close()
            return proc, port
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(f"memcached exited: {proc.stderr.read().decode()}") from None
            time.sleep(0.02)
    raise RuntimeError("memcached did not start")


def fill(port: int, mix: list[tuple[int, float]], value_bytes: int, seed: int) -> int:
    """Unique keys (fixed length) with seeded value sizes until value_bytes have been set."""
    rng = random.Random(seed)
    sizes = [s for s, _ in mix]
    weights = [w for _, w in mix]
    blobs = {s: b"x" * s for s in sizes}
    sent, n = 0, 0
    with socket.create_connection(("127.0.0.1", port)) as sock:
        while sent < value_bytes:
            batch = []
            for s in rng.choices(sizes, weights, k=256):
                batch.append(b"set k%011d 0 0 %d noreply\r\n%s\r\n" % (n, s, blobs[s]))
                n += 1
                sent += s
            sock.sendall(b"".join(batch))
        command(sock, "stats")  # every set before it has been handled
    return n


def measure(binary: str, mem: int, opts: list[str], mix: str, fill_x: float, seed: int) -> dict:
    proc, port = start(binary, mem, opts)
    try:
        sets = fill(port, MIXES[mix], int(fill_x * mem * MIB), seed)
        time.sleep(0.5)
        with socket.create_connection(("127.0.0.1", port)) as sock:
            st = {k: v for k, v, *_ in command(sock, "stats")}
            slabs = command(sock, "stats slabs")
            items = command(sock, "stats items")
    finally:
        proc.kill()
        proc.wait()
    st |= {k: v for k, v, *_ in slabs if ":" not in k}
    classes: dict[int, dict] = {}
    for key, val, *_ in slabs:
        cid, _, field = key.partition(":")
        if field and cid.isdigit():
            classes.setdefault(int(cid), {})[field] = int(val)
    for key, val, *_ in items:
        _, cid, field = key.split(":", 2)
        if field in ("number", "evicted"):
            classes.setdefault(int(cid), {})["items_" + field] = int(val)
    rows = [
        {
            "class": cid,
            "chunk_size": c.get("chunk_size", 0),
            "per_page": c.get("chunks_per_page", 0),
            "pages": c.get("total_pages", 0),
            "used_chunks": c.get("used_chunks", 0),
            "free_chunks": c.get("free_chunks", 0),
            "items": c.get("items_number", 0),
            "evicted": c.get("items_evicted", 0),
        }
        for cid, c in sorted(classes.items())
        if c.get("total_pages", 0) or c.get("items_number", 0)
    ]
    return {
        "version": st.get("version"),
        "mem_mb": mem,
        "opts": opts,
        "mix": mix,
        "sets": sets,
        "limit_maxbytes": int(st["limit_maxbytes"]),
        "total_malloced": int(st["total_malloced"]),
        "hash_bytes": int(st["hash_bytes"]),
        "curr_items": int(st["curr_items"]),
        "evictions": int(st["evictions"]),
        "slab_global_page_pool": int(st.get("slab_global_page_pool", 0)),
        "classes": rows,
    }


def model_view(r: dict) -> dict:
    """The -m model on what memcached held: the pages it says this -m holds (pages_at_limit, from
    the classes memcached holds) and the -m it gives back for the pages memcached held (the curve's
    x of this memcached)."""
    classes = [memlimit.ClassNow(c["chunk_size"], c["items"], c["pages"]) for c in r["classes"]]
    pages = sum(c.pages for c in classes)
    return {
        "pages": pages,
        "pages_model": memlimit.pages_at_limit(r["mem_mb"] * MIB, classes),
        "limit_for_pages_mb": memlimit.limit_for_bytes(pages * MIB) // MIB,
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--mem", default="8,16,32,64,128", help="-m values (MiB), comma-separated")
    ap.add_argument("--mix", default="web", choices=sorted(MIXES))
    ap.add_argument("--opt", action="append", default=[], help="a memcached option, e.g. '-I 2m'")
    ap.add_argument("--binary", default="/usr/bin/memcached")
    ap.add_argument("--fill", type=float, default=2.0, help="value bytes set, x the limit")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", help="append the results (one JSON object a line) here")
    a = ap.parse_args()
    opts = [x for o in a.opt for x in o.split()]
    print(f"{a.binary} {' '.join(opts)}; mix {a.mix}; fill {a.fill:g} x -m")
    print(
        f"{'-m':>5} {'version':>8} {'classes':>7} {'pages':>6} {'malloced':>9} {'items':>9} "
        f"{'model pages':>11} {'model -m':>8} {'hash KiB':>8}"
    )
    for mem in (int(x) for x in a.mem.split(",")):
        r = measure(a.binary, mem, opts, a.mix, a.fill, a.seed)
        v = model_view(r)
        r["model"] = v
        print(
            f"{mem:>5} {r['version']:>8} {len(r['classes']):>7} {v['pages']:>6} "
            f"{r['total_malloced'] / MIB:>9.2f} {r['curr_items']:>9} {v['pages_model']:>11} "
            f"{v['limit_for_pages_mb']:>8} {r['hash_bytes'] // 1024:>8}"
        )
        for c in r["classes"]:
            print(
                f"      class {c['class']:>2} chunk {c['chunk_size']:>7} x{c['per_page']:>5}/page: "
                f"{c['pages']:>5} pages, {c['used_chunks']:>8} used, {c['free_chunks']:>6} free, "
                f"{c['items']:>8} items"
            )
        if a.json:
            with open(a.json, "a") as f:
                f.write(json.dumps(r) + "\n")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
