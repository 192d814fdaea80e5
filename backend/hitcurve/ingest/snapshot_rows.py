"""A validated snapshot as the column values its store statement takes (crud.ingest).

Built in the decoder process (hitcurve.ingest.uploads) right after validation, so what travels
back to the API process is a few lists and binary float arrays (~10 KB to pickle for 30 classes)
instead of the nested protocol model (~68 KB, and the costliest part of an upload's API time after
the HTTP itself: py-spy under the fleet benchmark found ~20 % of an API process's samples pickling
and unpickling it). The values depend only on the snapshot: who uploaded it and when are added at store time.
Pure: no database, no settings.
"""

import json
import uuid
from dataclasses import dataclass
from datetime import datetime
from itertools import chain
from typing import Any

import numpy as np

from hitcurve.core.pgarray import Float8Array
from hitcurve.ingest import classpack
from hitcurve.rules.ttl import carries_ttls
from hitcurve.schemas import agent as proto


@dataclass(frozen=True)
class SnapshotRows:
    """The snapshot's id and window (the store path needs them) and its statement parameters."""

    snapshot_id: uuid.UUID
    window_end: datetime
    params: dict[str, Any]


def _class_columns(snap: proto.Snapshot) -> dict[str, Any]:
    """The classes packed in one value (hitcurve.ingest.classpack) and their cost sums."""
    classes = snap.classes
    costs = [c.cost_us for c in classes]
    n = sum(len(c.curve.points) for c in classes)
    flat = chain.from_iterable(chain.from_iterable(c.curve.points for c in classes))
    points = np.fromiter(flat, np.float64, count=2 * n).reshape(-1, 2)  # 3x faster than np.asarray
    columns: dict[str, list[Any]] = {
        "class_id": [c.id for c in classes],
        "chunk_size": [c.chunk_size for c in classes],
        "pages": [c.pages for c in classes],
        "items": [c.items for c in classes],
        "evictions": [c.evictions for c in classes],
        "requests": [c.requests for c in classes],
        "current_items": [c.curve.current_items for c in classes],
        "cost_count": [k.count if k else None for k in costs],
        "cost_mean_us": [k.mean if k else None for k in costs],
        "cost_p50_us": [k.p50 if k else None for k in costs],
        "cost_p90_us": [k.p90 if k else None for k in costs],
        "cost_p99_us": [k.p99 if k else None for k in costs],
        "has_ttl": [c.curve.ttl_points is not None for c in classes],
        # the ghost's reach and filters per class (None: an older agent), read by the worker
        "ghost_reach_items": [c.curve.ghost_reach_items for c in classes],
        "ghost_filters": [c.curve.ghost_filters for c in classes],
    }
    ttl_xs, ttl_ys = _ttl_columns(classes)
    packed = classpack.pack(columns, points[:, 0], points[:, 1], snap.curve_points, ttl_xs, ttl_ys)
    count, total = classpack.cost_sums(columns["cost_count"], columns["cost_mean_us"])
    return {"classes": packed, "cost_count": count, "cost_us_total": total}


def _ttl_columns(classes: list[proto.SlabClass]) -> tuple[np.ndarray | None, np.ndarray | None]:
    """The TTL-aware curves of the classes that have one, end to end in class order (the same
    point count as the curve, which the protocol checks); None when no class has one."""
    with_ttl = [c.curve.ttl_points for c in classes if c.curve.ttl_points is not None]
    if not with_ttl:
        return None, None
    pts = np.asarray(list(chain.from_iterable(with_ttl)), dtype=np.float64).reshape(-1, 2)
    return pts[:, 0], pts[:, 1]


def ttl_aware(snap: proto.Snapshot) -> bool | None:
    """Whether the window's traffic carries TTLs (the rule is hitcurve.rules.ttl.carries_ttls:
    expiry moves the agent's merged curve by >= TTL_CURVE_GAP_PP); the worker then sizes on the
    merged TTL-aware curve. None: no breakdown sent."""
    if snap.ttl is None or snap.ttl_points is None:
        return None
    return carries_ttls(snap.ttl_points, snap.ttl.oblivious_points)


def _ttl_curve(snap: proto.Snapshot) -> tuple[Float8Array | None, Float8Array | None]:
    """The merged TTL-aware curve as two float8[] parameters (NULL when not sent)."""
    if snap.ttl_points is None:
        return None, None
    pts = np.asarray(snap.ttl_points, dtype=np.float64).reshape(-1, 2)
    return Float8Array(pts[:, 0]), Float8Array(pts[:, 1])


