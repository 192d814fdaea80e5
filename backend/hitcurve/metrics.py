"""The organization's servers, clusters and the service's health as Prometheus metric families
(OrgCollector), served by GET /metrics (hitcurve.api.routes.metrics). Metric names and labels are
the contract of deploy/grafana/hitcurve.json."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any, Literal

from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.registry import Collector
from sqlalchemy.orm import Session

from hitcurve.crud import metrics as crud
from hitcurve.sizing import server_fills, target_answer

SERVER_LABELS = ["cluster", "server", "hostname", "server_id"]
CLUSTER_LABELS = ["cluster", "cluster_id"]


def _memory_for_target(
    db: Session, subject: Literal["server", "cluster"], org_id: Any, ident: Any, target: float
) -> tuple[float, float, float | None] | None:
    """(memory for the target in bytes or NaN when unreachable, 1 if reachable, the recommended
    memory limit or None) from the same fitted curve and inverse as GET /sizing/.../memory; None
    without a curve yet."""
    ans = target_answer(db, subject, org_id, ident, target)
    if ans is None:
        return None
    rec = ans.recommended_memory_limit_bytes
    rec_f = float(rec) if rec is not None else None
    if ans.memory_bytes is None:
        return float("nan"), 0.0, rec_f
    return ans.memory_bytes, 1.0, rec_f


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
            "Memory the server's curve needs for its cluster's target (NaN: unreachable)",
            SERVER_LABELS,
        )
        s_reach = g(
            "hitcurve_server_target_reachable", "1 if the curve reaches the cluster's target", SERVER_LABELS
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
            "The recommended -m for the cluster's target (hysteresis-stable, as the sizing answer)",
            SERVER_LABELS,
        )
        warming_clusters: set[Any] = set()
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
                if need is not None:
                    s_need.add_metric(lv, need[0])
                    s_reach.add_metric(lv, need[1])
                    if need[2] is not None:
                        s_rec.add_metric(lv, need[2])
        yield from (s_hit, s_limit, s_used, s_target, s_need, s_reach, s_err, s_loss, s_flag, s_age)
        yield from (s_warm, s_fill, s_rec)

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
            "Memory the cluster's curve needs for its target (NaN: unreachable)",
            CLUSTER_LABELS,
        )
        c_reach = g(
            "hitcurve_cluster_target_reachable", "1 if the cluster's curve reaches its target", CLUSTER_LABELS
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
            "The recommended -m per node for the cluster's target (as the sizing answer)",
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
            if need is not None:
                c_need.add_metric(lv, need[0])
                c_reach.add_metric(lv, need[1])
                if need[2] is not None:
                    c_rec.add_metric(lv, need[2])
        yield from (c_hit, c_mem, c_target, c_need, c_reach, c_servers, c_age, c_warm, c_rec)

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
