"""The inventory as the dashboard and API clients list it: each cluster and server with its latest
state (curve, snapshot, fill, open alerts) and the status the rules in status.py give it, so the
dashboard derives nothing itself. Pure composition of crud queries and rules: no HTTP."""

import uuid
from datetime import UTC, datetime, timedelta

from sqlalchemy import select
from sqlalchemy.orm import Session

from hitcurve.core import accepting
from hitcurve.crud import curves as curves_crud
from hitcurve.crud.history import mae_by_server
from hitcurve.crud.inventory import cluster_server_count, open_alert_counts, server_counts_by_cluster
from hitcurve.models import Cluster, Server
from hitcurve.rules import knowledge, windows
from hitcurve.rules.status import (
    CURVE_ERROR_STATISTIC,
    Thresholds,
    cluster_status,
    curve_error_warning,
    loss_warning,
    server_status,
)
from hitcurve.schemas.api import ClusterOut, ServerOut, ThresholdsOut
from hitcurve.sizing.answers import memory_for_target
from hitcurve.sizing.cluster import server_fills
from hitcurve.sizing.server import measured_hit_ratios


def cluster_out(db: Session, c: Cluster) -> ClusterOut:
    """One cluster as created, read or changed (the list adds its latest state)."""
    return ClusterOut.model_validate(c).model_copy(update={"server_count": cluster_server_count(db, c)})


def cluster_rows(db: Session, org_id: uuid.UUID, limit: int, offset: int) -> list[ClusterOut]:
    """A page of the organization's clusters by name, each with its latest curve, the sizing
    answer for its target and its open alerts."""
    counts = server_counts_by_cluster(db, org_id)
    q = select(Cluster).where(Cluster.org_id == org_id).order_by(Cluster.name)
    rows = list(db.execute(q.limit(limit).offset(offset)).scalars())
    ids = [c.id for c in rows]
    latest = curves_crud.latest_cluster_curves(db, org_id, ids)
    alerts = open_alert_counts(db, org_id, ids)
    out = []
    for c in rows:
        cc = latest.get(c.id)
        n_open, n_critical = alerts.get(c.id, (0, 0))
        ans = memory_for_target(db, c) if cc is not None else None
        # a number only for a known answer (hitcurve.knowledge), as the sizing answer carries it
        needed = ans.memory_bytes if ans and ans.status == "ok" else None
        measured = cc.measured_hit_ratio if cc else None
        out.append(
            ClusterOut.model_validate(c).model_copy(
                update={
                    "server_count": counts.get(c.id, 0),
                    "measured_hit_ratio": measured,
                    "allocated_bytes": cc.current_bytes if cc else None,
                    "curve_window_end": cc.window_end if cc else None,
                    "memory_for_target_bytes": needed,
                    "memory_for_target_status": ans.status if ans else None,
                    "target_answer": ans,
                    "open_alerts": n_open,
                    "open_critical_alerts": n_critical,
                    "status": cluster_status(
                        cc is not None,
                        n_open,
                        n_critical,
                        measured,
                        c.target_hit_ratio,
                        warming=ans is not None and not knowledge.known(ans.status),
                    ),
                }
            )
        )
    return out


def server_rows(
    db: Session, org_id: uuid.UUID, cluster_id: uuid.UUID | None, limit: int, offset: int
) -> list[ServerOut]:
    """A page of the organization's servers (of one cluster, when given) by address, each with
    its latest loss, measured hit ratio (its answers', sizing.measured_hit_ratios), curve error
    (mean absolute, last 24 h) and status."""
    q = select(Server).where(Server.org_id == org_id)
    if cluster_id is not None:
        q = q.where(Server.cluster_id == cluster_id)
    rows = list(db.execute(q.order_by(Server.address).limit(limit).offset(offset)).scalars())
    ids = [s.id for s in rows]
    snaps = curves_crud.latest_snapshot_facts(db, org_id, ids)
    end = datetime.now(UTC)
    errors = mae_by_server(db, org_id, ids, end - timedelta(days=1), end)
    fills = server_fills(db, org_id, ids)
    measured = measured_hit_ratios(db, org_id, ids)
    th = Thresholds.from_env()
    since = accepting.current_since() if rows else None
    out = []
    for s in rows:
        snap = snaps.get(s.id)
        loss = snap.loss_ratio if snap else None
        error = errors.get(s.id)
        quiet = snap is not None and int(snap.cmd_get or 0) < windows.MIN_READS
        fill = fills.get(s.id)
        warming = fill is not None and fill.warming_up
        status, note = server_status(
            s.last_snapshot_at, loss, error, end, th, quiet=quiet, warming=warming, accepting_since=since
        )
        out.append(
            ServerOut.model_validate(s).model_copy(
                update={
                    "loss_ratio": loss,
                    # before its first curve (or a stats-only model that has none) no window is
                    # good and the newest stands in, as in hitcurve.rules.windows.pick
                    "measured_hit_ratio": measured.get(s.id, snap.measured_hit_ratio if snap else None),
                    "curve_error_pp": error,
                    "status": status,
                    "status_note": note,
                    "loss_warning": loss_warning(loss, th) if snap else None,
                    # no warning while warming: the error of a still-filling memcached is expected
                    "curve_error_warning": (curve_error_warning(error, th) and not warming)
                    if error is not None
                    else None,
                    "data_basis": snap.basis if snap else None,
                    "quiet": quiet if snap else None,
                }
            )
        )
    return out


def thresholds_out() -> ThresholdsOut:
    """The thresholds behind the server status and the alerts, as configured."""
    th = Thresholds.from_env()
    return ThresholdsOut(
        silent_after_s=th.silent_after_s,
        loss_ratio=th.loss_ratio,
        curve_error_pp=th.curve_error_pp,
        curve_error_statistic=CURVE_ERROR_STATISTIC,
        curve_error_min_windows=th.curve_error_min_windows,
    )