# What the breakdown pages read of a snapshot (crud/breakdown.py, then hitcurve.breakdown's answers), in the
# upload's own shape: the breakdown fields, the classes' leave counts, and the two server figures
# the what-ifs use. Nothing else of the upload (fields the models ignore, the LRU points) is kept.
BREAKDOWN_FIELDS: dict[str, Any] = {
    "prefix_rule": True,
    "prefixes": True,
    "prefix_other": True,
    "ttl_whatif_ttls_s": True,
    "ttl_points": True,
    "ttl": True,
    "hot_keys": True,
    "hot_keys_by_bytes": True,
    "hot_keys_hashed": True,
    "classes": {"__all__": {"id", "chunk_size", "left", "page_move_evictions"}},
    "server": {"limit_maxbytes"},
    "measured": {"hit_ratio", "bytes"},
}
# The protocol bounds every field above (100 prefixes of 100 points and a 33-column TTL
# what-if, 2 x 100 hot keys of <= 250 bytes, 64 classes): the largest valid breakdown is ~0.6 MB
# of JSON. A page decodes one such row, never the upload.
BREAKDOWN_MAX_JSON = 1 << 20


def breakdown_json(snap: proto.Snapshot) -> str | None:
    """The snapshot's breakdown as the JSON text of snapshots.breakdown; None when the agent sent
    none (no prefixes and no TTL-aware curve)."""
    if snap.prefixes is None and snap.ttl_points is None:
        return None
    doc = snap.model_dump_json(include=BREAKDOWN_FIELDS)
    if len(doc) > BREAKDOWN_MAX_JSON:  # cannot happen within the protocol's limits
        raise ValueError(f"breakdown of {len(doc)} bytes exceeds {BREAKDOWN_MAX_JSON}")
    return doc


def flag_json(loss: proto.Loss) -> str | None:
    """Why the agent flagged the window, as stored (snapshots.flag_detail), or None."""
    if not loss.flagged or not loss.flagged_by:
        return None
    out: dict[str, Any] = {"flagged_by": list(loss.flagged_by)}
    if loss.self_check is not None:
        out["self_check"] = loss.self_check.model_dump()
    if loss.threshold is not None:
        out["threshold"] = loss.threshold
    return json.dumps(out)


def snapshot_rows(snap: proto.Snapshot) -> SnapshotRows:
    """The store statement's parameters that come from the snapshot itself."""
    srv, m, loss, mem = snap.server, snap.measured, snap.loss, snap.memory
    ttl_xs, ttl_ys = _ttl_curve(snap)
    params = {
        "address": srv.address,
        "instance_id": srv.instance_id,
        "version": srv.version,
        "limit_maxbytes": srv.limit_maxbytes,
        "settings": json.dumps(dict(srv.settings)),
        "hostname": snap.agent.hostname,
        "agent_version": snap.agent.version,
        "id": snap.snapshot_id,
        "window_start": snap.window.start,
        "window_end": snap.window.end,
        "curve_points": snap.curve_points,
        "cmd_get": m.cmd_get,
        "get_hits": m.get_hits,
        "get_misses": m.get_misses,
        "bytes_used": m.bytes,
        "curr_items": m.curr_items,
        "measured_hit_ratio": m.hit_ratio,
        "loss_ratio": loss.loss_ratio,
        "flagged": loss.flagged,
        "flag_detail": flag_json(loss),
        # the server's flash tier (hitcurve.sizing.flash reads it); NULL without one
        "extstore": snap.extstore.model_dump_json() if snap.extstore else None,
        # memcached's fill (optional: older agents send none)
        "total_malloced": mem.total_malloced if mem else None,
        "memory_full": mem.full if mem else None,
        "evictions_total": mem.evictions_total if mem else None,
        "hash_bytes": mem.hash_bytes if mem else None,
        "curr_connections": mem.curr_connections if mem else None,
        # what the window rests on: the watch stream, or `stats` alone (the model)
        "basis": snap.basis or "watch",
        "stats_model": snap.stats_model.model_dump_json(exclude_none=True) if snap.stats_model else None,
        "ttl_aware": ttl_aware(snap),
        "ttl_sizes_bytes": ttl_xs,
        "ttl_hit_ratios": ttl_ys,
        "breakdown": breakdown_json(snap),
        **_class_columns(snap),
    }
    return SnapshotRows(snap.snapshot_id, snap.window.end, params)
