"""A serverless memcached (ElastiCache Serverless) sized from the curve (pure): the maximum data
storage to allow for a target hit rate, and the monthly bill at it.

A serverless cache has no -m; it bills the data it stores (GB-hours, never less than a minimum)
and the requests it serves (ECPUs: one per request of up to 1 KB transferred), and its only size
knob is the maximum data storage (CacheUsageLimits.DataStorage.Maximum, whole GB). Full, it holds
that maximum, so the maximum is what the curve's memory answer is: the one -m to set for the
target (sizing.answers.memory_answer, summed over a cluster's nodes), rounded up to whole GB.
memcached's -m counts its slab pages, which hold the items with their headers and the slack of
each slab class, so the data stored at that maximum is at most it: the maximum is never short,
and the storage bill is for at most that many GB.

Requests: the reads the subject serves, plus one SET per miss at the target (cache-aside: a miss
is refilled), at one ECPU each -- a floor: a request over 1 KB counts one ECPU per KB.

Prices come from the node catalogue's "serverless" entry (node_types.json, with its sources and
date); without a price there is still the maximum to allow, with no bill."""

import math
from dataclasses import dataclass

from hitcurve.cost.model import HOURS_PER_MONTH, SECONDS_PER_MONTH

GB = 10**9


@dataclass(frozen=True)
class ServerlessPrices:
    name: str
    region: str
    per_gb_hour: float | None  # data stored
    per_million_ecpu: float | None
    minimum_gb: float  # the storage metered even when less is stored


@dataclass(frozen=True)
class ServerlessBill:
    maximum_gb: int  # DataStorage.Maximum to allow
    metered_gb: float  # what the storage is billed for when full: the maximum, at least the minimum
    storage: float | None  # per month; None without a price
    requests: float | None  # per month; None without a price or without reads
    ecpu_per_second: float | None  # at one ECPU per request
    total: float | None


def maximum_gb(memory_bytes: float) -> int:
    """The whole GB that hold `memory_bytes` (at least 1)."""
    if not math.isfinite(memory_bytes) or memory_bytes < 0:
        raise ValueError(f"memory_bytes must be a finite number >= 0, not {memory_bytes!r}")
    return max(1, math.ceil(memory_bytes / GB - 1e-12))


def bill(
    memory_bytes: float, hit_ratio: float, reads_per_second: float | None, p: ServerlessPrices
) -> ServerlessBill:
    """The maximum to allow for a cache that needs `memory_bytes` for `hit_ratio`, and its monthly
    bill when full: storage at the maximum (or the minimum), requests at the reads plus a refill
    per miss."""
    if not 0.0 <= hit_ratio <= 1.0:
        raise ValueError(f"hit_ratio must lie in [0, 1], not {hit_ratio!r}")
    if reads_per_second is not None and (not math.isfinite(reads_per_second) or reads_per_second < 0):
        raise ValueError(f"reads_per_second must be a finite number >= 0, not {reads_per_second!r}")
    top = maximum_gb(memory_bytes)
    metered = max(float(top), p.minimum_gb)
    storage = None if p.per_gb_hour is None else metered * p.per_gb_hour * HOURS_PER_MONTH
    ecpu = None if reads_per_second is None else reads_per_second * (2.0 - hit_ratio)
    requests = (
        None
        if ecpu is None or p.per_million_ecpu is None
        else ecpu * SECONDS_PER_MONTH / 1e6 * p.per_million_ecpu
    )
    total = None if storage is None or requests is None else storage + requests
    return ServerlessBill(top, metered, storage, requests, ecpu, total)
