"""The organization's servers, clusters and the service's health as Prometheus metric families
(OrgCollector), served by GET /metrics (hitcurve.api.routes.metrics). Metric names and labels are
the contract of deploy/grafana/hitcurve.json."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Literal

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.orm import Session

from hitcurve.core.domain import NotEnoughDataError
from hitcurve.cost.subject import subject_cost
from hitcurve.crud import metrics as crud
from hitcurve.rules import knowledge, shortage
from hitcurve.sizing.answers import target_answer
from hitcurve.sizing.cluster import server_fills

SERVER_LABELS = ["cluster", "server", "hostname", "server_id"]
CLUSTER_LABELS = ["cluster", "cluster_id"]


@dataclass(frozen=True)
class _Need:
    """A subject's samples of its target answer (the very answer of GET /sizing/.../memory)."""

    known: bool
    memory: float  # bytes for the target, NaN when past the curve or unknown
    reachable: float  # 1 if reachable, NaN while unknown
    to_set: float | None  # the -m to set
    state: str | None  # hitcurve.rules.shortage: today's -m against the answer


def _memory_for_target(
    db: Session, subject: Literal["server", "cluster"], org_id: Any, ident: Any, target: float
) -> _Need | None:
    """The samples of a subject's answer for its target; None without a curve yet. An answer not
    known yet (hitcurve.knowledge: memcached filling, or the agent has not seen out to the target)
    exports `target_known` 0 and none of the others, so a rule on target_reachable == 0 or on
    memory_short does not fire on every restart."""
    ans = target_answer(db, subject, org_id, ident, target)
    if ans is None:
        return None
    nan = float("nan")
    if not knowledge.known(ans.status):
        return _Need(False, nan, nan, None, None)
    rec = ans.recommended_memory_limit_bytes
    rec_f = float(rec) if rec is not None else None
    if ans.memory_bytes is None:
        return _Need(True, nan, 0.0, rec_f, ans.memory_state)
    return _Need(True, float(ans.memory_bytes), 1.0, rec_f, ans.memory_state)


def _add_cost(db: Session, org_id: Any, cluster_id: Any, lv: list[str], *families: GaugeMetricFamily) -> None:
    """A cluster's samples of its cost answer (the very answer of GET /sizing/clusters/{id}/cost):
    known always, the optimum, its total and the saving only while known."""
    known, memory, total, saving = families
    try:
        a = subject_cost(db, "cluster", org_id, cluster_id)
    except NotEnoughDataError:
        return
    ok = a.status == "ok" and a.optimal is not None and a.optimal_memory_bytes is not None
    known.add_metric(lv, 1.0 if ok else 0.0)
    if ok and a.optimal is not None and a.optimal_memory_bytes is not None:
        memory.add_metric(lv, float(a.optimal_memory_bytes))
        total.add_metric(lv, a.optimal.total)
        if a.saving_per_month is not None:
            saving.add_metric(lv, a.saving_per_month)


def _add_target(
    need: _Need | None,
    lv: list[str],
    known: GaugeMetricFamily,
    memory: GaugeMetricFamily,
    reachable: GaugeMetricFamily,
    to_set: GaugeMetricFamily,
    short: GaugeMetricFamily,
    edge: GaugeMetricFamily,
) -> None:
    """A subject's samples of its target answer (_memory_for_target): target_known always, the
    memory, reachable, -m to set and today's -m against it only while the answer is known."""
    if need is None:
        return
    known.add_metric(lv, 1.0 if need.known else 0.0)
    if need.known:
        memory.add_metric(lv, need.memory)
        reachable.add_metric(lv, need.reachable)
    if need.to_set is not None:
        to_set.add_metric(lv, need.to_set)
    if need.state is not None:
        short.add_metric(lv, 1.0 if need.state == shortage.SHORT else 0.0)
        edge.add_metric(lv, 1.0 if need.state == shortage.AT_EDGE else 0.0)


