"""The agent upload protocol, version 1 (docs/agent-protocol.md), as strict Pydantic models.

Strict: no type coercion ("5" is not 5), floats must be finite, unknown fields are ignored
(the protocol may grow optional fields). Cross-field rules are model validators whose messages
name the offending class or column.
"""

import uuid
from datetime import UTC, datetime, timedelta
from itertools import chain
from typing import Annotated, Literal

import numpy as np
from pydantic import AwareDatetime, BaseModel, ConfigDict, Field, StringConstraints, model_validator

from hitcurve.schemas.extstore import Extstore

CURVE_POINTS = 100
MAX_CLASSES = 256
MAX_RECORDS = 200_000
MAX_PAST = timedelta(days=7)
MAX_FUTURE = timedelta(minutes=5)

# Physical limits of every number an agent sends (docs/agent-protocol.md "Limits"); a number
# past them is refused with a 422 that names its place. They are far above any real memcached
# and far below what would overflow or lose precision downstream.
MAX_BYTES = 2**50  # 1 PiB: memory, byte sizes
MAX_ITEMS = 2**40  # 1.1e12 items: more than 1 PiB holds at memcached's smallest chunk (96 B)
MAX_COUNT = 2**53  # counters (requests, hits, events): exact in a float64; 2.8 years at 100M/s
MAX_ITEM_BYTES = 2**30  # one item or chunk: memcached's -I maximum is 1 GiB
MAX_COST_US = 3.6e9  # a recompute cost: one hour in microseconds
MAX_TTL_S = 2**32  # a TTL in seconds, or an absolute Unix time as memcached accepts (to 2106)
MAX_TS_US = 2**53  # a timestamp in microseconds since the epoch (year 2255)

NonNeg = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Items = Annotated[int, Field(ge=0, le=MAX_ITEMS)]
Bytes = Annotated[int, Field(ge=0, le=MAX_BYTES)]
CostUs = Annotated[float, Field(ge=0, le=MAX_COST_US)]
Ratio = Annotated[float, Field(ge=0.0, le=1.0)]
ShortText = Annotated[str, StringConstraints(min_length=1, max_length=255)]


# Fields the agent sends that these models deliberately do not read: they are kept with the stored
# payload (snapshots.payload_gzip, where HITCURVE_STORE_PAYLOADS keeps it) for diagnosis, nothing
# interprets them (docs/agent-protocol.md "Optional fields the agent sends"). A path names a key
# ("classes[]." for every class); a key names its whole subtree. backend/tests/test_agent_contract.py
# runs the real agent and fails on any field it writes that is neither a model field nor listed here.
PAYLOAD_ONLY = frozenset(
    {
        "measured.get_expired",
        "measured.get_flushed",
        "measured.non_get_lookups",
        "measured.reclaimed",
        "measured.page_move_evictions",
        "measured.slabs_moved",
        "loss.agent_dropped",
        "loss.malformed",
        "classes[].hits_observed",
        "classes[].sample_rate",
        "diagnostics",
        "extstore.stream",
    }
)


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", allow_inf_nan=False, frozen=True)


def _check_times(start: datetime, end: datetime, what: str) -> None:
    if end <= start:
        raise ValueError(f"{what}: end must be after start")
    now = datetime.now(UTC)
    if start < now - MAX_PAST:
        raise ValueError(f"{what}: start is more than 7 days in the past")
    if end > now + MAX_FUTURE:
        raise ValueError(f"{what}: end is more than 5 minutes in the future (check the agent's clock)")


class AgentInfo(_Strict):
    version: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    hostname: ShortText
    # the estimator that drew the curves below N; absent from agents older than the option (ROUNDER)
    estimator: Literal["rounder", "stacker"] | None = None


class ServerInfo(_Strict):
    address: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    instance_id: Annotated[str, StringConstraints(min_length=1, max_length=100)]
    version: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    limit_maxbytes: Annotated[int, Field(gt=0, le=MAX_BYTES)]
    settings: Annotated[
        dict[
            Annotated[str, StringConstraints(max_length=100)],
            Annotated[str, StringConstraints(max_length=1000)],
        ],
        Field(max_length=500),
    ] = {}


class Window(_Strict):
    start: AwareDatetime
    end: AwareDatetime


class Measured(_Strict):
    cmd_get: NonNeg
    get_hits: NonNeg
    get_misses: NonNeg
    cmd_set: NonNeg
    evictions: NonNeg
    bytes: Bytes
    curr_items: Items
    hit_ratio: Ratio | None


