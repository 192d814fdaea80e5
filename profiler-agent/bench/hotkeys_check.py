#!/usr/bin/env python3
"""Hot keys of a `linepath --dump` against the exact counts of the recorded stream.

Counts every `item_get` line of STREAM by key (reads, found or not) and, for the by-bytes
list, reads x the key's last logged size; keys are named as the agent hashes them (XXH3-64 of
the key bytes, libxxhash through ctypes). For each dump: recall of the exact top N, and the
reported count against the exact one (median and worst relative error over the exact top N it
reports).

usage: hotkeys_check.py STREAM.watch DUMP.json [DUMP2.json ...] [--top 100]
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import statistics
import urllib.parse
from collections import Counter


def xxh3():
    lib = ctypes.CDLL(ctypes.util.find_library("xxhash") or "libxxhash.so.0")
    f = lib.XXH3_64bits
    f.argtypes = (ctypes.c_char_p, ctypes.c_size_t)
    f.restype = ctypes.c_uint64
    return lambda b: f"xxh3:{f(b, len(b)):016x}"


def exact(path: str):
    reads: Counter[bytes] = Counter()
    size: dict[bytes, int] = {}
    with open(path, "rb") as f:
        for line in f:
            if b" key=" not in line:
                continue
            key = line.split(b" key=", 1)[1].split(b" ", 1)[0]
            sz = line.rsplit(b" size=", 1)
            n = int(sz[1]) if len(sz) == 2 and sz[1].strip().isdigit() else 0
            if n:
                size[key] = n
            if b"type=item_get" in line:
                reads[key] += 1
    return reads, size


def check(name: str, got: list[dict], truth: Counter, h, top: int, field: str) -> None:
    want = truth.most_common(top)
    byname = {h(urllib.parse.unquote_to_bytes(k)): v for k, v in want}
    rep = {g["key"]: g[field] for g in got}
    inter = [k for k in byname if k in rep]
    errs = [abs(rep[k] - byname[k]) / byname[k] for k in inter]
    print(
        f"{name}: {field}: recall of the exact top {top}: {len(inter)}/{top}; relative count error "
        f"median {statistics.median(errs) if errs else float('nan'):.4f}, "
        f"max {max(errs) if errs else float('nan'):.4f}"
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("stream")
    ap.add_argument("dumps", nargs="+")
    ap.add_argument("--top", type=int, default=100)
    a = ap.parse_args()
    h = xxh3()
    reads, size = exact(a.stream)
    by_bytes = Counter({k: c * size.get(k, 1) for k, c in reads.items()})
    for d in a.dumps:
        with open(d) as fh:
            doc = json.load(fh)
        top = min(a.top, len(doc["hot_keys"]))
        check(d, doc["hot_keys"], reads, h, top, "requests")
        rows = [{"key": g["key"], "bytes": g["requests"] * g["bytes"]} for g in doc["hot_keys_by_bytes"]]
        check(d, rows, by_bytes, h, min(a.top, len(rows)), "bytes")


if __name__ == "__main__":
    main()