def _state_families(
    g: Callable[[str, str, list[str]], GaugeMetricFamily], who: str, labels: list[str]
) -> tuple[GaugeMetricFamily, GaugeMetricFamily]:
    """hitcurve_<who>_memory_short and _memory_at_edge (hitcurve.rules.shortage, the sizing answer's
    memory_state): the one rule the memory alert opens on."""
    return (
        g(
            f"hitcurve_{who}_memory_short",
            "1 when today's -m is short of the target for certain: even the band's optimistic -m lies "
            "above it (the sizing answer's memory_state short, the only state the memory alert opens "
            "on); only while the answer is known and today's -m is known",
            labels,
        ),
        g(
            f"hitcurve_{who}_memory_at_edge",
            "1 when today's -m lies inside the answer's band, below the -m to set (memory_state "
            "at_edge: the estimate cannot tell a shortage from none, no alert); only while the answer "
            "is known and today's -m is known",
            labels,
        ),
    )


class OrgCollector(Collector):
    def __init__(self, db: Session, org_id: Any):
        self.db = db
        self.org_id = org_id

    def collect(self) -> Iterator[Metric]:
        now = datetime.now(UTC)
        servers = crud.servers(self.db, self.org_id)
        clusters = crud.clusters(self.db, self.org_id)
        targets = {c.id: c.target_hit_ratio for c in clusters}

        def g(name: str, doc: str, labels: list[str], unit: str = "") -> GaugeMetricFamily:
            return GaugeMetricFamily(name, doc, labels=labels, unit=unit)

        s_hit = g(
            "hitcurve_server_hit_ratio",
            "Measured hit ratio of the latest window (get_hits / gets)",
            SERVER_LABELS,
        )
        s_limit = g(
            "hitcurve_server_memory_limit_bytes", "memcached's memory limit (limit_maxbytes)", SERVER_LABELS
        )
        s_used = g(
            "hitcurve_server_memory_used_bytes",
            "Bytes memcached stores (stats bytes) at the latest window's end",
            SERVER_LABELS,
        )
        s_target = g(
            "hitcurve_server_target_hit_ratio", "Target hit ratio of the server's cluster", SERVER_LABELS
        )
        s_need = g(
            "hitcurve_server_memory_for_target_bytes",
            "Memory the server's curve needs for its cluster's target (NaN: past the curve); only while "
            "the answer is known (target_known 1)",
            SERVER_LABELS,
        )
        s_reach = g(
            "hitcurve_server_target_reachable",
            "1 if the curve reaches the cluster's target; only while the answer is known (target_known 1)",
            SERVER_LABELS,
        )
        s_known = g(
            "hitcurve_server_target_known",
            "1 when the answer for the cluster's target is known; 0 while memcached fills or the agent has "
            "not yet seen out to the target (the sizing answer's warming_up / unknown)",
            SERVER_LABELS,
        )
        s_err = g(
            "hitcurve_server_curve_error_pp",
            "Mean absolute error of the curve's predictions over the last 24 h, percentage points",
            SERVER_LABELS,
        )
        s_loss = g(
            "hitcurve_server_stream_loss_ratio",
            "Share of memcached's watch events the agent lost in the latest window",
            SERVER_LABELS,
        )
        s_flag = g(
            "hitcurve_server_stream_loss_flagged",
            "1 if the latest window's loss was above the agent's threshold",
            SERVER_LABELS,
        )
        s_age = g(
            "hitcurve_server_last_snapshot_age_seconds",
            "Seconds since the latest upload was received",
            SERVER_LABELS,
        )
        s_warm = g(
            "hitcurve_server_warming_up",
            "1 while memcached is still filling its memory (answers are provisional), else 0",
            SERVER_LABELS,
        )
        s_fill = g(
            "hitcurve_server_fill_ratio", "total_malloced / limit_maxbytes (capped at 1)", SERVER_LABELS
        )
        s_rec = g(
            "hitcurve_server_recommended_memory_limit_bytes",
            "The -m to set for the cluster's target (the sizing answer's recommended_memory_limit_bytes, the "
            "one value every surface shows); only while the answer is known",
            SERVER_LABELS,
        )
        s_short, s_edge = _state_families(g, "server", SERVER_LABELS)
        warming_clusters: set[Any] = set()
        limit_sums: dict[Any, float] = {}
        fills = server_fills(self.db, self.org_id, [s.id for s in servers])
        for s in servers:
            lv = [s.cluster, s.address, s.hostname, str(s.id)]
            fill = fills.get(s.id)
            if fill is not None:
                s_warm.add_metric(lv, 1.0 if fill.warming_up else 0.0)
                if fill.fill_ratio is not None:
                    s_fill.add_metric(lv, fill.fill_ratio)
                if fill.warming_up and s.cluster_id is not None:
                    warming_clusters.add(s.cluster_id)
            if s.measured_hit_ratio is not None:
                s_hit.add_metric(lv, s.measured_hit_ratio)
            if s.limit_maxbytes is not None:
                s_limit.add_metric(lv, s.limit_maxbytes)
                if s.cluster_id is not None:
                    limit_sums[s.cluster_id] = limit_sums.get(s.cluster_id, 0.0) + float(s.limit_maxbytes)
            if s.bytes_used is not None:
                s_used.add_metric(lv, s.bytes_used)
            if s.curve_error_pp is not None:
                s_err.add_metric(lv, float(s.curve_error_pp))
            if s.loss_ratio is not None:
                s_loss.add_metric(lv, s.loss_ratio)
                s_flag.add_metric(lv, 1.0 if s.loss_flagged else 0.0)
            if s.last_snapshot_at is not None:
                s_age.add_metric(lv, (now - s.last_snapshot_at).total_seconds())
            if s.cluster_id is not None:
                target = targets[s.cluster_id]
                s_target.add_metric(lv, target)
                need = _memory_for_target(self.db, "server", self.org_id, s.id, target)
                _add_target(need, lv, s_known, s_need, s_reach, s_rec, s_short, s_edge)
        yield from (s_hit, s_limit, s_used, s_target, s_need, s_reach, s_err, s_loss, s_flag, s_age)
        yield from (s_warm, s_fill, s_rec, s_known, s_short, s_edge)

        c_hit = g(
            "hitcurve_cluster_hit_ratio", "Measured hit ratio of the cluster's latest curve", CLUSTER_LABELS
        )
        c_mem = g(
            "hitcurve_cluster_memory_bytes",
            "Memory the cluster has today (sum over its servers)",
            CLUSTER_LABELS,
        )
        c_target = g("hitcurve_cluster_target_hit_ratio", "The cluster's target hit ratio", CLUSTER_LABELS)
        c_need = g(
            "hitcurve_cluster_memory_for_target_bytes",
            "Memory the cluster's curve needs for its target (NaN: past the curve); only while the answer "
            "is known (target_known 1)",
            CLUSTER_LABELS,
        )
        c_reach = g(
            "hitcurve_cluster_target_reachable",
            "1 if the cluster's curve reaches its target; only while the answer is known (target_known 1)",
            CLUSTER_LABELS,
        )
        c_known = g(
            "hitcurve_cluster_target_known",
            "1 when the answer for the cluster's target is known; 0 while a node's memcached fills or the "
            "agents have not yet seen out to the target (the sizing answer's warming_up / unknown)",
            CLUSTER_LABELS,
        )
        c_limit = g(
            "hitcurve_cluster_memory_limit_bytes",
            "The memory limits (-m) of the cluster's servers today, summed (compare with the -m to set "
            "x servers)",
            CLUSTER_LABELS,
        )
        c_servers = g("hitcurve_cluster_servers", "Servers assigned to the cluster", CLUSTER_LABELS)
        c_age = g(
            "hitcurve_cluster_curve_age_seconds",
            "Seconds since the end of the window of the cluster's latest curve",
            CLUSTER_LABELS,
        )
        c_warm = g(
            "hitcurve_cluster_warming_up",
            "1 while any of the cluster's servers is warming up",
            CLUSTER_LABELS,
        )
        c_rec = g(
            "hitcurve_cluster_recommended_memory_limit_bytes",
            "The -m to set per node for the cluster's target (the sizing answer's "
            "recommended_memory_limit_bytes, the one value every surface shows); only while the answer "
            "is known",
            CLUSTER_LABELS,
        )
        c_short, c_edge = _state_families(g, "cluster", CLUSTER_LABELS)
        c_cost_known = g(
            "hitcurve_cluster_cost_optimum_known",
            "1 when the cluster's cost-optimal memory is known (GET /sizing/clusters/{id}/cost status ok); "
            "0 while unknown, warming up, past the curve or without a miss cost",
            CLUSTER_LABELS,
        )
        c_cost_mem = g(
            "hitcurve_cluster_cost_optimal_memory_bytes",
            "The cluster's cost-optimal memory (the cost answer's optimal_memory_bytes); only while known",
            CLUSTER_LABELS,
        )
        c_cost_total = g(
            "hitcurve_cluster_cost_optimal_monthly",
            "Total monthly cost (memory + misses) at the cost-optimal memory; only while known",
            CLUSTER_LABELS,
        )
        c_cost_saving = g(
            "hitcurve_cluster_cost_saving_monthly",
            "Today's total monthly cost minus the optimum's; only while known",
            CLUSTER_LABELS,
        )
        for c in clusters:
            lv = [c.name, str(c.id)]
            c_warm.add_metric(lv, 1.0 if c.id in warming_clusters else 0.0)
            c_target.add_metric(lv, c.target_hit_ratio)
            c_servers.add_metric(lv, c.servers)
            if c.window_end is None:
                continue
            if c.measured_hit_ratio is not None:
                c_hit.add_metric(lv, c.measured_hit_ratio)
            if c.current_bytes is not None:
                c_mem.add_metric(lv, c.current_bytes)
            c_age.add_metric(lv, (now - c.window_end).total_seconds())
            need = _memory_for_target(self.db, "cluster", self.org_id, c.id, c.target_hit_ratio)
            _add_target(need, lv, c_known, c_need, c_reach, c_rec, c_short, c_edge)
            _add_cost(self.db, self.org_id, c.id, lv, c_cost_known, c_cost_mem, c_cost_total, c_cost_saving)
        for c in clusters:
            if c.id in limit_sums:
                c_limit.add_metric([c.name, str(c.id)], limit_sums[c.id])
        yield from (
            c_hit,
            c_mem,
            c_target,
            c_need,
            c_reach,
            c_servers,
            c_age,
            c_warm,
            c_rec,
            c_known,
            c_limit,
            c_short,
            c_edge,
            c_cost_known,
            c_cost_mem,
            c_cost_total,
            c_cost_saving,
        )

        h = crud.service_health(self.db, self.org_id)
        rate = g(
            "hitcurve_ingest_snapshots_per_second",
            f"Snapshots received per second over the last {int(crud.INGEST_WINDOW.total_seconds())} s",
            [],
        )
        rate.add_metric([], h.snapshots_received / crud.INGEST_WINDOW.total_seconds())
        lat = g(
            "hitcurve_ingest_processing_seconds",
            "Seconds from an upload's receipt to its processed curve, snapshots processed in the last 15 min",
            ["quantile"],
        )
        if h.processing_p50_s is not None and h.processing_p95_s is not None:
            lat.add_metric(["0.5"], h.processing_p50_s)
            lat.add_metric(["0.95"], h.processing_p95_s)
        pend = g("hitcurve_queue_pending", "Rows waiting for the worker", ["kind"])
        lag = g(
            "hitcurve_queue_oldest_pending_age_seconds",
            "Age of the oldest row waiting for the worker (0: none)",
            ["kind"],
        )
        fail = g(
            "hitcurve_task_failures", "Rows the worker failed or parked, received in the last hour", ["kind"]
        )
        for kind in h.pending:
            pend.add_metric([kind], h.pending[kind])
            lag.add_metric([kind], h.oldest_pending_age_s[kind])
            fail.add_metric([kind], h.failures[kind])
        alerts = g("hitcurve_open_alerts", "Open alerts by severity", ["severity"])
        for sev in ("info", "warning", "critical"):
            alerts.add_metric([sev], h.open_alerts.get(sev, 0))
        yield from (rate, lat, pend, lag, fail, alerts)