class MemoryFill(_Strict):
    """How full memcached is at the window's end (optional; agents from 2026-11-25 on send it).
    Until `full`, memcached evicts nothing and its curve still grows: the server is warming up."""

    total_malloced: Bytes  # bytes of 1 MiB slab pages taken; counts toward -m
    limit_maxbytes: Bytes  # -m
    evictions_total: NonNeg  # cumulative since memcached started
    full: bool | None  # null: this memcached does not report total_malloced
    hash_bytes: Bytes = 0  # outside -m
    curr_connections: NonNeg = 0  # outside -m


class FlagSelfCheck(_Strict):
    """The agent's self-check of a window it flagged for it: its hit ratio against memcached's."""

    agent_hit_ratio: Ratio
    measured_hit_ratio: Ratio
    tolerance: Annotated[float, Field(ge=0.0, le=100.0)]


FlagReason = Literal["stream_loss", "self_check", "flush"]


class Loss(_Strict):
    events_seen: NonNeg
    worker_dropped: NonNeg
    watcher_skipped: NonNeg
    stream_skipped: NonNeg
    loss_ratio: Ratio
    flagged: bool
    # why a flagged window is flagged (agents since 2026-12-02; absent: older agents, or not
    # flagged): the reasons, the self-check's figures when it disagreed, the loss threshold
    flagged_by: Annotated[list[FlagReason], Field(max_length=3)] | None = None
    self_check: FlagSelfCheck | None = None
    threshold: Ratio | None = None


# fail_fast: a list stops at its first invalid element, so a body of many bad elements costs one
# error, not one error object per element (12 s to refuse 17 KB of gzip).
# Curve sizes in bytes (merged and TTL curves) and in items (a class's curve).
Points = Annotated[
    list[tuple[Annotated[float, Field(gt=0, le=MAX_BYTES)], Ratio]],
    Field(min_length=1, max_length=CURVE_POINTS * 10, fail_fast=True),
]
ItemPoints = Annotated[
    list[tuple[Annotated[float, Field(gt=0, le=MAX_ITEMS)], Ratio]],
    Field(min_length=1, max_length=CURVE_POINTS * 10, fail_fast=True),
]


class Curve(_Strict):
    unit: Literal["items"]
    current_items: Items
    points: ItemPoints
    ttl_points: ItemPoints | None = None  # the same sizes with expiry modelled (SHARDS++)
    # how far the agent's ghost sees now (N + the evicted keys it holds, at most K x N);
    # the points past it are held flat, not measured. Older agents omit it.
    ghost_reach_items: Items | None = None
    # the ghost's counting filters F (the agent's 1 + 8(K-1), at most 64): past N a reuse distance
    # is placed to within (reach - N) / F, the band's ghost span. Older agents omit it (F = 9).
    ghost_filters: Annotated[int, Field(ge=2, le=64)] | None = None
    # whether every key memcached evicted from the class that has not come back and that the
    # ghost does not hold lies beyond K x N, for every read of the window (from the start when the
    # agent saw memcached before its first eviction; for an agent attached to a memcached already
    # evicting, once its ghost has held (K-1) x N keys; lost again when evicted keys may be missing
    # inside the span, e.g. EVICT lines lost): past its entries a read that misses it is a miss at
    # every size, so the curve is flat there, measured, and ghost_reach_items is K x N. The reach
    # carries it to the worker; kept for diagnosis.
    ghost_complete: bool | None = None
    # evicted keys the ghost lost (flushed past (K-1) x N, or cleared when the class's capacity
    # moved too far to keep them); a complete ghost may have dropped keys beyond K x N
    ghost_dropped_items: Items | None = None


# --- the breakdown (optional; docs/agent-protocol.md "Breakdown") -----------------------
MAX_PREFIXES = 100
MAX_PREFIX_LEN = 64
MAX_HOT_KEYS = 100
MAX_KEY_LEN = 250
# The TTL what-if: at most this many TTLs in the agent's grid (`ttl_whatif_ttls_s`,
# defined once in profiler-agent/src/core/ttlwhatif.h and sent in every snapshot); each prefix's
# columns are one per TTL plus column 0, each store's own TTL.
MAX_WHATIF_TTLS = 32
# live byte-seconds of a window: 1 PiB held for 4096 s is 2^62 (a JSON integer's safe bound in C)
MAX_BYTE_S = 2**62


class Left(_Strict):
    """How items left in the window."""

    expired: NonNeg
    evicted: NonNeg
    deleted: NonNeg


