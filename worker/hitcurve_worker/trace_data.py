"""Sampled trace chunks as simulator input (pure: no database, no broker, so benchmarks and the
policy correction use it as they are).

The agent samples keys spatially at rate R (SHARDS-style) and uploads the records columnar
(hitcurve.ingest.tracecodec); `assemble` merges decoded chunks in time order into the arrays the
hitcurve_sim extension takes."""

from __future__ import annotations

import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType

import numpy as np

from hitcurve.ingest import tracecodec
from hitcurve_worker.reliability import PoisonInput

REPO = Path(__file__).resolve().parents[2]
# The simulator's own op codes (hitcurve_sim.GET/SET/DELETE); the agent's are 1 hit, 2 miss,
# 3 set, 4 delete, 5 evict (evictions are memcached's own decisions, not requests).
AGENT_TO_SIM = {1: 0, 2: 0, 3: 1, 4: 3}
AGENT_MISS, AGENT_SET = 2, 3


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
    # look-aside refills left out (`refills`): SETs right after a miss of the same key
    refills_dropped: int = 0
    # the replayed period (first and last request, microseconds since the epoch) and the bytes
    # the sample's keys take, scaled by 1/R: at and above it every policy holds all of them
    start_us: int = 0
    end_us: int = 0
    footprint_bytes: float = 0.0


def assemble(columns: list[dict[str, np.ndarray]], rates: list[float], since_us: int | None = None) -> Trace:
    """Merge decoded chunks into simulator arrays (pure; tested without a database); since_us:
    only the requests from then on."""
    notes: list[str] = []
    if not columns:
        raise PoisonInput("no trace chunks for this subject in the window")
    rate = Counter(rates).most_common(1)[0][0]
    same_rate = [c for c, r in zip(columns, rates, strict=True) if r == rate]
    chunks = len(same_rate)
    if chunks < len(columns):
        notes.append(f"{len(columns) - chunks} chunks with another sample rate than {rate} left out")
    cat = {k: np.concatenate([c[k] for c in same_rate]) for k in ("ts_us", "key", "op", "size", "cost_us")}
    order = np.argsort(cat["ts_us"], kind="stable")
    if since_us is not None:
        order = order[cat["ts_us"][order] >= since_us]
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
    keep = ~refills(keys, op[req])
    dropped = int(len(keep) - np.count_nonzero(keep))
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
        keys[keep],
        ops[keep],
        sizes[keep],
        key_cost[inv].astype(np.float64)[keep],
        float(rate),
        chunks,
        notes,
        distinct_keys=len(uniq),
        span_seconds=span,
        refills_dropped=dropped,
        start_us=int(ts[0]) if len(ts) else 0,
        end_us=int(ts[-1]) if len(ts) else 0,
        footprint_bytes=float(key_size.sum()) / float(rate),
    )


def refills(keys: np.ndarray, agent_ops: np.ndarray) -> np.ndarray:
    """The look-aside refills: a SET whose key's previous request was a miss (the client stores
    what memcached, at today's size, did not have). They are a consequence of today's misses, not
    requests of their own: replayed at a larger simulated size, where that read hit, the refill
    replaces a resident item and resets its segmented-LRU state (FETCHED/ACTIVE, back to HOT), so
    memcached's scan resistance above today's memory vanished from the simulation (scan mix at 4x:
    mcslru 0.679 = LRU 0.678 on the agent's sample, 0.696 for real memcached). The simulator fills
    on a miss anyway (fill_on_miss), so dropping them changes nothing where the read missed."""
    n = len(keys)
    out = np.zeros(n, dtype=bool)
    if n < 2:
        return out
    by_key = np.lexsort((np.arange(n), keys))  # stable: time order within a key
    same = keys[by_key][1:] == keys[by_key][:-1]
    prev_miss = agent_ops[by_key][:-1] == AGENT_MISS
    is_set = agent_ops[by_key][1:] == AGENT_SET
    out[by_key[1:][same & prev_miss & is_set]] = True
    return out


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
