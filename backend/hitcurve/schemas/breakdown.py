"""Response bodies of the breakdown API: prefixes, hot keys, TTL-aware vs oblivious
memory, and how items left, from a server's latest snapshot that carries them."""

import uuid
from datetime import datetime

from pydantic import BaseModel, Field

from hitcurve.breakdown.memory import ANSWERS, HELD_RULE
from hitcurve.breakdown.poolsplit import GRID as SPLIT_GRID

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
    bytes: int = Field(description="memory held: its part of memcached's stored bytes (`memory_rule`)")
    memory_share: float | None
    memory_for_target: float | None = Field(
        description="what this prefix alone needs for the target in a pool of its own (its own TTL-aware "
        "curve; `memory_answers.prefix_alone`), not a part of the server's answer"
    )
    curve_step: float | None  # bytes between curve points: an answer below it means "at most"
    ttl_whatif: bool = Field(
        False, description="the window carries its TTL what-if (GET /servers/{id}/breakdown/ttl answers it)"
    )
    points: list[Point]  # its own curve in bytes (as if it had its own pool)
    left: LeftOut | None


class HotKeyOut(BaseModel):
    key: str
    hashed: bool
    requests: int
    bytes: int
    error: int  # requests - error is a lower bound of the key's reads (docs/agent-protocol.md)


class TtlOut(BaseModel):
    points: list[Point]  # TTL-aware, bytes
    oblivious_points: list[Point]
    working_set_bytes: int
    working_set_bytes_oblivious: int
    memory_for_target: float | None = Field(
        description="the agent's merged TTL-aware curve at the target, before calibration to memcached's "
        "measured hit ratio (`memory_answers.ttl_model`): what expiry saves, not the -m to set"
    )
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
    windows_note: str | None = Field(
        None,
        description="newer windows left out because their stream loss was flagged or they were quiet "
        "(the breakdown rests on the newest good window, as the sizing answer does); null when none was",
    )
    target: float
    prefix_rule: str | None
    prefixes: list[PrefixOut]
    hot_keys_hashed: bool
    hot_keys: list[HotKeyOut]
    hot_keys_by_bytes: list[HotKeyOut]
    ttl: TtlOut | None
    classes: list[ClassLeftOut]
    left: LeftOut
    stored_bytes: int | None = Field(
        None, description="memcached's stored bytes at the window's end (stats `bytes`); the prefixes hold it"
    )
    memory_rule: str = Field(HELD_RULE, description="how memory held per prefix is worked out")
    prefixes_alone_bytes: float | None = Field(
        None,
        description="the prefixes' memory_for_target summed: separate pools, each prefix at the target "
        "(null when one cannot reach it); not the server's answer",
    )
    memory_answers: dict[str, str] = Field(
        default_factory=lambda: dict(ANSWERS),
        description="the question each memory-for-the-target figure answers: `server` (the sizing API's, "
        "not in this body), `prefix_alone` (memory_for_target, prefixes_alone_bytes), `ttl_model` (ttl)",
    )


class SplitPointOut(BaseModel):
    prefix_bytes: float = Field(description="memory of the prefix's own pool (X)")
    rest_bytes: float = Field(description="memory of the pool of every other key (Y = total - X)")
    hit_ratio: float = Field(description="predicted hit ratio of the two pools together, read-weighted")
    prefix_hit_ratio: float = Field(description="the prefix alone in X: its own curve")
    rest_hit_ratio: float = Field(
        description="the rest alone in Y: the merged curve minus the prefix's. Below about half of today's "
        "memory it may run high when the rest is few large items (up to +10.7 pp at 0.1-0.4 of today's "
        "memory in the exact-LRU test, backend/tests/test_poolsplit.py)"
    )


class SplitCheckOut(BaseModel):
    prefix_curve_at_occupancy: float | None = Field(
        description="the prefix's own curve at the memory it holds in today's pool (its measured share "
        "of resident bytes x today's memory)"
    )
    prefix_measured_hit_ratio: float | None = Field(description="the prefix's hit ratio the agent counted")
    diff_pp: float | None = Field(
        description="their difference in percentage points: the model reads the prefix as if its share "
        "of today's pool were its own pool; far from 0 (|diff| > tolerance_pp) the split answer is not "
        "to be trusted for this window"
    )
    tolerance_pp: float
    passed: bool | None


