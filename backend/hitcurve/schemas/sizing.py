"""The sizing answer's public shape (GET /sizing/...; the weekly report reads the same model)."""

import uuid
from datetime import datetime
from typing import Annotated, Literal

from pydantic import BaseModel, BeforeValidator, Field

# What a sizing answer (and a history or accuracy query) is about.
SubjectKind = Literal["server", "cluster"]
# Which stored curve answers: best = calibrated when there is one, else the proportional estimate.
CurveKind = Literal["best", "calibrated", "optimal", "proportional"]
# What a curve rests on: memcached's watch stream (every read seen), or its `stats`
# counters alone where `watch` is refused (ElastiCache Serverless, memcached -W): the agent's
# Che + Zipf model, a lower-confidence basis. "mixed": a cluster whose servers have both.
DataBasis = Literal["watch", "stats_only", "mixed"]
# How answers, the dashboard and the e-mails name a stats-only basis.
STATS_ONLY_LABEL = "estimated from stats only"


class Band(BaseModel):
    """The one uncertainty band of an answer (hitcurve/rules/band.py): at the stated confidence, through
    today's measured point, widening with the distance from it by the drift (the prediction error)
    and the windows' stream loss. Bytes are integers; min <= the answer <= max."""

    memory_bytes_min: int | None = Field(
        default=None,
        description="least memory (bytes) that may reach the target at the stated confidence; memory "
        "questions with an answer only (null above the curve)",
    )
    memory_bytes_max: int | None = Field(
        default=None,
        description="most memory (bytes) the target may need at the stated confidence; null when "
        "that end lies past the curve (the target may need more than the curve covers)",
    )
    memory_limit_bytes_min: int | None = Field(
        default=None,
        description="memory_bytes_min as a memory limit (-m, per node for clusters), through the same -m "
        "model as memory_limit_bytes: the recommended limit never lies below it. Past the curve "
        "(above_curve, unreachable): the -m at which the band's optimistic side reaches the target, "
        "null when it does not (memory_bytes_min stays null); memory_state compares today's -m with it",
    )
    memory_limit_bytes_max: int | None = Field(
        default=None,
        description="memory_bytes_max as a memory limit (-m, per node for clusters): the recommended limit "
        "never lies above it; null when that end lies past the curve",
    )
    hit_rate_min: float | None = Field(
        default=None, description="lowest hit rate at the answer's memory, at the stated confidence"
    )
    hit_rate_max: float | None = Field(
        default=None,
        description="highest hit rate at the answer's memory, at the stated confidence; null past "
        "the curve's last point",
    )
    confidence: float | None = Field(
        default=None,
        description="the band's confidence level (0.9: nine in ten measurements fall inside). It is "
        "narrowest at today's measured point and widens with the distance from it, by the drift and "
        "the window's stream loss",
    )
    basis: Literal["server_record", "benchmark_prior"] | None = Field(
        default=None,
        description="what the drift rests on. benchmark_prior: no prediction of this server (of a "
        "cluster: of its servers) has been graded yet, so the drift is the accuracy benchmark's "
        "measured prediction error (hitcurve/rules/band.py PRIOR_DRIFT_PP); server_record: its graded "
        "predictions (the accuracy record: each window's curve at the next window's memory against "
        "the hit rate memcached measured), shrunk toward that prior with the weight of "
        "PRIOR_WEIGHT predictions",
    )
    graded_predictions: int | None = Field(
        default=None,
        description="the graded predictions the drift uses (accuracy records graded on full memcached, "
        "newest 60)",
    )
    drift_pp: float | None = Field(
        default=None,
        description="the drift: the prediction error (percentage points; root mean square of the "
        "graded predictions shrunk toward the prior) the band applies at today's memory before the "
        "confidence factor",
    )
    nodes_min: int | None = Field(
        default=None, description="nodes questions: memory_bytes_min over the node size, in nodes"
    )
    nodes_max: int | None = Field(
        default=None, description="nodes questions: memory_bytes_max over the node size, in nodes"
    )


# The one meaning of a measured hit ratio in every body that states one for a server or cluster
# today (the sizing answer, the servers and clusters lists, the curves): hitcurve.rules.windows.measured_over.
MEASURED_HIT_RATIO_DOC = (
    "memcached's measured hit ratio (hits / reads) over the recent good windows the sizing answers "
    "rest on, each window weighted by its reads (a quiet or loss-flagged window is left out, as from "
    "the curve; before a server's first curve, its newest window's); a cluster's: its members', "
    "weighted by their reads. The same figure in the sizing answer, GET /servers, GET /clusters and "
    "the curves; null without reads"
)


