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


class CostAnswer(BaseModel):
    subject: Subject
    status: Literal["ok", "warming_up", "unknown", "above_curve", "no_prices"] = Field(
        description="ok: the cost-optimal size is known; warming_up and unknown as in the sizing answer "
        "(hitcurve/rules/knowledge.py): no optimum, no -m; unknown also when a size past the part of the "
        "curve the agent has seen could still cost less (its memory alone would not cost more than the "
        "optimum found); above_curve: the agent has seen the whole curve and the total cost still falls "
        "at its end (optimal_memory_bytes_at_least); no_prices: no miss cost (enter one in the cluster's "
        "settings, or a CPU price for the measured one) or no reads measured"
    )
    basis: str
    policy: str | None = None
    prices: CostPrices
    optimal_memory_bytes: int | None = Field(default=None, description="the size of least total cost")
    optimal_memory_bytes_at_least: int | None = None
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
    catalogue_as_of: str | None = Field(default=None, description="the node catalogue's date")
    catalogue_sources: list[str] = Field(
        default_factory=list, description="the node catalogue's source pages"
    )
    unknown_until: str | None = None
    curve: CurveInfo
    message: str