class SplitOut(BaseModel):
    server_id: uuid.UUID
    snapshot_id: uuid.UUID
    window_end: datetime
    windows_note: str | None = Field(
        None,
        description="newer windows left out because their stream loss was flagged or they were quiet "
        "(the breakdown rests on the newest good window, as the sizing answer does); null when none was",
    )
    prefix: str
    request_share: float = Field(description="the prefix's share of the window's reads")
    occupancy_share: float = Field(description="its share of resident bytes in today's pool (measured)")
    today_bytes: int = Field(description="memcached's memory limit in the window (-m)")
    total_bytes: float = Field(description="memory of the two pools together (default: today's)")
    pooled_hit_ratio: float = Field(
        description="one pool of total_bytes: the agent's merged TTL-aware curve (the same estimator as "
        "the prefix curves, uncalibrated)"
    )
    measured_hit_ratio: float | None = Field(description="memcached's hit ratio in the window, for reference")
    today_split: SplitPointOut = Field(
        description="total_bytes split in today's measured proportions: reproduces pooled_hit_ratio by "
        "construction at today's memory (the natural partition of an LRU pool)"
    )
    best: SplitPointOut = Field(description="the best split of total_bytes")
    chosen: SplitPointOut | None = Field(description="the split at the requested prefix_bytes")
    gain_pp: float = Field(description="best minus pooled, percentage points: > 0 means a separate pool wins")
    points: list[SplitPointOut] = Field(
        description=f"splits over X in (0, total_bytes), {SPLIT_GRID} of them"
    )
    rest_known_up_to: float = Field(
        description="the rest's curve is derived up to this size (the merged curve's range minus the "
        "prefix's part); a split whose rest_bytes is larger reads its last value (at least)"
    )
    check: SplitCheckOut
    calibration_scale: float = Field(
        description="the merged curve is read at sizes x this, so that it passes through memcached's "
        "measured hit ratio at today's memory (1: nothing to calibrate on)"
    )
    model: str


class TtlGridPointOut(BaseModel):
    ttl_s: float
    allowed_hit_ratio: float = Field(description="the prefix's hit ratio at this TTL with no memory limit")
    live_bytes: float = Field(description="mean bytes of its live items at this TTL (chunk bytes)")


class TtlWhatIfOut(BaseModel):
    server_id: uuid.UUID
    snapshot_id: uuid.UUID
    window_end: datetime
    windows_note: str | None = Field(
        None,
        description="newer windows left out (loss-flagged or quiet), as in the breakdown; null when none",
    )
    prefix: str
    ttl_s: int = Field(description="the TTL asked about, seconds (memcached takes whole seconds)")
    request_share: float = Field(description="the prefix's share of the window's reads")
    measured_hit_ratio: float = Field(description="the prefix's hit ratio today, counted by the agent")
    held_bytes: int = Field(description="memory the prefix's items hold today (the agent's estimate)")
    server_measured_hit_ratio: float | None = Field(description="memcached's hit ratio in the window")
    allowed_hit_ratio_today: float = Field(
        description="the prefix's reads replayed at today's TTLs with no memory limit: what TTL alone allows "
        "today. Above measured_hit_ratio by what memory costs it today"
    )
    allowed_hit_ratio: float = Field(description="the same at ttl_s: the hit ratio the new TTL allows")
    live_bytes_today: float = Field(description="mean bytes of the prefix's live items at today's TTLs")
    live_bytes: float = Field(
        description="the same at ttl_s: the memory the prefix needs to lose nothing to eviction (live items "
        "only: memcached also holds expired items until a read, its crawler or the LRU tail reclaims them)"
    )
    prefix_hit_ratio: float = Field(
        description="the prefix's predicted hit ratio at ttl_s in the memory it holds today (held_bytes)"
    )
    server_hit_ratio: float | None = Field(
        description="the server's predicted hit ratio with the prefix at ttl_s in the memory it holds today, "
        "every other prefix unchanged"
    )
    server_hit_ratio_unbounded: float | None = Field(
        description="the same with memory for every live item of the prefix (live_bytes)"
    )
    memory_for_today_hit_ratio: float | None = Field(
        description="bytes the prefix needs at ttl_s for its hit ratio of today; null when the TTL caps it "
        "below that (reachable false)"
    )
    memory_change_bytes: float | None = Field(
        description="memory_for_today_hit_ratio minus held_bytes: what the server needs more (or frees)"
    )
    reachable: bool
    bound: bool = Field(
        description="true when ttl_s allows more hits than today's TTLs: prefix_hit_ratio and "
        "server_hit_ratio are then lower bounds and memory_for_today_hit_ratio an upper bound (the model "
        "spreads the longer TTL's extra items evenly over memory; LRU evicts the seldom-read ones first: "
        "measured 1.7-9.7 pp low at twice today's TTL, profiler-agent/README.md 'TTL what-if'). Below "
        "today's TTL the in-memory figures are estimates that ran 0.9-5.1 pp high"
    )
    sampled_reads: int = Field(description="sampled reads behind the replay's ratios")
    sample_rate: float
    sample_correction: float = Field(
        description="the replay's hit ratios are scaled by this: the prefix's measured hit ratio over "
        "memcached's own on the sampled reads (a hot key in or out of the sample moves every column; 1: "
        "nothing to correct)"
    )
    grid: list[TtlGridPointOut] = Field(description="every TTL the agent replayed, for the chart")
    model: str
    gaps: str
