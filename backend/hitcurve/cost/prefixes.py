"""Misses priced per prefix: when one kind of key is dearer to refill than the rest (a rendered
page against a session flag), the cost-optimal size follows whose misses a byte saves.

    misses(x) = reads x month x [ C (1 - H(x)) + sum over priced P of (C_P - C) s_P (1 - h_P(x)) ]

H is the answer's curve, C the cluster's miss cost, and for each priced prefix P: C_P its miss
cost, s_P its share of the reads, h_P(x) its hit ratio inside the shared pool of x bytes: its own
curve at the bytes it holds there (hitcurve.breakdown.poolsplit.pooled_prefix_curve, from the
agent's breakdown window: footprint composition, Xiang et al., ASPLOS'13; Che's approximation).
A cluster's prefixes are its servers' summed by their reads, each server holding its share of the
cluster's memory as it does today. A priced prefix without a curve in the window (too few reads,
or not among the agent's top prefixes) is priced at C and named in the answer.

prefix_misses is pure; server_terms reads a server's newest good breakdown window."""

from __future__ import annotations

import uuid
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
from sqlalchemy.orm import Session

from hitcurve.breakdown.poolsplit import pooled_prefix_curve
from hitcurve.breakdown.split_answer import SPLIT_MIN_READS
from hitcurve.cost.model import SECONDS_PER_MONTH
from hitcurve.crud.breakdown import newest_good_breakdown
from hitcurve.sizing.cache import basis_cache


@dataclass(frozen=True)
class PrefixTerm:
    """One priced prefix of one server: its price, its share of the subject's reads, and its hit
    ratio in the pool at the subject's memory sizes (sizes scaled from the server's to the subject's)."""

    prefix: str
    per_million: float
    read_share: float
    sizes: Sequence[float]
    hit: Sequence[float]

    def hit_at(self, x: float) -> float:
        return float(np.interp(x, self.sizes, self.hit))


@dataclass(frozen=True)
class Terms:
    terms: list[PrefixTerm]
    without_curve: list[str]  # priced prefixes no server's window had a curve for


def _pooled(snapshot_id: uuid.UUID, doc: dict, p: dict, share: float, occupancy: float, today: float):
    """P's pooled curve of one window, cached by window and prefix (the march costs ~0.1 s)."""
    measured = (doc.get("measured") or {}).get("hit_ratio")
    return basis_cache().get_or_compute(
        ("pooled_prefix", snapshot_id, p["prefix"]),
        lambda: pooled_prefix_curve(doc["ttl_points"], p["points"], share, occupancy, today, measured),
    )


def window_terms(
    snapshot_id: uuid.UUID, doc: dict, costs: Mapping[str, float], weight: float, scale: float
) -> tuple[list[PrefixTerm], set[str]]:
    """The priced prefixes of one breakdown window with a curve and enough reads: each one's term
    with its read share times `weight` (the server's share of the subject's reads) and sizes times
    `scale` (the subject's memory over the server's). Also the priced names it has a curve for."""
    ps = doc.get("prefixes") or []
    merged = doc.get("ttl_points")
    if not merged or not ps:
        return [], set()
    other = doc.get("prefix_other") or {"requests": 0, "bytes": 0}
    reads = sum(q["requests"] for q in ps) + other["requests"]
    resident = sum(q["bytes"] for q in ps) + other["bytes"]
    today = float(doc["server"]["limit_maxbytes"])
    out: list[PrefixTerm] = []
    for q in ps:
        name = q["prefix"]
        if name not in costs or not q.get("points") or q["requests"] < SPLIT_MIN_READS:
            continue
        share = q["requests"] / reads
        if not 0.0 < share < 1.0:
            continue
        occupancy = q["bytes"] / resident if resident else share
        sizes, hit = _pooled(snapshot_id, doc, q, share, occupancy, today)
        out.append(PrefixTerm(name, float(costs[name]), share * weight, [x * scale for x in sizes], hit))
    return out, {t.prefix for t in out}


def server_terms(
    db: Session,
    org_id: uuid.UUID,
    reads: Mapping[uuid.UUID, float],
    costs: Mapping[str, float],
    subject_bytes: float | None,
) -> Terms:
    """The priced prefixes of a subject's servers (`reads`: each server's reads per second): each
    server's terms weighted by its share of the reads, its sizes scaled by the subject's memory
    today (`subject_bytes`; None: the server's own) over the server's."""
    terms: list[PrefixTerm] = []
    covered: set[str] = set()
    total = sum(reads.values())
    for server_id, rate in sorted(reads.items()):
        found = newest_good_breakdown(db, org_id, server_id) if total > 0 else None
        if found is None:
            continue
        r, doc, _ = found
        today = float(doc["server"]["limit_maxbytes"] or 0)
        scale = subject_bytes / today if subject_bytes and today > 0 else 1.0
        got, names = window_terms(r.id, doc, costs, rate / total, scale)
        terms += got
        covered |= names
    return Terms(terms, sorted(set(costs) - covered))


def prefix_misses(
    curve: Callable[[float], float], terms: Sequence[PrefixTerm], per_million: float, reads_per_second: float
) -> Callable[[float], float]:
    """The monthly cost of the misses at x bytes with the priced prefixes at their own prices and
    every other read at `per_million` (cost.model.Misses)."""
    per_read = reads_per_second * SECONDS_PER_MONTH / 1e6

    def misses(x: float) -> float:
        h = min(1.0, max(0.0, float(curve(x))))
        extra = sum((t.per_million - per_million) * t.read_share * (1.0 - t.hit_at(x)) for t in terms)
        return max(0.0, per_read * (per_million * (1.0 - h) + extra))

    return misses
