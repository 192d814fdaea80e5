"""A cluster's curve and its alerts from its members' recent windows (pure, no database): what
`snapshot_tasks.update_cluster` stores after loading every member's inputs at once
(snapshot_loads.cluster_windows, member_fills).

Each member enters with its recent windows weighed as its own answers weigh them
(hitcurve.rules.windows: a quiet or loss-flagged window never replaces the member's good curve);
members whose newest curve is older than CLUSTER_FRESH behind the newest member's are left out
(`left_out_stale`), and so are members without a curve in the look-back
(`left_out_no_recent_curve`). The curve is calibrated when every fresh member's is. The cluster
alerts follow from the cluster's sizing answer once the curve is stored (cluster_alerts)."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np

from hitcurve.rules import alerts as rules
from hitcurve.rules import windows
from hitcurve_worker.cluster import ServerInput, combine

CLUSTER_FRESH = timedelta(minutes=15)  # server curves older than this are left out of a cluster curve


@dataclass(frozen=True)
class MemberWindow:
    """One stored curve of a member and its window's facts (snapshot_loads.cluster_windows)."""

    server_id: uuid.UUID
    snapshot_id: uuid.UUID
    window_end: datetime
    sizes_bytes: Sequence[float]
    hit_ratio_calibrated: Sequence[float] | None
    hit_ratio_proportional: Sequence[float] | None
    current_bytes: int
    measured_hit_ratio: float | None
    band_low: Sequence[float] | None
    band_high: Sequence[float] | None
    cmd_get: int | None
    loss_ratio: float | None
    flagged: bool | None
    limit_maxbytes: int


@dataclass(frozen=True)
class ClusterSettings:
    name: str
    target_hit_ratio: float
    node_size_bytes: int | None
    price_per_gb_month: float

    @classmethod
    def of(cls, cluster: Any) -> ClusterSettings:
        """A stored cluster's settings (hitcurve.models.Cluster)."""
        return cls(
            cluster.name,
            float(cluster.target_hit_ratio),
            cluster.node_size_bytes,
            float(cluster.price_per_gb_month),
        )


@dataclass(frozen=True)
class ClusterInputs:
    cluster: ClusterSettings
    members: Sequence[uuid.UUID]  # every member, in the order the cluster lists them
    recent: Mapping[uuid.UUID, list[MemberWindow]]  # members with a curve in the look-back, oldest first
    fills: Mapping[uuid.UUID, Sequence[Any]]  # each member's recent fill (hitcurve.rules.warmup rows)
    thresholds: rules.Thresholds


@dataclass
class ClusterOutcome:
    """The cluster curve's columns (ClusterCurve, but for its keys and computed_at), and its
    members' memory limits (-m) summed, in the windows used."""

    curve: dict[str, Any]
    limits_bytes: float = 0.0


def _member_input(rows: list[MemberWindow], calibrated: bool) -> tuple[ServerInput, MemberWindow] | None:
    """A member's windows combined (None: no good window with the curve asked for), and the row of
    the newest window used."""
    wins = []
    for w in rows:
        ys = w.hit_ratio_calibrated if calibrated else w.hit_ratio_proportional
        if not ys:
            continue
        wins.append(
            windows.WindowCurve(
                w.window_end,
                list(w.sizes_bytes),
                list(ys),
                int(w.cmd_get or 0),
                float(w.loss_ratio or 0.0),
                bool(w.flagged),
                int(w.current_bytes),
                w.measured_hit_ratio,
            )
        )
    comb = windows.combine(wins)
    if comb is None:
        return None
    newest = next(w for w in rows if w.window_end == comb.newest.window_end)
    reads = [w.reads for w in wins if w.window_end in comb.used]
    return (
        ServerInput(
            str(newest.server_id),
            np.asarray(comb.sizes_bytes),
            np.asarray(comb.hit_ratios),
            float(newest.current_bytes),
            float(sum(reads) / len(reads)) or 1.0,
            comb.measured_hit_ratio,
            np.asarray(newest.band_low) if newest.band_low else None,
            np.asarray(newest.band_high) if newest.band_high else None,
        ),
        newest,
    )


def compute_cluster(inp: ClusterInputs) -> ClusterOutcome | None:
    """The cluster's curve from its members' loaded inputs; None when no member has a curve to
    combine (nothing is stored, no alert changes)."""
    latest = [rows[-1] for rows in inp.recent.values()]
    if not latest:
        return None
    newest = max(w.window_end for w in latest)
    fresh = [w for w in latest if w.window_end >= newest - CLUSTER_FRESH]
    calibrated = all(w.hit_ratio_calibrated for w in fresh)
    inputs = []
    used_snapshots: dict[str, str] = {}
    limits: dict[str, int] = {}  # each member's memcached -m (limit_maxbytes) in the window used
    for w in fresh:
        member = _member_input(inp.recent[w.server_id], calibrated)
        if member is None:
            continue
        server_input, used = member
        limits[str(used.server_id)] = int(used.limit_maxbytes)
        used_snapshots[str(used.server_id)] = str(used.snapshot_id)
        inputs.append(server_input)
    try:
        res = combine(inputs, node_size_bytes=inp.cluster.node_size_bytes)
    except ValueError:
        return None
    curve = dict(
        window_end=min(w.window_end for w in fresh),
        basis="calibrated" if calibrated else "model",
        sizes_bytes=res.sizes_bytes.tolist(),
        hit_ratios=res.hit_ratios.tolist(),
        band_low=res.band_low.tolist() if res.band_low is not None else None,
        band_high=res.band_high.tolist() if res.band_high is not None else None,
        current_bytes=int(res.current_bytes),
        measured_hit_ratio=res.measured,
        node_size_bytes=res.node_size_bytes,
        node_counts=res.node_counts,
        node_hit_ratios=res.node_hit_ratios,
        server_count=len(res.used),
        inputs={
            "servers": used_snapshots,
            "skipped": res.skipped,
            "left_out_stale": [str(w.server_id) for w in latest if w not in fresh],
            # Members with no curve in the look-back (the window - LOOKBACK): silent for longer
            # than it, or never processed. The look-back does not read further, so it cannot tell
            # the two apart; either way the member is not in the curve, and says so here instead
            # of vanishing from both lists.
            "left_out_no_recent_curve": sorted(str(m) for m in inp.members if m not in inp.recent),
        },
    )
    return ClusterOutcome(curve, float(sum(limits[s] for s in res.used)))
