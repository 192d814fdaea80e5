"""The cost answer's public shape (GET /sizing/.../cost; the dashboard, the weekly report and
/metrics read the same model)."""

from typing import Literal

from pydantic import BaseModel, Field

from hitcurve.schemas.sizing import CurveInfo, Subject

MissCostSource = Literal["entered", "measured"]


class CostPoint(BaseModel):
    memory_bytes: float
    hit_ratio: float
    memory: float = Field(description="memory's cost per month at this size")
    misses: float = Field(description="the misses' cost per month at this size")
    total: float


class CostPrices(BaseModel):
    memory_per_gib_month: float = Field(description="the cluster's price of memory per GiB-month")
    miss_cost_per_million: float | None = Field(
        description="what a million misses cost (the cluster's entered figure, or measured: the agent's "
        "mean recompute time per miss, from the miss to the SET that refills it, priced as CPU time); "
        "null when neither is known"
    )
    miss_cost_source: MissCostSource | None = None
    recompute_seconds_per_miss: float | None = Field(
        default=None, description="measured: the agents' mean miss-to-set time, reads-weighted (seconds)"
    )
    cpu_price_per_hour: float | None = Field(
        default=None, description="measured: the cluster's price of one CPU-hour the refill is priced at"
    )
    reads_per_second: float | None = Field(
        description="the subject's reads (gets) per second over its recent windows; null without windows"
    )


class NodeOptionOut(BaseModel):
    provider: str
    name: str
    count: int = Field(description="the fewest nodes of this type whose memcached memory holds the size")
    memory_bytes: float = Field(description="what that many nodes hold")
    monthly: float | None = Field(
        description="count x the type's price per hour x 730 h; null without a price"
    )


class ServerlessOut(BaseModel):
    """A serverless memcached for the subject's target hit rate (hitcurve/cost/serverless.py)."""

    name: str = Field(description="the serverless service the catalogue prices (node_types.json)")
    region: str
    target_hit_ratio: float
    status: str = Field(
        description="the memory answer's status for the target (GET /sizing/.../memory); ok has a maximum"
    )
    data_storage_maximum_gb: int | None = Field(
        default=None,
        description="CacheUsageLimits.DataStorage.Maximum to allow: the one -m to set for the target "
        "(summed over a cluster's nodes), in whole GB (10^9 bytes) rounded up",
    )
    metered_gb: float | None = Field(
        default=None, description="the storage billed when full: the maximum, at least the service's minimum"
    )
    storage_per_month: float | None = None
    requests_per_month: float | None = Field(
        default=None,
        description="the reads plus a refilling SET per miss at the target, at 1 ECPU each (a floor: a "
        "request over 1 KB counts one per KB)",
    )
    ecpu_per_second: float | None = None
    total_per_month: float | None = None
    per_gb_hour: float | None = None
    per_million_ecpu: float | None = None
    message: str


class PrefixCostOut(BaseModel):
    """A prefix whose misses the cluster prices apart (its servers summed)."""

    prefix: str
    miss_cost_per_million: float = Field(description="what a million of this prefix's misses cost")
    read_share: float = Field(description="its share of the subject's reads in the agents' windows")
    hit_ratio: float = Field(
        description="its hit ratio inside the shared pool at the optimum (ok) or the least found: its own "
        "curve at the bytes it would hold there (hitcurve/breakdown/poolsplit.py)"
    )