class TtlInfo(_Strict):
    unit: Literal["bytes"]
    oblivious_points: Points
    working_set_bytes: Bytes
    working_set_bytes_oblivious: Bytes
    sample_rate: Annotated[float, Field(gt=0, le=1)]
    sampled_reads: NonNeg = 0
    expired_reads: NonNeg = 0
    gaps: Annotated[str, StringConstraints(max_length=300)] = ""


class TtlWhatIf(_Strict):
    """A prefix's reads and stores replayed at each TTL of the grid (unbounded memory): column 0
    is each store's own TTL, column i the grid's (i-1)th TTL."""

    sampled_reads: NonNeg
    sample_rate: Annotated[float, Field(gt=0, le=1)]
    sampled_hit_ratio: Ratio  # memcached's own hit ratio on the same sampled reads
    hit_ratio: Annotated[list[Ratio], Field(min_length=2, max_length=MAX_WHATIF_TTLS + 1)]
    live_byte_s: Annotated[
        list[Annotated[int, Field(ge=0, le=MAX_BYTE_S)]], Field(min_length=2, max_length=MAX_WHATIF_TTLS + 1)
    ]


class PrefixStat(_Strict):
    prefix: Annotated[str, StringConstraints(min_length=1, max_length=MAX_PREFIX_LEN)]
    requests: NonNeg
    hit_ratio: Ratio
    bytes: Bytes
    points: Annotated[
        list[tuple[Annotated[float, Field(gt=0, le=MAX_BYTES)], Ratio]],
        Field(max_length=CURVE_POINTS, fail_fast=True),
    ]
    sets: NonNeg = 0
    left: Left | None = None
    ttl_whatif: TtlWhatIf | None = None


class PrefixOther(_Strict):
    requests: NonNeg
    hit_ratio: Ratio | None
    bytes: Bytes
    left: Left | None = None


class HotKey(_Strict):
    key: Annotated[str, StringConstraints(min_length=1, max_length=MAX_KEY_LEN)]
    requests: NonNeg
    bytes: Bytes
    error: NonNeg = 0
    hashed: bool = True


class CostStats(_Strict):
    count: NonNeg
    mean: CostUs | None = None
    p50: CostUs | None = None
    p90: CostUs | None = None
    p99: CostUs | None = None


