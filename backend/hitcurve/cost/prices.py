"""A subject's prices for the cost answer (from the database): memory at its cluster's price per
GiB-month; a miss at the cluster's entered cost per million misses, or measured: the agents'
mean miss-to-set time (each class's cost_us, the time from a miss to the SET that refilled it)
counted as that much CPU time at the cluster's CPU-hour price; and the reads per second of its
servers' recent windows (crud.costs)."""

import uuid
from collections.abc import Sequence

from sqlalchemy.orm import Session

from hitcurve.crud.costs import window_rates
from hitcurve.models import Cluster
from hitcurve.schemas.cost import CostPrices


def measured_per_million(refill_seconds: float | None, cpu_price_per_hour: float | None) -> float | None:
    """A million misses each taking `refill_seconds` of one CPU at `cpu_price_per_hour`. The
    miss-to-set time is the client's wall time, so this counts the refill as busy CPU all along
    (an upper bound when the refill waits on a database or the network)."""
    if refill_seconds is None or cpu_price_per_hour is None:
        return None
    return refill_seconds * 1e6 * cpu_price_per_hour / 3600.0


def cluster_prices(db: Session, org_id: uuid.UUID, c: Cluster, server_ids: Sequence[uuid.UUID]) -> CostPrices:
    rates = window_rates(db, org_id, server_ids)
    measured = c.miss_cost_source == "measured"
    per_million = (
        measured_per_million(rates.refill_seconds_mean, c.cpu_price_per_hour)
        if measured
        else c.miss_cost_per_million
    )
    return CostPrices(
        memory_per_gib_month=float(c.price_per_gb_month),
        miss_cost_per_million=per_million,
        miss_cost_source="measured" if measured else "entered",
        recompute_seconds_per_miss=rates.refill_seconds_mean,
        cpu_price_per_hour=c.cpu_price_per_hour,
        reads_per_second=rates.reads_per_second,
    )
