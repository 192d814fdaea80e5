"""Synthetic but protocol-correct agent uploads (docs/agent-protocol.md), for tests, the e2e
seed and the benchmarks. Nothing here is used by the services.

`make_snapshot`: a few slab classes, each with a concave curve h(x) = h_max * (1 - exp(-x / s))
over (0, 2N] items (ghost factor 2, as the agent does). `synthetic_snapshot`: many classes
sharing a page budget with Zipf-LRU-shaped, optionally noisy curves (the worker's merge load).
Both wrap their classes in the same envelope (`envelope`).
"""

import math
import random
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

PAGE = 1 << 20

CHUNK_SIZES = [96, 120, 152, 192, 240, 304, 384, 480, 600, 752, 944, 1184, 1480, 1856]


def class_curve(n_items: int, h_max: float, scale: float, points: int = 100) -> list[list[float]]:
    top = 2 * n_items
    return [
        [top * (i + 1) / points, round(h_max * (1 - math.exp(-(top * (i + 1) / points) / scale)), 6)]
        for i in range(points)
    ]


def make_snapshot(
    address: str = "10.0.0.7:11211",
    *,
    n_classes: int = 6,
    end: datetime | None = None,
    snapshot_id: uuid.UUID | None = None,
    seed: int = 1,
    limit_maxbytes: int = 64 * 2**20,
    hit_ratio: float | None = None,
    fill: float | None = 1.0,
) -> dict[str, Any]:
    """`fill`: share of -m memcached has taken (1.0: full and evicting; None: no `memory` object,
    as older agents send)."""
    rnd = random.Random(seed)
    end = end or datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
    classes = []
    total_req = 0
    weighted = 0.0
    for k in range(n_classes):
        cid = k + 1
        chunk = CHUNK_SIZES[k % len(CHUNK_SIZES)]
        pages = rnd.randint(4, 40)
        n = pages * (2**20 // chunk)
        h_max = rnd.uniform(0.85, 0.98)
        scale = n * rnd.uniform(0.3, 0.9)
        pts = class_curve(n, h_max, scale)
        req = rnd.randint(10_000, 300_000)
        h_now = h_max * (1 - math.exp(-n / scale))
        total_req += req
        weighted += req * h_now
        classes.append(
            {
                "id": cid,
                "chunk_size": chunk,
                "pages": pages,
                "items": n,
                "evictions": rnd.randint(0, 5000),
                "requests": req,
                "curve": {"unit": "items", "current_items": n, "points": pts},
                "cost_us": {"count": 100, "mean": 2100.5, "p50": 1500.0, "p90": 4000.0, "p99": 9000.0},
            }
        )
    hr = hit_ratio if hit_ratio is not None else (weighted / total_req if total_req else None)
    gets = 1_200_000
    hits = int(gets * hr) if hr is not None else 0
    snap = envelope(
        address,
        end,
        limit_maxbytes,
        classes,
        snapshot_id=snapshot_id,
        hostname="cache-07",
        settings={"item_size_max": "1048576", "growth_factor": "1.25"},
        measured={
            "cmd_get": gets,
            "get_hits": hits,
            "get_misses": gets - hits,
            "cmd_set": 198000,
            "evictions": 5000,
            "bytes": 66000000,
            "curr_items": 410000,
            "hit_ratio": None if hr is None else round(hits / gets, 6),
        },
        events_seen=1390000,
    )
    if fill is not None:  # the optional memory object, before the classes (they stay the last key)
        memory = {
            "total_malloced": int(min(fill, 1.0) * limit_maxbytes) // 2**20 * 2**20,
            "limit_maxbytes": limit_maxbytes,
            "evictions_total": 5000 if fill >= 1 else 0,
            "full": fill >= 1,
            "hash_bytes": 524288,
            "curr_connections": 10,
        }
        classes_last = snap.pop("classes")
        snap["memory"] = memory
        snap["classes"] = classes_last
    return snap


def envelope(
    address: str,
    end: datetime,
    limit_maxbytes: int,
    classes: list[dict[str, Any]],
    *,
    measured: dict[str, Any],
    events_seen: int,
    hostname: str,
    settings: dict[str, str],
    snapshot_id: uuid.UUID | None = None,
    instance_id: str = "1795349000-4242",
) -> dict[str, Any]:
    """A snapshot document around `classes`: a lossless 60 s window ending at `end`."""
    return {
        "schema_version": 1,
        "snapshot_id": str(snapshot_id or uuid.uuid4()),
        "agent": {"version": "0.1.0", "hostname": hostname},
        "server": {
            "address": address,
            "instance_id": instance_id,
            "version": "1.6.18",
            "limit_maxbytes": limit_maxbytes,
            "settings": settings,
        },
        "window": {
            "start": (end - timedelta(seconds=60)).isoformat().replace("+00:00", "Z"),
            "end": end.isoformat().replace("+00:00", "Z"),
        },
        "measured": measured,
        "loss": {
            "events_seen": events_seen,
            "worker_dropped": 0,
            "watcher_skipped": 0,
            "stream_skipped": 0,
            "loss_ratio": 0.0,
            "flagged": False,
        },
        "curve_points": 100,
        "classes": classes,
    }


def make_stats_only_snapshot(
    address: str = "10.0.0.8:11211",
    *,
    end: datetime | None = None,
    hit_ratio: float = 0.8,
    fitted: bool = True,
    items: int = 400_000,
    limit_maxbytes: int = 64 * 2**20,
) -> dict[str, Any]:
    """A window of an agent in stats-only mode (memcached refused `watch`): no classes, `basis:
    "stats_only"` and a `stats_model` whose curve passes through `hit_ratio` at `items`, over
    (0, 5 x items] as the agent's default ghost factor (the shape, not the Che model itself)."""
    snap = make_snapshot(address, end=end, n_classes=1, hit_ratio=hit_ratio, limit_maxbytes=limit_maxbytes)
    snap["classes"] = []
    snap["measured"]["curr_items"] = items
    snap["loss"].update(events_seen=0, loss_ratio=0.0, flagged=False)
    snap["basis"] = "stats_only"
    model: dict[str, Any] = {
        "model": "che-zipf",
        "citation": "Che, Tung, Wang, IEEE JSAC 20(7) 2002; Fricker, Robert, Roberts, ITC 24 2012",
        "fitted": fitted,
        "state": "fitted" if fitted else "not_evicting",
        "current_items": float(items),
        "hit_ratio": snap["measured"]["hit_ratio"],
    }
    if fitted:
        # h(x) = h_top * r / (1 + r), r = x / s, through (items, h): s = items * (h_top - h) / h
        h_top = min(0.999, hit_ratio + 0.15)
        h = snap["measured"]["hit_ratio"]
        s_ = items * (h_top - h) / h
        pts = []
        for i in range(100):
            x = 5 * items * (i + 1) / 100
            pts.append([round(x, 3), round(h_top * (1 - 1 / (1 + x / s_)), 6)])
        model.update(alpha=0.9, keys=float(items * 20), t_requests=1e6, unit="items", points=pts)
    snap["stats_model"] = model
    return snap


def make_trace_chunk(
    address: str = "10.0.0.7:11211",
    *,
    records: int = 1000,
    seq: int = 0,
    chunk_id: uuid.UUID | None = None,
    seed: int = 1,
) -> dict[str, Any]:
    rnd = random.Random(seed)
    end = datetime.now(UTC).replace(microsecond=0) - timedelta(seconds=5)
    start = end - timedelta(seconds=60)
    t0 = int(start.timestamp() * 1_000_000)
    return {
        "schema_version": 1,
        "chunk_id": str(chunk_id or uuid.uuid4()),
        "server": {"address": address, "instance_id": "1795349000-4242"},
        "sample_rate": 0.01,
        "seq": seq,
        "start": start.isoformat().replace("+00:00", "Z"),
        "end": end.isoformat().replace("+00:00", "Z"),
        "records": {
            "ts_us": [t0 + i * 1000 for i in range(records)],
            "key": [f"{rnd.getrandbits(64):016x}" for _ in range(records)],
            "op": [rnd.choice([1, 1, 1, 2, 3]) for _ in range(records)],
            "size": [rnd.randint(10, 2000) for _ in range(records)],
            "clsid": [rnd.randint(1, 12) for _ in range(records)],
            "ttl": [rnd.choice([-1, 300]) for _ in range(records)],
            "cost_us": [rnd.choice([None, 1500.0]) for _ in range(records)],
        },
    }


def proportional_curve(snapshot: dict[str, Any]) -> tuple[list[float], list[float], int]:
    """(sizes_bytes, hit ratios, current_bytes) when every class keeps its share of memory: the
    simple merge the worker also computes (used here only to seed demo data)."""
    classes = snapshot["classes"]
    current = sum(c["curve"]["current_items"] * c["chunk_size"] for c in classes)
    weights = sum(c["requests"] for c in classes) or 1
    xs, ys = [], []
    for i in range(1, 101):
        f = 2 * i / 100  # fraction of today's memory, up to 2x
        h = 0.0
        for c in classes:
            pts = c["curve"]["points"]
            want = f * c["curve"]["current_items"]
            y = 0.0
            for (x0, y0), (x1, y1) in zip([[0.0, 0.0], *pts], pts, strict=False):
                if want <= x1:
                    y = y0 + (y1 - y0) * (want - x0) / (x1 - x0) if x1 > x0 else y1
                    break
            else:
                y = pts[-1][1]
            h += c["requests"] * y
        xs.append(f * current)
        ys.append(h / weights)
    return xs, ys, current


def byte_curve(top: float, h_max: float, scale: float, points: int = 100) -> list[list[float]]:
    """A concave curve over (0, top] bytes, integral sizes (as the agent sends bytes)."""
    return [
        [round(top * (i + 1) / points), round(h_max * (1 - math.exp(-(top * (i + 1) / points) / scale)), 6)]
        for i in range(points)
    ]


# (prefix, requests, measured hit ratio, resident bytes, curve h_max, curve scale as a share of -m)
SAMPLE_PREFIXES = [
    ("user", 480_000, 0.93, 21_000_000, 0.95, 0.08),
    ("sess", 300_000, 0.74, 4_000_000, 0.80, 0.02),
    ("feed", 240_000, 0.71, 30_000_000, 0.90, 0.30),
    ("cfg", 120_000, 0.997, 5_000, 0.998, 0.0005),
]


# The agent's TTL what-if grid as it sends it (profiler-agent/src/core/ttlwhatif.h: 1 s, then 2^k
# and 3 x 2^(k-1) s, to 65536 s)
WHATIF_TTLS = [1] + [v for k in range(1, 16) for v in (2**k, 3 * 2 ** (k - 1))] + [65536]


def whatif_columns(today_ttl: float, resident: float, window_s: float) -> dict[str, Any]:
    """A prefix's `ttl_whatif` as a cache-aside replay gives it for keys read at Poisson rates
    (0.05, 0.5, 5 per second; 10/20/70 % of the reads, 80/15/5 % of the keys): a key read at rate L
    with TTL X hits L X / (1 + L X) of its reads and is live that share of the time. Scaled so the
    live bytes at today's TTL are `resident`."""

    def cols(x: float) -> tuple[float, float]:
        f = [lam * x / (1 + lam * x) for lam in (0.05, 0.5, 5.0)]
        return 0.1 * f[0] + 0.2 * f[1] + 0.7 * f[2], 0.80 * f[0] + 0.15 * f[1] + 0.05 * f[2]

    scale = resident / cols(today_ttl)[1]
    xs = [today_ttl, *WHATIF_TTLS]
    return {
        "sampled_reads": 40_000,
        "sample_rate": 0.5,
        "sampled_hit_ratio": round(cols(today_ttl)[0], 6),
        "hit_ratio": [round(cols(x)[0], 6) for x in xs],
        "live_byte_s": [round(cols(x)[1] * scale * window_s) for x in xs],
    }


def add_breakdown(snap: dict[str, Any], *, hashed: bool = True, seed: int = 1) -> dict[str, Any]:
    """The breakdown's optional fields (docs/agent-protocol.md "Breakdown") on a make_snapshot()
    document: per class ttl_points and left, merged ttl_points and the oblivious curve, four
    prefixes plus other (`sess` with its TTL what-if at a TTL of 3 s), hot keys."""
    rnd = random.Random(seed)
    m = snap["server"]["limit_maxbytes"]
    top = 2 * m
    for c in snap["classes"]:
        c["curve"]["ttl_points"] = [[x, min(1.0, round(y * 1.03, 6))] for x, y in c["curve"]["points"]]
        c["left"] = {"expired": rnd.randint(0, 900), "evicted": c["evictions"], "deleted": 0}
        # a class that gave pages up: most of its evictions were page moves (memcached >= 1.6.34)
        c["page_move_evictions"] = c["evictions"] * 3 // 4 if c["id"] % 2 else 0
    snap["ttl_points"] = byte_curve(top, 0.93, 0.10 * m)
    snap["ttl"] = {
        "unit": "bytes",
        "oblivious_points": byte_curve(top, 0.93, 0.30 * m),
        "working_set_bytes": int(0.4 * m),
        "working_set_bytes_oblivious": int(1.3 * m),
        "sample_rate": 0.25,
        "sampled_reads": 300_000,
        "expired_reads": 9_000,
        "gaps": "touch/gat TTL changes are not in the watch stream",
    }
    snap["prefix_rule"] = "delimiter ':' depth 1"
    snap["prefixes"] = [
        {
            "prefix": name,
            "requests": req,
            "hit_ratio": hr,
            "bytes": b,
            "points": byte_curve(top, hm, sc * m),
            "sets": int(req * (1 - hr)),
            "left": {
                "expired": int(req * 0.01) if name == "sess" else 0,
                "evicted": int(b / 5000),
                "deleted": 0,
            },
        }
        for name, req, hr, b, hm, sc in SAMPLE_PREFIXES
    ]
    snap["ttl_whatif_ttls_s"] = WHATIF_TTLS
    snap["prefixes"][1]["ttl_whatif"] = whatif_columns(3, snap["prefixes"][1]["bytes"], 60.0)
    snap["prefix_other"] = {
        "requests": 60_000,
        "hit_ratio": 0.41,
        "bytes": 2_000_000,
        "left": {"expired": 120, "evicted": 300, "deleted": 0},
    }
    names = ["cfg:flags", "user:1", "user:2", "sess:abc", "feed:home", "user:3", "cfg:limits", "feed:top"]
    keys = [
        {
            "key": n if not hashed else f"xxh3:{rnd.getrandbits(64):016x}",
            "requests": 9000 // (i + 1),
            "bytes": [50, 300, 300, 100, 1500, 300, 50, 1500][i],
            "error": 0,
            "hashed": hashed,
        }
        for i, n in enumerate(names)
    ]
    snap["hot_keys"] = keys
    snap["hot_keys_by_bytes"] = sorted(keys, key=lambda k: -k["requests"] * k["bytes"])
    snap["hot_keys_hashed"] = hashed
    return snap


def synthetic_classes(
    n_classes: int = 40, total_pages: int = 1024, seed: int = 1, concave: bool = False
) -> list[dict[str, Any]]:
    """`n_classes` slab classes (chunk sizes 96 x 1.25^i) sharing `total_pages`, each with a
    100-point curve over (0, 2N] shaped like a Zipf LRU curve, plus noise unless `concave`."""
    rng = np.random.default_rng(seed)
    share = rng.dirichlet(np.ones(n_classes)) * total_pages
    pages = np.maximum(1, np.floor(share)).astype(int)
    pages[int(np.argmax(pages))] += total_pages - int(pages.sum())  # exactly total_pages in all
    out = []
    for i in range(n_classes):
        chunk = int(96 * 1.25**i)
        ipp = max(1, PAGE // chunk)
        n_items = max(1, int(pages[i] * ipp * rng.uniform(0.9, 1.0)))
        sizes = np.linspace(2 * n_items / 100, 2 * n_items, 100)
        alpha = rng.uniform(0.6, 1.2)
        x = sizes / n_items
        hits = rng.uniform(0.5, 0.95) * (1 - (1 + x) ** (-alpha * 3))
        if not concave:
            hits = np.maximum.accumulate(hits + rng.normal(0, 0.004, 100))
        hits = np.clip(hits, 0, 1)
        out.append(
            {
                "id": i + 1,
                "chunk_size": chunk,
                "pages": int(pages[i]),
                "items": n_items,
                "evictions": int(rng.integers(0, 1000)),
                "requests": int(rng.integers(1000, 500_000)),
                "curve": {
                    "unit": "items",
                    "current_items": n_items,
                    "points": [
                        [round(float(s), 3), round(float(h), 6)] for s, h in zip(sizes, hits, strict=True)
                    ],
                },
            }
        )
    return out


def synthetic_snapshot(
    address: str = "10.0.0.7:11211",
    n_classes: int = 40,
    total_pages: int = 1024,
    seed: int = 1,
    end: datetime | None = None,
    hit_ratio: float | None = 0.8,
) -> dict[str, Any]:
    """`synthetic_classes` in a snapshot of `total_pages` MiB without a memory object."""
    end = end or datetime.now(UTC).replace(microsecond=0)
    classes = synthetic_classes(n_classes, total_pages, seed)
    gets = 1_000_000
    return envelope(
        address,
        end,
        total_pages * PAGE,
        classes,
        hostname="bench",
        settings={},
        measured={
            "cmd_get": gets,
            "get_hits": int(gets * (hit_ratio or 0)),
            "get_misses": gets - int(gets * (hit_ratio or 0)),
            "cmd_set": 100_000,
            "evictions": 10,
            "bytes": total_pages * PAGE,
            "curr_items": sum(c["items"] for c in classes),
            "hit_ratio": hit_ratio,
        },
        events_seen=gets,
    )
