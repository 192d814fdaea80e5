"""Synthetic agent snapshots for the worker benchmarks and tests (protocol v1 shape)."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np

PAGE = 1 << 20


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
    end = end or datetime.now(UTC).replace(microsecond=0)
    classes = synthetic_classes(n_classes, total_pages, seed)
    gets = 1_000_000
    return {
        "schema_version": 1,
        "snapshot_id": str(uuid.uuid4()),
        "agent": {"version": "0.1.0", "hostname": "bench"},
        "server": {
            "address": address,
            "instance_id": "1795349000-4242",
            "version": "1.6.18",
            "limit_maxbytes": total_pages * PAGE,
            "settings": {},
        },
        "window": {
            "start": (end - timedelta(seconds=60)).isoformat().replace("+00:00", "Z"),
            "end": end.isoformat().replace("+00:00", "Z"),
        },
        "measured": {
            "cmd_get": gets,
            "get_hits": int(gets * (hit_ratio or 0)),
            "get_misses": gets - int(gets * (hit_ratio or 0)),
            "cmd_set": 100_000,
            "evictions": 10,
            "bytes": total_pages * PAGE,
            "curr_items": sum(c["items"] for c in classes),
            "hit_ratio": hit_ratio,
        },
        "loss": {
            "events_seen": gets,
            "worker_dropped": 0,
            "watcher_skipped": 0,
            "stream_skipped": 0,
            "loss_ratio": 0.0,
            "flagged": False,
        },
        "curve_points": 100,
        "classes": classes,
    }