class CurveInfo(BaseModel):
    computed_at: datetime
    window_end: datetime
    age_seconds: float = Field(description="seconds since the end of the window the curve was measured in")
    current_bytes: int | None
    measured_hit_ratio: float | None = Field(description=MEASURED_HIT_RATIO_DOC)
    max_bytes: Annotated[int, BeforeValidator(round)] = Field(description="largest memory the curve covers")
    max_hit_ratio: float = Field(description="hit ratio at max_bytes")
    stream_loss_ratio: float | None = Field(
        default=None,
        description="server curves: share of memcached's watch events the agent lost in the curve's "
        "window (lost events shorten the measured reuse distances)",
    )
    stream_loss_flagged: bool | None = Field(
        default=None, description="server curves: the loss was above the agent's threshold"
    )


class Subject(BaseModel):
    type: SubjectKind
    id: uuid.UUID


class SizingAnswer(BaseModel):
    subject: Subject
    question: Literal["memory_for_hit_ratio", "hit_ratio_at_memory", "nodes_for_hit_ratio"]
    status: Literal["ok", "warming_up", "unknown", "above_curve", "unreachable"] = Field(
        description="ok; warming_up: memcached is still filling its memory (or just filled it): the "
        "answer is unknown until it is full (fill_ratio, full_in_seconds), and a memory question "
        "carries no memory figure, -m or bound; unknown: memcached is full but the agent has not yet "
        "seen out to where the target lies (its ghost holds only the keys evicted since it attached: "
        "seen_up_to_bytes, seen_all_in_seconds), again without a memory figure, -m or bound "
        "(hitcurve/knowledge.py); above_curve: the agent has seen the whole curve and the target or "
        "memory lies past it (or, on a hit-rate question, past where it has seen so far) -- "
        "memory_bytes_at_least, or hit_ratio_at_least, is then a lower bound, and the message names "
        "the remedy (a larger agent --ghost-factor and its agent memory); unreachable: the agent has "
        "seen the whole curve and no memory size reaches the target (the curve has levelled off "
        "below it)"
    )
    basis: Literal["estimate", "calibrated", "simulated"] = Field(
        description="which curve answers: estimate (the agent's curves merged), calibrated (fitted "
        "to the measured hit ratio), simulated (a policy simulation on the sampled trace)"
    )
    data_basis: DataBasis = Field(
        default="watch",
        description="what the curve rests on. watch: the agent read memcached's watch stream "
        "(every read, its reuse distances). stats_only: memcached refused `watch` (ElastiCache "
        "Serverless, memcached -W), so the curve is a model (Che's approximation with Zipf "
        "popularity) fitted by the agent to memcached's `stats` counters: it passes through today's "
        "measured hit rate, but its shape away from today's memory is the model's, and the band is "
        "wider (hitcurve/rules/band.py STATS_ONLY_PER_DOUBLING_PP, measured against real memcached by "
        "bench/accuracy/bench_stats_only.py). mixed: a cluster whose servers rest on both",
    )
    ttl_aware: bool = Field(
        default=False,
        description="true when the server's traffic carries TTLs and the curve models expiry: "
        "the answer rests on the agent's merged TTL-aware curve (SHARDS++ as in 'TTLs Matter', "
        "EuroSys'24: an item leaves at its TTL, so a read past it is a miss at any size and expired "
        "items take no memory), calibrated and policy-corrected like any curve. The traffic carries "
        "TTLs when expiry moves the agent's curve by at least 1 pp at some size (hitcurve/rules/ttl.py "
        "TTL_CURVE_GAP_PP). false: the LRU slab-class curves (no TTLs that matter, an agent without "
        "the breakdown, curve=optimal, or a simulated policy). A cluster's answer is TTL-aware when "
        "every member's curve in the cluster curve is. Gap: touch/gat TTL changes are not in "
        "memcached's watch stream, so an item whose TTL was extended that way is modelled as expiring "
        "at its stored TTL",
    )
    policy: str | None = Field(description="the replacement policy of a simulated basis")
    target_hit_ratio: float | None = None
    memory_bytes: int | None = Field(
        default=None,
        description="memory questions: bytes of slab memory the curve needs for the target (null above "
        "the curve); hit-rate questions: the memory asked about",
    )
    hit_ratio: float | None = Field(
        default=None,
        description="hit-rate questions: the curve's hit rate at memory_bytes (above_curve: only a "
        "lower bound, the same as hit_ratio_at_least)",
    )
    hit_ratio_at_least: float | None = Field(
        default=None,
        description="above_curve on a hit-rate question: memory_bytes lies past the curve's last point "
        "or past how far the agent's ghost sees (curve points there are held flat, not measured), so "
        "the hit rate there is at least this; null otherwise",
    )
    nodes: int | None = Field(
        default=None,
        description="nodes questions: the nodes of node_size_bytes the target needs; cluster memory and "
        "hit-rate questions: the cluster's nodes today, for which memory_limit_bytes is the -m of each",
    )
    node_size_bytes: int | None = Field(
        default=None,
        description="nodes questions: the node size asked (or the cluster's); cluster memory and "
        "hit-rate questions: the cluster's node size setting (null while not set)",
    )
    nodes_at_least: int | None = Field(
        default=None,
        description="above_curve on a nodes question: the target needs at least this many nodes of "
        "node_size_bytes (more than memory_bytes_at_least in all); null otherwise",
    )
    memory_limit_bytes: int | None = Field(
        default=None,
        description="this window's curve alone: the memcached memory limit (-m, a whole number of MiB) "
        "whose 1 MiB slab pages hold memory_bytes (the curve's memory is slab pages, each class's "
        "chunk rounding counted; memcached holds -m pages once full, or one page a class when those "
        "are more). It moves with every window; the one -m to set is "
        "recommended_memory_limit_bytes. "
        "Cluster answers: the -m of each node (memory_bytes over `nodes`, the nodes today). The hash "
        "table and connection buffers come on top",
    )
    current_memory_limit_bytes: int | None = Field(
        default=None,
        description="memcached's memory limit today (limit_maxbytes, -m); cluster answers: summed over "
        "its nodes",
    )
    used_bytes: int | None = Field(
        default=None,
        description="slab memory memcached has taken today (total_malloced), which counts toward -m; "
        "cluster answers: summed over its nodes",
    )
    memory_bytes_at_least: int | None = Field(
        default=None,
        description="above_curve: the target needs more than this many bytes (the curve's reach)",
    )
    memory_limit_bytes_at_least: int | None = Field(
        default=None,
        description="above_curve: the -m the target needs more than (per node for clusters): "
        "memory_bytes_at_least through the same -m model as memory_limit_bytes, so a bound reads in "
        "the unit memcached is started with",
    )
    fill_ratio: float | None = Field(
        default=None, description="share of -m memcached has taken (total_malloced / limit_maxbytes)"
    )
    full_in_seconds: int | None = Field(
        default=None, description="warming_up: seconds until memcached's memory is full, at its fill rate"
    )
    recommended_memory_limit_bytes: int | None = Field(
        default=None,
        description="the one -m to set (per node for clusters), the value the dashboard, the e-mail, "
        "the alerts, /metrics and the autoscaler client all show: it moves only after the raw "
        "memory_limit_bytes has stayed outside ±10 % (at least 2 MiB) of it for 3 consecutive windows "
        "on one side, then to their median; replayed over the recent windows that had seen out to the "
        "target (a window taken while memcached filled or before the agent saw that far answers "
        "nothing) from a fixed period grid (hitcurve/rules/hysteresis.py recommend_periodic), the same for "
        "servers and clusters, so that on a stationary workload it changes at most once per 32 "
        "windows; always inside the band (band.memory_limit_bytes_min .. max). Null while the answer "
        "is not ok",
    )
    stable: bool | None = Field(
        default=None,
        description="the answer has held: the last 3 windows' raw answers were all inside the recommended "
        "limit's hysteresis band; above_curve / unreachable (no -m to hold): the last 3 windows were all "
        "past the curve too. A memory alert waits for it (memory_state at_edge until then); false while "
        "warming up (the answers are provisional)",
    )
    outside_memory_limit_bytes: int | None = Field(
        default=None,
        description="memory memcached uses outside -m at the answer's size: its hash table "
        "(connection buffers not counted)",
    )
    flash_note: str | None = Field(
        default=None,
        description="a server with a flash tier (memcached's extstore): its size, how full it is, the share "
        "of hits it served, and that the curve and this answer are for RAM (-m) with that flash tier as it "
        "is (no two-tier curve yet); null without one (hitcurve/sizing/flash.py)",
    )
    memory_limit_note: str | None = Field(
        default=None,
        description="set when memory_limit_bytes (this window's curve alone) differs from the -m to set "
        "(recommended_memory_limit_bytes): what it is and why it differs, in the one line every surface "
        "shows beside the -m to set",
    )
    memory_state: Literal["short", "at_edge", "enough"] | None = Field(
        default=None,
        description="memory questions with a known answer: today's -m (current_memory_limit_bytes) against "
        "the answer (hitcurve/rules/shortage.py). short: even the band's optimistic end "
        "(band.memory_limit_bytes_min, all nodes) lies above today's -m, or no -m on the curve reaches the "
        "target and the band's optimistic side does not either: the only state a memory alert opens on; "
        "at_edge: today's -m lies inside the band, below the -m to set (the estimate cannot tell a "
        "shortage from none: no alert); enough: today's -m is at or above the -m to set. Null while "
        "the answer is unknown (warming_up, unknown) or without today's -m",
    )
    memory_state_words: str | None = Field(
        default=None,
        description='memory_state in the one sentence every surface shows ("at the edge: within the '
        "estimate's band (-m 63 – 69); ...\")",
    )
    unknown_until: str | None = Field(
        default=None,
        description="warming_up and unknown: what the answer waits for, in the words every surface shows "
        '("unknown until memcached is full ...", "unknown until the agent has seen further ...", with '
        "the fill or how far the agent has seen, and an ETA); null for a known answer",
    )
    seen_up_to_bytes: int | None = Field(
        default=None,
        description="how far the curve is measured (memory axis, bytes): the agent's ghost reach, capped "
        "by memcached's evictions since the agent attached (today's memory x (1 + evictions / items)); "
        "null when the agent has seen the whole curve. Past it the curve is held flat, not measured",
    )
    seen_all_in_seconds: int | None = Field(
        default=None,
        description="seconds until the agent has seen the whole curve, at memcached's eviction rate of the "
        "last minutes; null when it has, or when memcached is not evicting",
    )
    windows: int | None = Field(
        default=None,
        description="server answers: how many recent windows the curve rests on (quiet and "
        "loss-flagged windows are left out)",
    )
    band: Band
    curve: CurveInfo
    message: str

    model_config = {
        "json_schema_extra": {
            "examples": [
                {
                    "subject": {"type": "server", "id": "3f0c2a9e-3f55-4a0e-9a53-0d6a5e1c2b11"},
                    "question": "memory_for_hit_ratio",
                    "status": "ok",
                    "basis": "calibrated",
                    "data_basis": "watch",
                    "ttl_aware": False,
                    "policy": None,
                    "target_hit_ratio": 0.92,
                    "memory_bytes": 12240656794,
                    "memory_limit_bytes": 12243173376,
                    "current_memory_limit_bytes": 8589934592,
                    "used_bytes": 8589934592,
                    "memory_bytes_at_least": None,
                    "fill_ratio": 1.0,
                    "full_in_seconds": None,
                    "recommended_memory_limit_bytes": 12243173376,
                    "stable": True,
                    "outside_memory_limit_bytes": 268435456,
                    "windows": 5,
                    "hit_ratio": None,
                    "hit_ratio_at_least": None,
                    "nodes": None,
                    "node_size_bytes": None,
                    "band": {
                        "memory_bytes_min": 11274289152,
                        "memory_bytes_max": 13421772800,
                        "hit_rate_min": 0.905,
                        "hit_rate_max": 0.935,
                        "confidence": 0.9,
                        "basis": "server_record",
                        "graded_predictions": 60,
                        "drift_pp": 0.9,
                        "nodes_min": None,
                        "nodes_max": None,
                    },
                    "curve": {
                        "computed_at": "2026-11-22T12:01:05Z",
                        "window_end": "2026-11-22T12:01:00Z",
                        "age_seconds": 42.0,
                        "current_bytes": 8589934592,
                        "measured_hit_ratio": 0.8358,
                        "max_bytes": 17179869184,
                        "max_hit_ratio": 0.955,
                    },
                    "message": "a hit rate of 92 % needs 11.4 GiB: set -m 11676 (90 % band "
                    "10.5 GiB – 12.5 GiB), calibrated curve from 5 windows, 42 s old; the band rests on 60 "
                    "graded predictions of this server and the benchmark's error (drift 0.9 pp)",
                }
            ]
        }
    }


class NotEnoughData(BaseModel):
    detail: str
    code: Literal["not_enough_data"]