class SlabClass(_Strict):
    id: Annotated[int, Field(ge=0, le=255)]
    chunk_size: Annotated[int, Field(gt=0, le=MAX_ITEM_BYTES)]
    pages: Annotated[int, Field(ge=0, le=MAX_BYTES // 2**20)]
    items: Items
    evictions: NonNeg
    # the part of `evictions` slab page moves caused (memcached >= 1.6.34 counts them as
    # evictions of the class that gave the page up): memory moved elsewhere, not a shortage
    page_move_evictions: NonNeg = 0
    requests: NonNeg
    curve: Curve
    cost_us: CostStats | None = None
    left: Left | None = None

    @model_validator(mode="after")
    def _page_moves_within_evictions(self) -> "SlabClass":
        if self.page_move_evictions > self.evictions:
            raise ValueError(
                f"class {self.id}: page_move_evictions ({self.page_move_evictions}) exceeds "
                f"evictions ({self.evictions})"
            )
        return self


def _first_bad_point(where: str, pts: list[tuple[float, float]]) -> None:
    for i in range(1, len(pts)):
        if not pts[i][0] > pts[i - 1][0]:
            raise ValueError(f"{where}: curve sizes must be strictly increasing (point {i})")
        if pts[i][1] < pts[i - 1][1]:
            raise ValueError(f"{where}: curve hit ratios must be non-decreasing (point {i})")


def _check_curve(where: str, pts: list[tuple[float, float]], n: int) -> None:
    if len(pts) != n:
        raise ValueError(f"{where}: curve has {len(pts)} points, expected exactly {n}")
    xs = [p[0] for p in pts]
    ys = [p[1] for p in pts]
    # checked in C (sorted); the loop only runs to name the offending point
    if xs != sorted(set(xs)) or ys != sorted(ys):
        _first_bad_point(where, pts)


def _to_check(curves: list[list[tuple[float, float]]], n: int) -> list[bool]:
    """Which of these curves _check_curve must look at: all of them in one numpy pass instead of
    a Python pass each (a snapshot's 20-40 class curves: the decoder's largest cost after
    Pydantic itself). True for every curve that breaks a rule (sizes strictly
    increasing, hit ratios non-decreasing, n points) -- and for all when any has another length
    than n; _check_curve then names the error exactly as before, in the same order."""
    if not curves or any(len(c) != n for c in curves):
        return [True] * len(curves)
    pts = np.fromiter(chain.from_iterable(chain.from_iterable(curves)), np.float64, count=2 * n * len(curves))
    steps = np.diff(pts.reshape(len(curves), n, 2), axis=1)
    ok = np.asarray((steps[:, :, 0] > 0).all(axis=1) & (steps[:, :, 1] >= 0).all(axis=1))
    return [not good for good in ok.tolist()]


class StatsModel(_Strict):
    """A stats-only window's curve: where memcached refuses `watch`, the agent fits
    Che's approximation with Zipf popularity to `stats` (profiler-agent/src/agent/statsmodel.h).
    `points` (items -> hit ratio, the whole cache) only when `fitted`; `state` says why not
    (`not_evicting`, `no_reads`, `no_age`, `no_fit`)."""

    model: Literal["che-zipf"]
    fitted: bool
    state: Annotated[str, StringConstraints(min_length=1, max_length=32)]
    current_items: Annotated[float, Field(ge=0, le=MAX_ITEMS)]
    hit_ratio: Annotated[float, Field(ge=-1.0, le=1.0)]  # -1: no reads in the window
    citation: Annotated[str, StringConstraints(max_length=300)] = ""
    alpha: Annotated[float, Field(ge=0, le=10)] | None = None
    keys: Annotated[float, Field(ge=0, le=MAX_ITEMS)] | None = None
    t_requests: Annotated[float, Field(ge=0, le=MAX_COUNT)] | None = None
    unit: Literal["items"] | None = None
    points: ItemPoints | None = None


class Snapshot(_Strict):
    schema_version: Literal[1]
    snapshot_id: uuid.UUID
    agent: AgentInfo
    server: ServerInfo
    window: Window
    measured: Measured
    memory: MemoryFill | None = None
    loss: Loss
    curve_points: Literal[100]
    classes: Annotated[list[SlabClass], Field(max_length=MAX_CLASSES, fail_fast=True)]
    # optional
    ttl_points: Points | None = None
    ttl: TtlInfo | None = None
    prefix_rule: Annotated[str, StringConstraints(max_length=300)] | None = None
    prefixes: Annotated[list[PrefixStat], Field(max_length=MAX_PREFIXES)] | None = None
    prefix_other: PrefixOther | None = None
    ttl_whatif_ttls_s: (
        Annotated[
            list[Annotated[int, Field(ge=1, le=MAX_TTL_S)]], Field(min_length=1, max_length=MAX_WHATIF_TTLS)
        ]
        | None
    ) = None
    hot_keys: Annotated[list[HotKey], Field(max_length=MAX_HOT_KEYS)] | None = None
    hot_keys_by_bytes: Annotated[list[HotKey], Field(max_length=MAX_HOT_KEYS)] | None = None
    hot_keys_hashed: bool | None = None
    # optional: what the window rests on; absent = "watch"
    basis: Literal["watch", "stats_only"] | None = None
    stats_model: StatsModel | None = None
    # optional: the server's flash tier (hitcurve.schemas.extstore); absent without one
    extstore: Extstore | None = None

    def _basis_rules(self) -> None:
        if self.basis == "stats_only":
            if self.stats_model is None:
                raise ValueError("basis stats_only: stats_model is required")
            if self.classes:
                raise ValueError("basis stats_only: classes must be empty (nothing per class is measured)")
            sm = self.stats_model
            if sm.fitted:
                if sm.points is None or sm.current_items <= 0:
                    raise ValueError("stats_model: a fitted model needs points and current_items > 0")
                _check_curve("stats_model", sm.points, self.curve_points)
                if sm.points[-1][0] < sm.current_items:
                    raise ValueError(
                        f"stats_model: the last curve size ({sm.points[-1][0]:g}) must cover "
                        f"current_items ({sm.current_items:g})"
                    )
        elif self.stats_model is not None:
            raise ValueError("stats_model is only sent with basis stats_only")

    def _breakdown_rules(self) -> None:
        curves: list[tuple[str, list[tuple[float, float]]]] = []
        if self.ttl_points is not None:
            curves.append(("ttl_points", self.ttl_points))
        if self.ttl is not None:
            curves.append(("ttl.oblivious_points", self.ttl.oblivious_points))
        for c in self.classes:
            if c.curve.ttl_points is not None:
                curves.append((f"class {c.id} ttl_points", c.curve.ttl_points))
        names: set[str] = set()
        for p in self.prefixes or []:
            if p.prefix in names:
                raise ValueError(f"prefix {p.prefix!r} appears twice")
            names.add(p.prefix)
            if p.points:  # empty before the agent knew memcached's limit
                curves.append((f"prefix {p.prefix!r}", p.points))
            self._whatif_rules(p)
        grid = self.ttl_whatif_ttls_s
        if grid is not None and any(b <= a for a, b in zip(grid, grid[1:], strict=False)):
            raise ValueError("ttl_whatif_ttls_s: TTLs must be strictly increasing")
        check = _to_check([pts for _, pts in curves], self.curve_points)
        for (where, pts), suspect in zip(curves, check, strict=True):
            if suspect:
                _check_curve(where, pts, self.curve_points)

    def _whatif_rules(self, p: PrefixStat) -> None:
        if p.ttl_whatif is None:
            return
        if self.ttl_whatif_ttls_s is None:
            raise ValueError(f"prefix {p.prefix!r}: ttl_whatif needs ttl_whatif_ttls_s (its TTL grid)")
        n = len(self.ttl_whatif_ttls_s) + 1
        for name in ("hit_ratio", "live_byte_s"):
            got = len(getattr(p.ttl_whatif, name))
            if got != n:
                raise ValueError(
                    f"prefix {p.prefix!r}: ttl_whatif.{name} has {got} values, expected {n} (one per TTL of "
                    "ttl_whatif_ttls_s plus column 0)"
                )

    @model_validator(mode="after")
    def _rules(self) -> "Snapshot":
        _check_times(self.window.start, self.window.end, "window")
        self._basis_rules()
        self._breakdown_rules()
        if self.extstore is not None:
            items = {c.id: c.items for c in self.classes}
            for h in self.extstore.ram.classes:
                if h.id in items and h.header_items > items[h.id]:
                    raise ValueError(f"extstore: class {h.id} has more header_items than items")
        seen: set[int] = set()
        check = _to_check([c.curve.points for c in self.classes], self.curve_points)
        for c, suspect in zip(self.classes, check, strict=True):
            where = f"class {c.id}"
            if c.id in seen:
                raise ValueError(f"{where}: class id appears twice")
            seen.add(c.id)
            pts = c.curve.points
            if suspect:
                _check_curve(where, pts, self.curve_points)
            if pts[-1][0] < c.curve.current_items:
                raise ValueError(
                    f"{where}: the last curve size ({pts[-1][0]:g}) must cover current_items "
                    f"({c.curve.current_items})"
                )
        return self


HexKey = Annotated[str, StringConstraints(pattern=r"^[0-9a-fA-F]{16}$")]


_Col = Field(max_length=MAX_RECORDS, fail_fast=True)


class Records(_Strict):
    ts_us: Annotated[list[Annotated[int, Field(ge=0, le=MAX_TS_US)]], _Col]
    key: Annotated[list[HexKey], _Col]
    op: Annotated[list[Annotated[int, Field(ge=1, le=5)]], _Col]
    size: Annotated[list[Annotated[int, Field(ge=0, le=MAX_ITEM_BYTES)]], _Col]
    clsid: Annotated[list[Annotated[int, Field(ge=0, le=255)]], _Col]
    ttl: Annotated[list[Annotated[int, Field(ge=-1, le=MAX_TTL_S)]], _Col]
    cost_us: Annotated[list[CostUs | None], _Col]

    @model_validator(mode="after")
    def _same_length(self) -> "Records":
        n = len(self.ts_us)
        lengths = {
            name: len(getattr(self, name)) for name in ("key", "op", "size", "clsid", "ttl", "cost_us")
        }
        bad = {k: v for k, v in lengths.items() if v != n}
        if bad:
            raise ValueError(
                f"records: every column must have the same length as ts_us ({n}); differing: {bad}"
            )
        return self


class TraceServer(_Strict):
    address: Annotated[str, StringConstraints(min_length=1, max_length=300)]
    instance_id: Annotated[str, StringConstraints(min_length=1, max_length=100)]


class TraceChunk(_Strict):
    schema_version: Literal[1]
    chunk_id: uuid.UUID
    server: TraceServer
    sample_rate: Annotated[float, Field(gt=0, le=1)]
    seq: NonNeg
    start: AwareDatetime
    end: AwareDatetime
    records: Records

    @model_validator(mode="after")
    def _rules(self) -> "TraceChunk":
        _check_times(self.start, self.end, "chunk")
        return self


class Accepted(BaseModel):
    id: uuid.UUID
    status: Literal["accepted", "duplicate"]
