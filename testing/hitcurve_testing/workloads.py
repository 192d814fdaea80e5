"""Reference workloads for the Python tests and benchmarks: the one Zipf generator, the one key
hash (splitmix64 finaliser) and the one exact-LRU reference.

Keys are 64-bit hashes of popularity ranks, spread over the whole range as the agent's key hashes
are: `key_of_rank(r) = mix64(r * GOLDEN)`, a bijection, so distinct ranks stay distinct keys.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Sequence
from typing import overload

import numpy as np

GOLDEN = 0x9E3779B97F4A7C15  # 2^64 / phi: the splitmix64 step
_M64 = (1 << 64) - 1


@overload
def mix64(x: int) -> int: ...
@overload
def mix64(x: np.ndarray) -> np.ndarray: ...
def mix64(x: int | np.ndarray) -> int | np.ndarray:
    """splitmix64's finaliser (a bijection on 64 bits) of an int or a uint64 array."""
    if isinstance(x, int):
        z = x & _M64
        z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _M64
        z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _M64
        return z ^ (z >> 31)
    a: np.ndarray = np.asarray(x, dtype=np.uint64)
    with np.errstate(over="ignore"):
        a = (a ^ (a >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        a = (a ^ (a >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return a ^ (a >> np.uint64(31))


def key_of_rank(ranks: np.ndarray) -> np.ndarray:
    """64-bit keys of popularity ranks (uint64), as the agent's key hashes look."""
    with np.errstate(over="ignore"):
        return mix64(np.asarray(ranks, dtype=np.uint64) * np.uint64(GOLDEN))


def zipf_probabilities(n_keys: int, alpha: float) -> np.ndarray:
    """P(rank r) proportional to 1 / (r + 1)^alpha, r = 0 .. n_keys - 1."""
    p = 1.0 / np.arange(1, n_keys + 1, dtype=np.float64) ** alpha
    return p / p.sum()


def zipf_ranks(n_keys: int, n_requests: int, alpha: float, seed: int) -> np.ndarray:
    """`n_requests` popularity ranks (int64, 0 = most popular) drawn from Zipf(alpha)."""
    rng = np.random.default_rng(seed)
    return rng.choice(n_keys, size=n_requests, p=zipf_probabilities(n_keys, alpha))


def zipf_keys(n_keys: int, n_requests: int, alpha: float, seed: int) -> np.ndarray:
    """`n_requests` 64-bit keys (uint64) of a Zipf(alpha) workload over `n_keys` keys."""
    return key_of_rank(zipf_ranks(n_keys, n_requests, alpha, seed))


def exact_lru_hits(keys: Iterable[int], capacity: int, warm: int = 0) -> tuple[int, int]:
    """Exact LRU (look-aside: a miss inserts) of `capacity` items: (hits, requests) counted after
    the first `warm` requests, which only fill the cache."""
    cache: OrderedDict[int, None] = OrderedDict()
    hits = requests = 0
    for i, k in enumerate(keys):
        counted = i >= warm
        requests += counted
        if k in cache:
            cache.move_to_end(k)
            hits += counted
        else:
            cache[k] = None
            if len(cache) > capacity:
                cache.popitem(last=False)
    return hits, requests


def stack_distances(keys: Sequence, weights: Sequence[int] | None = None) -> list[float]:
    """Exact LRU stack distance of each access (inf on first access): the weight of the distinct
    keys touched since the key's previous access, its own included (weights: the access's item
    size, e.g. bytes; default 1, i.e. items). Olken's Fenwick tree over access times."""
    n = len(keys)
    tree = [0] * (n + 1)

    def add(i: int, v: int) -> None:
        i += 1
        while i <= n:
            tree[i] += v
            i += i & -i

    def prefix(i: int) -> int:  # sum of weights at positions < i
        s = 0
        while i > 0:
            s += tree[i]
            i -= i & -i
        return s

    last: dict = {}
    held: dict = {}
    total = 0
    out: list[float] = []
    for t, k in enumerate(keys):
        w = 1 if weights is None else int(weights[t])
        if k in last:
            p = last[k]
            out.append(float(total - prefix(p) - held[k] + w))  # the others touched since, plus itself
            add(p, -held[k])
            total -= held[k]
        else:
            out.append(float("inf"))
        add(t, w)
        total += w
        last[k] = t
        held[k] = w
    return out


def exact_lru_hit_ratios(
    warm: Sequence[int], measured: Sequence[int], capacities: Sequence[int]
) -> list[float]:
    """Hit ratio of the `measured` requests at each capacity, after `warm` filled the cache."""
    seq = [*warm, *measured]
    out = []
    for cap in capacities:
        hits, requests = exact_lru_hits(seq, cap, warm=len(warm))
        out.append(hits / requests if requests else 0.0)
    return out
