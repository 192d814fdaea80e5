"""Response bodies of the breakdown API (issue 16): prefixes, hot keys, TTL-aware vs oblivious
memory, and how items left, from a server's latest snapshot that carries them."""

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

Point = tuple[float, float]


class LeftOut(BaseModel):
    expired: int
    evicted: int
    deleted: int
    # of `evicted`, those slab page moves caused (memcached moving memory to another class, not
    # a shortage); per class only: per prefix the source of an eviction is not known
    evicted_by_page_moves: int = 0


class PrefixOut(BaseModel):
    prefix: str
    other: bool  # the rest of the keys, beyond the agent's top-N
    requests: int
    request_share: float  # of all reads in the window
    hit_ratio: float | None  # measured
    bytes: int  # memory its resident items take (estimated from the agent's sample)
    memory_share: float | None
    memory_for_target: float | None  # bytes its own TTL-aware curve needs for the target
    curve_step: float | None  # bytes between curve points: an answer below it means "at most"
    points: list[Point]  # its own curve in bytes (as if it had its own pool)
    left: LeftOut | None


class HotKeyOut(BaseModel):
    key: str
    hashed: bool
    requests: int
    bytes: int
    error: int  # requests over-estimate by at most this


class TtlOut(BaseModel):
    points: list[Point]  # TTL-aware, bytes
    oblivious_points: list[Point]
    working_set_bytes: int
    working_set_bytes_oblivious: int
    memory_for_target: float | None
    memory_for_target_oblivious: float | None
    saved_ratio: float | None  # 1 - aware / oblivious at the target (paper: 0.69 on average)
    expired_reads: int
    gaps: str
    expired_resident_bytes: int | None = Field(
        default=None,
        description="memory held by items past their TTL that memcached has not reclaimed yet. Always "
        "null: it cannot be measured from what the agent reads. memcached frees expired items in "
        "three ways and logs one of them: a read or store that finds the item expired (in the watch "
        "stream), its LRU crawler and the LRU tail, which reclaim silently (stats counts them in "
        "`crawler_reclaimed` and `reclaimed`, not per item or per byte). So the agent knows when an "
        "item expired, not whether it is still resident. Only `lru_crawler metadump`, which lists "
        "every item with its expiry, could measure it, at the cost of reading every key",
    )


class ClassLeftOut(BaseModel):
    id: int
    chunk_size: int
    expired: int
    evicted: int
    deleted: int
    evicted_by_page_moves: int


class BreakdownOut(BaseModel):
    server_id: uuid.UUID
    snapshot_id: uuid.UUID
    window_start: datetime
    window_end: datetime
    target: float
    prefix_rule: str | None
    prefixes: list[PrefixOut]
    hot_keys_hashed: bool
    hot_keys: list[HotKeyOut]
    hot_keys_by_bytes: list[HotKeyOut]
    ttl: TtlOut | None
    classes: list[ClassLeftOut]
    left: LeftOut
