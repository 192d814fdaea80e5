"""The managed node types (node_types.json, dated, with its sources) and the answers read from it
(pure once loaded): how many nodes of each type hold a memory target ("N x type"), and the
cheapest priced type and count. A type without a verified memory figure answers no count; one
without a price, no cost. The catalogue's GB are taken as 10^9 bytes (its pages do not say
which; the smaller reading, so a count is never short). Memorystore for Memcached has no fixed
types: its node is a shape (vCPUs, memory within the documented bounds), answered as the fewest
nodes of at most its largest memory. A serverless cache (ElastiCache Serverless) has no node:
its rates and storage minimum are read here, its bill is cost.serverless's."""

import json
import math
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from hitcurve.cost.model import HOURS_PER_MONTH
from hitcurve.cost.serverless import ServerlessPrices

PATH = Path(__file__).with_name("node_types.json")
GB = 10**9


@dataclass(frozen=True)
class NodeType:
    provider: str
    name: str
    memcached_bytes: float | None
    threads: int | None
    network_gbps: float | None
    network_burst_gbps: float | None
    price_per_hour: float | None  # in the catalogue's default region


@dataclass(frozen=True)
class Catalogue:
    as_of: str
    region: str
    sources: dict[str, str]  # id -> url
    unverified: str
    types: list[NodeType]
    shape_max_bytes: float | None
    shape_max_nodes: int | None
    serverless: ServerlessPrices | None = None  # the first serverless entry, at the default region


@dataclass(frozen=True)
class NodeOption:
    provider: str
    name: str
    count: int
    memory_bytes: float  # what the count holds
    monthly: float | None  # count x price per hour x 730 h; None without a price


def _num(v: Any, what: str) -> float | None:
    if v is None:
        return None
    if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
        raise ValueError(f"node catalogue: {what} must be a number >= 0 or null, not {v!r}")
    return float(v)


def parse(doc: dict[str, Any]) -> Catalogue:
    """A catalogue from its JSON document; a clear error for a malformed one."""
    try:
        region = str(doc["default_region"])
        types = [
            NodeType(
                provider=str(t["provider"]),
                name=str(t["name"]),
                memcached_bytes=None
                if (gb := _num(t["memcached_gb"], f"{t['name']} memcached_gb")) is None
                else gb * GB,
                threads=None if t.get("threads") is None else int(t["threads"]),
                network_gbps=_num(t.get("network_gbps"), f"{t['name']} network_gbps"),
                network_burst_gbps=_num(t.get("network_burst_gbps"), f"{t['name']} network_burst_gbps"),
                price_per_hour=_num(
                    (t.get("price_per_hour") or {}).get(region), f"{t['name']} price_per_hour"
                ),
            )  # fmt: skip
            for t in doc["types"]
        ]
        shape = (doc.get("shapes") or [None])[0]
        sl = (doc.get("serverless") or [None])[0]
        serverless = (
            None
            if sl is None
            else ServerlessPrices(
                name=str(sl["name"]),
                region=region,
                per_gb_hour=_num((sl.get("per_gb_hour") or {}).get(region), f"{sl['name']} per_gb_hour"),
                per_million_ecpu=_num(
                    (sl.get("per_million_ecpu") or {}).get(region), f"{sl['name']} per_million_ecpu"
                ),
                minimum_gb=_num(sl["minimum_gb"], f"{sl['name']} minimum_gb") or 0.0,
            )
        )
        return Catalogue(
            as_of=str(doc["as_of"]),
            region=region,
            sources={k: str(v["url"]) for k, v in doc["sources"].items()},
            unverified=str(doc.get("unverified") or ""),
            types=types,
            shape_max_bytes=None if shape is None else float(shape["max_gb"]) * GB,
            shape_max_nodes=None if shape is None else int(shape["max_nodes"]),
            serverless=serverless,
        )
    except (KeyError, TypeError) as e:
        raise ValueError(f"node catalogue: missing or malformed field {e}") from None


@lru_cache(maxsize=4)
def load(path: Path = PATH) -> Catalogue:
    return parse(json.loads(path.read_text()))


def options(cat: Catalogue, memory_bytes: float) -> list[NodeOption]:
    """Each type with a memory figure: the fewest nodes holding `memory_bytes`, and their monthly
    price when the type has one. The priced first, cheapest first; then by count."""
    if not math.isfinite(memory_bytes) or memory_bytes < 0:
        raise ValueError(f"memory_bytes must be a finite number >= 0, not {memory_bytes!r}")
    out = []
    for t in cat.types:
        if not t.memcached_bytes:
            continue
        n = max(1, math.ceil(memory_bytes / t.memcached_bytes - 1e-12))
        monthly = None if t.price_per_hour is None else n * t.price_per_hour * HOURS_PER_MONTH
        out.append(NodeOption(t.provider, t.name, n, n * t.memcached_bytes, monthly))
    return sorted(out, key=lambda o: (o.monthly is None, o.monthly or 0.0, o.count, o.name))


def cheapest(opts: list[NodeOption]) -> NodeOption | None:
    """The cheapest priced option (None when no type has a price)."""
    return next((o for o in opts if o.monthly is not None), None)


def shape_nodes(cat: Catalogue, memory_bytes: float) -> int | None:
    """Memorystore: the fewest nodes of at most its largest node memory (None past its node limit)."""
    if cat.shape_max_bytes is None or cat.shape_max_nodes is None:
        return None
    n = max(1, math.ceil(memory_bytes / cat.shape_max_bytes))
    return n if n <= cat.shape_max_nodes else None