class CostAnswer(BaseModel):
    subject: Subject
    status: Literal["ok", "warming_up", "unknown", "above_curve", "past_curve", "no_prices"] = Field(
        description="ok: the cost-optimal size is known; warming_up and unknown as in the sizing answer "
        "(hitcurve/rules/knowledge.py): no optimum, no -m; unknown also when a size past the part of the "
        "curve the agent has seen could still cost less (its memory alone would not cost more than the "
        "optimum found); above_curve: the agent has seen the whole curve and the total cost still falls "
        "at its end (optimal_memory_bytes_at_least); past_curve: the total has a least inside the curve "
        "(optimal_within_curve_bytes) but the curve still rises at its end and a larger size, whose memory "
        "alone costs less than that least, could cost less: the optimum is there or past the curve's end "
        "(searched_bytes_max), no -m; no_prices: no miss cost (enter one in the cluster's settings, or a "
        "CPU price for the measured one) or no reads measured"
    )
    basis: str
    policy: str | None = None
    prices: CostPrices
    optimal_memory_bytes: int | None = Field(default=None, description="the size of least total cost")
    optimal_memory_bytes_at_least: int | None = None
    optimal_within_curve_bytes: int | None = Field(
        default=None,
        description="past_curve: the size of least total cost within the curve's reach (the optimum, "
        "unless a size past the curve's end costs less)",
    )
    optimal_memory_limit_bytes: int | None = Field(
        default=None, description="optimal_memory_bytes as memcached's -m (per node for a cluster)"
    )
    optimal_memory_bytes_min: int | None = Field(
        default=None,
        description="the band of the optimum: the least of the cost-optimal sizes of the band's two sides "
        "and the curve's (hitcurve/rules/band.py, at its stated confidence)",
    )
    optimal_memory_bytes_max: int | None = Field(
        default=None, description="the most of them; null when that side's optimum may lie past what is seen"
    )
    optimal_memory_limit_bytes_min: int | None = None
    optimal_memory_limit_bytes_max: int | None = None
    confidence: float | None = None
    nodes: int | None = Field(default=None, description="the cluster's nodes, for which the -m is per node")
    optimal: CostPoint | None = Field(default=None, description="the total cost per month at the optimum")
    today: CostPoint | None = Field(default=None, description="the cost per month at today's memory")
    saving_per_month: float | None = Field(
        default=None, description="today's total minus the optimum's (> 0: the optimum is cheaper)"
    )
    points: list[CostPoint] = Field(
        default_factory=list, description="the cost curve over the sizes searched, for a chart"
    )
    searched_bytes_min: float | None = None
    searched_bytes_max: float | None = Field(
        default=None, description="the sizes searched end here: the curve's end, or as far as it is seen"
    )
    prefix_costs: list[PrefixCostOut] = Field(
        default_factory=list,
        description="the priced prefixes (the cluster's prefix_miss_costs) with a curve in the agents' "
        "windows: misses(x) = reads x [C (1 - H(x)) + sum (C_P - C) s_P (1 - h_P(x))] "
        "(hitcurve/cost/prefixes.py)",
    )
    prefixes_without_curve: list[str] = Field(
        default_factory=list,
        description="priced prefixes no window had a curve for (too few reads, or not among the agent's "
        "top prefixes): priced at the cluster's miss cost",
    )
    node_options: list[NodeOptionOut] = Field(
        default_factory=list,
        description="ok: the managed node types that hold the optimal size, and how many of each "
        "(hitcurve/cost/node_types.json; the priced cheapest first)",
    )
    cheapest_node: NodeOptionOut | None = Field(
        default=None,
        description="the cheapest priced type and count (null: no type in the catalogue has a price)",
    )
    memorystore_nodes: int | None = Field(
        default=None, description="Memorystore for Memcached: the fewest nodes of its largest node memory"
    )
    serverless: ServerlessOut | None = Field(
        default=None,
        description="a serverless cache for the cluster's target: the maximum data storage to allow and "
        "the monthly bill at it (null for a server in no cluster, or with no serverless entry)",
    )
    catalogue_as_of: str | None = Field(default=None, description="the node catalogue's date")
    catalogue_sources: list[str] = Field(
        default_factory=list, description="the node catalogue's source pages"
    )
    unknown_until: str | None = None
    curve: CurveInfo
    message: str


class PolicyMoneyOut(BaseModel):
    policy: str
    memory_bytes_for_target: float | None = Field(
        description="the memory the policy needs for the target on its simulated sizes (linear between "
        "them); null when its largest size falls short"
    )
    memory_bytes_for_target_at_least: float | None = Field(
        default=None, description="null memory_bytes_for_target: the target needs more than this"
    )
    memory_per_month_for_target: float | None = Field(description="that memory at the cluster's price")
    memory_saving_per_month: float | None = Field(
        description="LRU's memory for the target minus this policy's, at the cluster's price (> 0: cheaper)"
    )
    hit_ratio_at: float | None = Field(description="the simulated hit ratio at the compared memory")
    misses_per_month_at: float | None = Field(
        description="what the policy's misses cost a month at the compared memory: entered, its misses "
        "at the cluster's miss cost; measured, the refill time of its misses from the sample, scaled to "
        "the traffic, at the cluster's CPU-hour price"
    )
    misses_saving_per_month: float | None = Field(description="LRU's minus this policy's (> 0: cheaper)")


class PolicyCostAnswer(BaseModel):
    run_id: str
    target_hit_ratio: float | None = Field(
        description="the cluster's target (null: the subject is in no cluster)"
    )
    memory_bytes: float = Field(description="the memory the misses are compared at")
    prices: CostPrices
    rows: list[PolicyMoneyOut] = Field(default_factory=list, description="LRU first, then by name")
    message: str
