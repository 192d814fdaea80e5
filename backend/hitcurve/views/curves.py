"""The curve bodies of the inventory endpoints: a server's latest per-class curves with the curve
the answers rest on, a cluster's latest curve, and stored curves over time. The band drawn with a
curve is the sizing answer's (sizing.drawn_band), so chart and answer agree. No HTTP here."""

import uuid
from dataclasses import asdict
from datetime import UTC, datetime, timedelta
from typing import Any

import numpy as np
from pydantic import BaseModel
from sqlalchemy.orm import Session

from hitcurve.core.domain import Invalid
from hitcurve.crud import curves as curves_crud
from hitcurve.crud.history import time_range
from hitcurve.models import Cluster, Server
from hitcurve.schemas.api import (
    ClassCurveOut,
    ClusterCurveOut,
    CurveAt,
    CurveHistoryOut,
    FlashTierOut,
    MergedCurveOut,
    ServerCurveOut,
    ServerOut,
    SnapshotSummary,
)
from hitcurve.schemas.sizing import SubjectKind
from hitcurve.sizing import flash
from hitcurve.sizing.cache import drawn_band, seen_up_to
from hitcurve.sizing.server import answer_curve
from hitcurve.views.overview import cluster_out


def _now() -> datetime:
    return datetime.now(UTC)


def _attrs(row: object, model: type[BaseModel]) -> dict[str, Any]:
    """The row's attributes named like the model's fields, except the ones the row lacks or the
    caller computes (age_seconds, sizes_bytes of a class, the cluster itself)."""
    computed = {"age_seconds", "cluster", "data_basis", "stats_model_state"} | (
        {"sizes_bytes"} if model is ClassCurveOut else set()
    )
    return {k: getattr(row, k) for k in model.model_fields if k not in computed and hasattr(row, k)}


def _age(t: datetime) -> float:
    return max(0.0, (_now() - t).total_seconds())


def server_curve(db: Session, org_id: uuid.UUID, s: Server) -> ServerCurveOut:
    """Per slab class from the latest snapshot, and the merged/calibrated curve of the newest good
    window (a quiet or loss-flagged newer window never replaces it: it is named in windows_note)."""
    snap = curves_crud.latest_snapshot(db, org_id, s.id)
    classes = [
        ClassCurveOut(**_attrs(c, ClassCurveOut), sizes_bytes=[v * c.chunk_size for v in c.sizes_items])
        for c in (curves_crud.snapshot_classes(db, org_id, snap) if snap is not None else [])
    ]
    curve, left_out, comb = answer_curve(db, org_id, s.id)
    merged = None
    if curve is not None and comb is not None:
        # The curve the answers rest on (the good recent windows weighed), not the newest window's
        # own: the demo's page drew a curve crossing 90 % at 67 MiB under the answer "no memory
        # size reaches 90 %: the curve levels off at 89.8 %". The other series follow its sizes.
        xs = comb.sizes_bytes
        best = "hit_ratio_calibrated" if curve.hit_ratio_calibrated else "hit_ratio_proportional"

        def at_xs(ys: list[float] | None) -> list[float] | None:
            return None if not ys else [float(v) for v in np.interp(xs, list(curve.sizes_bytes), list(ys))]

        series = {k: at_xs(getattr(curve, k)) for k in ("hit_ratio_proportional", "hit_ratio_optimal")}
        series[best] = comb.hit_ratios
        band = drawn_band(db, "server", org_id, s.id, xs, comb.hit_ratios)
        merged = MergedCurveOut(
            **_attrs(curve, MergedCurveOut)
            | series
            | {
                "sizes_bytes": xs,
                # the answers' measured hit rate (the good windows weighed), not the newest window's
                "measured_hit_ratio": comb.measured_hit_ratio,
                "band_low": band[0] if band else None,
                "band_high": band[1] if band else None,
            },
            age_seconds=_age(curve.window_end),
            data_basis=(curve.calibration or {}).get("basis", "watch"),
            windows_note=left_out,
            observed_max_bytes=seen_up_to(db, "server", org_id, s.id),
        )
    summary = (
        SnapshotSummary(
            **_attrs(snap, SnapshotSummary),
            data_basis=snap.basis,
            stats_model_state=(snap.stats_model or {}).get("state"),
        )
        if snap is not None
        else None
    )
    tier = flash.flash_tier(db, org_id, s.id)
    return ServerCurveOut(
        server=ServerOut.model_validate(s),
        latest_snapshot=summary,
        classes=classes,
        merged=merged,
        flash_tier=FlashTierOut(**asdict(tier)) if tier is not None else None,
    )


def cluster_curve(db: Session, org_id: uuid.UUID, c: Cluster) -> ClusterCurveOut:
    """The latest cluster curve: hit ratio versus total memory and versus node count."""
    cc = curves_crud.latest_cluster_curve(db, org_id, c.id)
    out = ClusterCurveOut(cluster=cluster_out(db, c))
    if cc is None:
        return out
    band = drawn_band(db, "cluster", org_id, c.id, list(cc.sizes_bytes), list(cc.hit_ratios))
    return out.model_copy(
        update=_attrs(cc, ClusterCurveOut)
        | {
            "age_seconds": _age(cc.window_end),
            "band_low": band[0] if band else None,
            "band_high": band[1] if band else None,
        }
    )


def _curve_window(
    start: datetime | None, end: datetime | None, max_curves: int
) -> tuple[datetime, datetime, float]:
    if start is None:
        try:
            start = (end or _now()) - timedelta(days=7)
        except OverflowError:
            raise Invalid("invalid_request", "end is too early to have a default start") from None
    start, end = time_range(start, end)
    return start, end, (end - start).total_seconds() / max_curves


def _at(r: Any, calibrated: bool, ys: list[float], **extra: Any) -> CurveAt:
    return CurveAt(
        window_end=r.window_end,
        computed_at=r.computed_at,
        basis="calibrated" if calibrated else "estimate",
        sizes_bytes=r.sizes_bytes,
        hit_ratios=ys,
        current_bytes=r.current_bytes,
        measured_hit_ratio=r.measured_hit_ratio,
        **extra,
    )


def curves_over_time(
    db: Session,
    kind: SubjectKind,
    org_id: uuid.UUID,
    subject_id: uuid.UUID,
    start: datetime | None,
    end: datetime | None,
    max_curves: int,
) -> CurveHistoryOut:
    """The subject's stored curves over time (default: the 7 days before end), the latest of each
    of at most max_curves periods, oldest first; a server's hit_ratios are the calibrated ones
    when there are."""
    start, end, bw = _curve_window(start, end, max_curves)
    if kind == "server":
        rows = curves_crud.server_curves_over_time(db, org_id, subject_id, start, end, bw, max_curves)
        curves = [
            _at(
                r,
                bool(r.hit_ratio_calibrated),
                r.hit_ratio_calibrated or r.hit_ratio_proportional,
                hit_ratio_calibrated=r.hit_ratio_calibrated,
                hit_ratio_proportional=r.hit_ratio_proportional,
            )
            for r in rows
        ]
    else:
        clusters = curves_crud.cluster_curves_over_time(db, org_id, subject_id, start, end, bw, max_curves)
        curves = [_at(r, r.basis == "calibrated", r.hit_ratios) for r in clusters]
    return CurveHistoryOut(start=start, end=end, bucket_seconds=bw, curves=curves)
