"""Sampled trace chunks as simulator input (pure: no database, no broker, so benchmarks and the
policy correction use it as they are).

The agent samples keys spatially at rate R (SHARDS-style) and uploads the records columnar
(hitcurve.tracecodec); `assemble` merges decoded chunks in time order into the arrays the
hitcurve_sim extension takes."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from hitcurve import tracecodec
from hitcurve_worker.reliability import PoisonInput

REPO = Path(__file__).resolve().parents[2]
# The simulator's own op codes (hitcurve_sim.GET/SET/DELETE); the agent's are 1 hit, 2 miss,
# 3 set, 4 delete, 5 evict (evictions are memcached's own decisions, not requests).
AGENT_TO_SIM = {1: 0, 2: 0, 3: 1, 4: 3}


def sim_module() -> ModuleType:
    """hitcurve_sim, installed or built in place under simulator/python."""
    try:
        import hitcurve_sim
    except ImportError:
        sys.path.insert(0, str(REPO / "simulator" / "python"))
        import hitcurve_sim
    return hitcurve_sim


@dataclass
class Trace:
    keys: np.ndarray  # uint64
    ops: np.ndarray  # uint8, simulator codes
    sizes: np.ndarray  # uint32, bytes
    costs: np.ndarray  # float64, microseconds of recomputation on a miss
    sample_rate: float
    chunks: int
    notes: list[str] = field(default_factory=list)
    # sampled reads / the reads the sample should hold (SHARDS_adj); None when unknown
    read_ratio: float | None = None
    # the sample as a run states it: distinct keys and the traffic time it spans
    distinct_keys: int = 0
    span_seconds: float = 0.0


def assemble(columns: list[dict[str, np.ndarray]], rates: list[float]) -> Trace:
    """Merge decoded chunks into simulator arrays (pure; tested without a database)."""
    notes: list[str] = []
    if not columns:
        raise PoisonInput("no trace chunks for this subject in the window")
    rate = Counter(rates).most_common(1)[0][0]
    keep = [c for c, r in zip(columns, rates, strict=True) if r == rate]
    if len(keep) < len(columns):
        notes.append(f"{len(columns) - len(keep)} chunks with another sample rate than {rate} left out")
    cat = {k: np.concatenate([c[k] for c in keep]) for k in ("ts_us", "key", "op", "size", "cost_us")}
    order = np.argsort(cat["ts_us"], kind="stable")
    op = cat["op"][order]
    req = np.isin(op, list(AGENT_TO_SIM))
    keys = cat["key"][order][req].astype(np.uint64)
    if len(keys) == 0:
        raise PoisonInput("the trace chunks in the window hold no requests")
    ops = np.zeros(len(keys), dtype=np.uint8)
    for a, s in AGENT_TO_SIM.items():
        ops[op[req] == a] = s
    size = cat["size"][order][req].astype(np.int64)
    cost = cat["cost_us"][order][req].astype(np.float64)
    uniq, inv = np.unique(keys, return_inverse=True)
    # A miss carries size 0 and a SET carries the cost of refilling it: spread each key's known
    # size (largest seen) and cost (mean of its samples) over all its requests.
    key_size = np.zeros(len(uniq), dtype=np.int64)
    np.maximum.at(key_size, inv, size)
    known = size[size > 0]
    default_size = int(np.median(known)) if len(known) else 1024
    key_size[key_size <= 0] = default_size
    has = ~np.isnan(cost)
    csum = np.zeros(len(uniq))
    cnt = np.zeros(len(uniq))
    np.add.at(csum, inv[has], cost[has])
    np.add.at(cnt, inv[has], 1.0)
    default_cost = float(np.median(cost[has])) if has.any() else 1.0
    key_cost = np.where(cnt > 0, csum / np.maximum(cnt, 1.0), default_cost)
    sizes = np.clip(key_size[inv], 1, 2**32 - 1).astype(np.uint32)
    ts = cat["ts_us"][order][req]
    span = float(ts[-1] - ts[0]) / 1e6 if len(ts) else 0.0
    return Trace(
        keys,
        ops,
        sizes,
        key_cost[inv].astype(np.float64),
        float(rate),
        len(keep),
        notes,
        distinct_keys=len(uniq),
        span_seconds=span,
    )


def columns_from_protocol(records: dict[str, list[object]]) -> dict[str, np.ndarray]:
    """A chunk's `records` object (agent protocol v1) as the stored columns: encoded and decoded
    with the backend's own storage codec, so it is exactly what the worker reads from the table."""
    data = tracecodec.encode_records(
        records["ts_us"],  # type: ignore[arg-type]
        records["key"],  # type: ignore[arg-type]
        records["op"],  # type: ignore[arg-type]
        records["size"],  # type: ignore[arg-type]
        records["clsid"],  # type: ignore[arg-type]
        records["ttl"],  # type: ignore[arg-type]
        records["cost_us"],  # type: ignore[arg-type]
    )
    return tracecodec.decode_records(data)
