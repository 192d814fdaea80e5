"""What a weekly report says, per organization (or one of its clusters), read from the database.

Every number comes from the computation the API serves, not a re-derivation: the sizing answer
(hitcurve.sizing: cluster_basis + memory_answer, the same code behind
GET /sizing/clusters/{id}/memory), the measured hit ratio and accuracy record over the week
(hitcurve.crud.history: history and accuracy, behind /clusters/{id}/history and
/accuracy, one bucket, the warm-up windows left out and counted), the alert rules of the
worker (stale agent, stream loss), and money as alerts.savings counts it (GiB x price per
GiB-month). Every query is scoped to the one org_id.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from hitcurve.core.domain import NotEnoughDataError
from hitcurve.cost.answer import cost_answer, cost_row
from hitcurve.cost.prices import cluster_prices
from hitcurve.cost.subject import subject_terms
from hitcurve.crud.history import accuracy, history, warmup_windows
from hitcurve.models import Alert, Cluster, Organization, Server, Snapshot
from hitcurve.notify.payloads import server_name
from hitcurve.rules import alerts as rules
from hitcurve.schemas.cost import CostAnswer
from hitcurve.schemas.sizing import SizingAnswer, Subject
from hitcurve.sizing.answers import memory_answer
from hitcurve.sizing.cluster import cluster_basis

GIB = rules.GIB
PERIOD = timedelta(days=7)
# Points sampled along the sizing curve for the e-mail's chart (PCHIP between the stored knots).
CHART_SAMPLES = 96


def monthly_cost(memory_bytes: float | None, price_per_gb_month: float) -> float | None:
    """GiB x price per GiB-month: the count alerts.savings uses for its saving per month."""
    return None if memory_bytes is None else memory_bytes / GIB * price_per_gb_month


@dataclass
class AlertLine:
    severity: str
    kind: str
    subject: str
    message: str
    since: datetime


@dataclass
class ServerIssue:
    address: str
    cluster: str | None
    problem: str


@dataclass
class ClusterReport:
    id: uuid.UUID
    name: str
    target: float
    price_per_gb_month: float
    servers: int
    # hits / gets of the cluster's servers over the period's settled windows: the warm-up windows
    # (memcached still filling, crud.history settled_only) are left out, as from the accuracy
    measured_week: float | None
    allocated_bytes: float | None
    sizing: SizingAnswer | None  # memory for the target (None: no curve yet)
    no_curve_reason: str | None
    cost_now: float | None
    cost_at_target: float | None
    savings: float | None  # per month, > 0 when the target needs less than allocated
    extra_cost: float | None  # per month, > 0 when the target needs more
    accuracy_samples: int
    accuracy_mae_pp: float | None
    accuracy_max_pp: float | None
    warmup_windows: int = 0  # windows of the period taken while memcached was still filling
    windows: int = 0  # all windows of the period
    alerts: list[AlertLine] = field(default_factory=list)
    # The curve the sizing answer read, sampled for the chart: (bytes, hit rate) and its band
    # (bytes, pessimistic, optimistic hit rate). Empty without a curve.
    curve_points: list[tuple[float, float]] = field(default_factory=list)
    band_points: list[tuple[float, float, float]] = field(default_factory=list)
    cost: CostAnswer | None = None  # the cost answer of GET /sizing/clusters/{id}/cost (None: no curve)

    @property
    def cost_line(self) -> str | None:
        """The cost-optimal memory row (cost.answer.cost_row, the answer's own words)."""
        return cost_row(self.cost) if self.cost is not None else None

    @property
    def serverless_line(self) -> str | None:
        """The serverless row: the cost answer's serverless words (the maximum data storage to allow
        for the target and its bill)."""
        s = self.cost.serverless if self.cost is not None else None
        return s.message if s is not None else None

    @property
    def warming_all_week(self) -> bool:
        """Every window of the period was taken while memcached was still filling."""
        return self.windows > 0 and self.warmup_windows == self.windows

    @property
    def warmup_note(self) -> str | None:
        """What the week's measured hit rate and curve accuracy leave out, in one sentence for the
        HTML and the text part; None when no window was a warm-up one."""
        if not self.warmup_windows:
            return None
        if self.warming_all_week:
            return f"warm-up: memcached was still filling in all {self.windows} windows, none counted yet"
        return (
            f"{self.warmup_windows} of {self.windows} windows left out: warm-up, memcached was still filling"
        )

    @property
    def memory_limit_bytes(self) -> int | None:
        """The one -m to set for the target (the API's recommended_memory_limit_bytes, the value
        every surface shows)."""
        return self.sizing.recommended_memory_limit_bytes if self.sizing is not None else None

    @property
    def window_line(self) -> str | None:
        """The newest curve's own -m when it differs from the one to set, in the one line every
        surface shows for it (the answer's memory_limit_note); None when they agree."""
        return self.sizing.memory_limit_note if self.sizing is not None else None

    @property
    def memory_state_words(self) -> str | None:
        """Today's -m against the answer (hitcurve.rules.shortage), in the sentence every surface
        shows; None while the answer is not known."""
        return self.sizing.memory_state_words if self.sizing is not None else None

    @property
    def nodes(self) -> int:
        """The cluster's nodes today: memory_limit_bytes and the recommended limit are per node,
        current_memory_limit_bytes is summed over them (the sizing API's cluster contract)."""
        return (self.sizing.nodes or 1) if self.sizing is not None else 1

    @property
    def current_memory_limit_bytes(self) -> int | None:
        return self.sizing.current_memory_limit_bytes if self.sizing is not None else None

    @property
    def needed_bytes(self) -> float | None:
        return self.sizing.memory_bytes if self.sizing is not None else None

    @property
    def band_bytes(self) -> tuple[int | None, int | None]:
        """(least, most) memory the target may need at the band's confidence: the sizing answer's
        band.memory_bytes_min and memory_bytes_max (None: that end lies past the curve)."""
        if self.sizing is None:
            return None, None
        return self.sizing.band.memory_bytes_min, self.sizing.band.memory_bytes_max


@dataclass
class OrgReport:
    org_id: uuid.UUID
    org_name: str
    period_start: datetime
    period_end: datetime
    clusters: list[ClusterReport]
    servers_total: int
    servers_reporting: int  # servers with at least one snapshot
    unassigned_servers: int
    server_issues: list[ServerIssue]
    org_alerts: list[AlertLine]  # open alerts on servers outside the listed clusters

    @property
    def empty(self) -> bool:
        return self.servers_reporting == 0


def _alert_lines(db: Session, org_id: uuid.UUID, *where: object) -> list[AlertLine]:
    rows = db.execute(
        select(Alert, Cluster.name, Server.address)
        .outerjoin(Cluster, (Cluster.id == Alert.cluster_id) & (Cluster.org_id == org_id))
        .outerjoin(Server, (Server.id == Alert.server_id) & (Server.org_id == org_id))
        .where(Alert.org_id == org_id, Alert.state == "open", *where)  # type: ignore[arg-type]
        .order_by(Alert.severity, Alert.first_seen_at)
    ).all()
    order = {"critical": 0, "warning": 1, "info": 2}
    out = [
        AlertLine(
            a.severity, a.kind, f"server {addr}" if addr else f"cluster {cname}", a.message, a.first_seen_at
        )
        for a, cname, addr in rows
    ]
    return sorted(out, key=lambda x: (order.get(x.severity, 3), x.since))


def _cluster_report(
    db: Session, org_id: uuid.UUID, c: Cluster, start: datetime, end: datetime
) -> ClusterReport:
    server_ids = list(
        db.execute(select(Server.id).where(Server.org_id == org_id, Server.cluster_id == c.id)).scalars()
    )
    hist = history(db, org_id, "cluster", c.id, start, end, 1, settled_only=True)
    measured = hist.points[0].measured_hit_ratio if hist.points else None
    acc = accuracy(db, org_id, "cluster", c.id, start, end, 1, settled_only=True)
    warming, windows = warmup_windows(db, org_id, "cluster", c.id, start, end)
    sizing: SizingAnswer | None = None
    reason: str | None = None
    allocated: float | None = None
    points: list[tuple[float, float]] = []
    band: list[tuple[float, float, float]] = []
    cost: CostAnswer | None = None
    try:
        basis, _ = cluster_basis(db, org_id, c.id, None)
        sizing = memory_answer(Subject(type="cluster", id=c.id), basis, float(c.target_hit_ratio))
        prices = cluster_prices(db, org_id, c, server_ids)
        cost = cost_answer(
            Subject(type="cluster", id=c.id),
            basis,
            prices,
            target=float(c.target_hit_ratio),
            terms=subject_terms(db, "cluster", org_id, c.id, basis, prices),
        )
        allocated = float(basis.info.current_bytes) if basis.info.current_bytes is not None else None
        xs = [basis.main.x_max * i / (CHART_SAMPLES - 1) for i in range(CHART_SAMPLES)]
        points = [(x, basis.main(x)) for x in xs]
        lo, hi = basis.conf_low, basis.conf_high
        band = [(x, lo(x), hi(x)) for x in xs] if lo is not None and hi is not None else []
    except NotEnoughDataError as exc:
        reason = exc.message
    price = float(c.price_per_gb_month)
    needed = sizing.memory_bytes if sizing is not None else None
    cost_now = monthly_cost(allocated, price)
    cost_target = monthly_cost(needed, price)
    diff = None if cost_now is None or cost_target is None else cost_now - cost_target
    subject = (
        (Alert.cluster_id == c.id) | Alert.server_id.in_(server_ids)
        if server_ids
        else Alert.cluster_id == c.id
    )
    alerts = _alert_lines(db, org_id, subject)
    return ClusterReport(
        id=c.id,
        name=c.name,
        target=float(c.target_hit_ratio),
        price_per_gb_month=price,
        servers=len(server_ids),
        measured_week=measured,
        allocated_bytes=allocated,
        sizing=sizing,
        no_curve_reason=reason,
        cost_now=cost_now,
        cost_at_target=cost_target,
        savings=diff if diff is not None and diff > 0 else None,
        extra_cost=-diff if diff is not None and diff < 0 else None,
        accuracy_samples=acc.samples,
        accuracy_mae_pp=acc.mean_abs_error_pp,
        accuracy_max_pp=acc.max_abs_error_pp,
        warmup_windows=warming,
        windows=windows,
        alerts=alerts,
        curve_points=points,
        band_points=band,
        cost=cost,
    )


def build_report(
    db: Session, org_id: uuid.UUID, end: datetime, cluster_id: uuid.UUID | None = None
) -> OrgReport:
    """The report of one organization over the 7 days before `end` (all its clusters, or one)."""
    start = end - PERIOD
    org = db.execute(select(Organization).where(Organization.id == org_id)).scalar_one()
    q = select(Cluster).where(Cluster.org_id == org_id).order_by(Cluster.name)
    if cluster_id is not None:
        q = q.where(Cluster.id == cluster_id)
    clusters = list(db.execute(q).scalars())
    servers = list(
        db.execute(select(Server).where(Server.org_id == org_id).order_by(Server.address)).scalars()
    )
    if cluster_id is not None:
        servers = [s for s in servers if s.cluster_id == cluster_id]
    # a cluster whose servers all moved away has nothing to report
    clusters = [c for c in clusters if any(s.cluster_id == c.id for s in servers)]
    names = {c.id: c.name for c in clusters}
    th = rules.Thresholds.from_env()
    # newest snapshot's loss per server (the stream-loss rule looks at the latest window)
    latest = (
        select(Snapshot.server_id, func.max(Snapshot.window_end).label("w"))
        .where(Snapshot.org_id == org_id)
        .group_by(Snapshot.server_id)
        .subquery()
    )
    loss: dict[uuid.UUID, float] = dict(
        db.execute(
            select(Snapshot.server_id, Snapshot.loss_ratio)
            .join(latest, (latest.c.server_id == Snapshot.server_id) & (latest.c.w == Snapshot.window_end))
            .where(Snapshot.org_id == org_id)
        ).all()
    )
    issues: list[ServerIssue] = []
    for s in servers:
        subject = f"server {server_name(s.address, s.hostname)}"
        stale = rules.stale_agent(subject, s.last_snapshot_at, end, th)
        if stale is not None:
            issues.append(
                ServerIssue(s.address, names.get(s.cluster_id) if s.cluster_id else None, stale.message)
            )
        lossy = rules.stream_loss(subject, float(loss[s.id]), th) if s.id in loss else None
        if lossy is not None:
            issues.append(
                ServerIssue(s.address, names.get(s.cluster_id) if s.cluster_id else None, lossy.message)
            )
    reports = [_cluster_report(db, org_id, c, start, end) for c in clusters]
    unassigned = [s.id for s in servers if s.cluster_id is None]
    org_alerts = (
        _alert_lines(db, org_id, Alert.server_id.in_(unassigned)) if unassigned and cluster_id is None else []
    )
    return OrgReport(
        org_id=org_id,
        org_name=org.name,
        period_start=start,
        period_end=end,
        clusters=reports,
        servers_total=len(servers),
        servers_reporting=sum(1 for s in servers if s.id in loss),
        unassigned_servers=len(unassigned),
        server_issues=issues,
        org_alerts=org_alerts,
    )
