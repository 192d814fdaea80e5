"""A server's Basis loaded from the database: its latest stored curve (or a finished policy
simulation), its recent windows weighed, memcached's fill and classes, the band from its accuracy
record; the curve its answers rest on for the curve page, and the servers list's measured hit
ratios."""

import uuid

from sqlalchemy.orm import Session

from hitcurve.core.domain import NotEnoughDataError
from hitcurve.crud import curves as curves_crud
from hitcurve.crud.history import recent_errors_pp
from hitcurve.crud.inventory import get_server
from hitcurve.models import ServerCurve
from hitcurve.rules import hysteresis, memlimit, warmup, windows
from hitcurve.rules.curves import fit_stored
from hitcurve.rules.percent import percent
from hitcurve.schemas.sizing import CurveInfo, CurveKind, SubjectKind
from hitcurve.sizing import flash
from hitcurve.sizing.band import set_band
from hitcurve.sizing.basis import Basis, now, stored_curve_basis
from hitcurve.sizing.recent_windows import one_model, pick_curve, ttl_model, use_windows, window_curves
from hitcurve.sizing.sight import RATE_ROWS, set_sight


def simulated_basis(
    db: Session,
    org_id: uuid.UUID,
    policy: str,
    kind: SubjectKind,
    subject_id: uuid.UUID,
    server_ids: list[uuid.UUID],
    current: int | None,
    measured: float | None,
) -> Basis:
    found = curves_crud.latest_simulation(db, org_id, policy, kind, subject_id)
    if found is None:
        raise NotEnoughDataError(
            f"no finished simulation of policy {policy} for this subject yet: POST /api/v1/simulations"
        )
    run, rows = found
    main = fit_stored([float(r[0]) for r in rows], [r[1] for r in rows])
    if main is None:
        raise NotEnoughDataError(f"the latest simulation of {policy} has no results")
    finished = run.finished_at or run.created_at
    b = Basis(
        main,
        "simulated",
        policy,
        CurveInfo(
            computed_at=finished,
            window_end=run.window_end,
            age_seconds=(now() - run.window_end).total_seconds(),
            current_bytes=current,
            measured_hit_ratio=measured,
            max_bytes=main.x_max,
            max_hit_ratio=main.y_max,
        ),
        band_through_measured=False,
    )
    set_band(b, recent_errors_pp(db, org_id, server_ids))
    return b


def server_basis(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID, kind: CurveKind, policy: str | None
) -> Basis:
    c = curves_crud.latest_server_curve(db, org_id, server_id)
    if c is None:
        get_server(db, org_id, server_id)  # 404 for unknown and foreign ids
    if policy is not None:
        return simulated_basis(
            db,
            org_id,
            policy,
            "server",
            server_id,
            [server_id],
            c.current_bytes if c else None,
            c.measured_hit_ratio if c else None,
        )
    if c is None:
        snap = curves_crud.latest_snapshot(db, org_id, server_id)
        if snap is not None and snap.basis == "stats_only":
            state = (snap.stats_model or {}).get("state", "unknown")
            raise NotEnoughDataError(
                f"no curve for this server yet: memcached refused `watch`, and the agent's stats-only "
                f"model has no curve ({state}; it needs memcached to be evicting, with reads)"
            )
        raise NotEnoughDataError(
            "no curve for this server yet: its agent must upload snapshots and the worker process them"
        )
    ys, basis = pick_curve(kind, c.hit_ratio_calibrated, c.hit_ratio_optimal, c.hit_ratio_proportional)
    main = fit_stored(c.sizes_bytes, ys)
    if main is None:
        raise NotEnoughDataError("the latest curve of this server has no usable points")
    b = stored_curve_basis(c, main, basis)
    loss = curves_crud.snapshot_loss(db, c)
    if loss is not None:
        b.info = b.info.model_copy(
            update={"stream_loss_ratio": float(loss.loss_ratio), "stream_loss_flagged": bool(loss.flagged)}
        )
    server_facts(db, org_id, server_id, kind, b)
    return b


def answer_curve(
    db: Session, org_id: uuid.UUID, server_id: uuid.UUID
) -> tuple[ServerCurve | None, str | None, windows.Combined | None]:
    """The stored curve of the newest window a server's answers rest on (a quiet or loss-flagged
    newer window is left out, hitcurve.rules.windows), which windows were left out, and the combined
    curve the answers use (the good recent windows weighed); the curve page draws the combined
    curve, so the chart and the answer never disagree."""
    # the windows the answers read (server_facts), so the page's measured hit rate is theirs
    rows = one_model(
        curves_crud.recent_server_windows(db, org_id, server_id, hysteresis.HISTORY_WINDOWS), "best"
    )
    comb = windows.combine(window_curves(rows, "best"))
    if comb is None:
        return None, None, None
    row = next(r.ServerCurve for r in rows if r.ServerCurve.window_end == comb.newest.window_end)
    return row, comb.describe() if comb.skipped or not comb.reliable else None, comb


def measured_hit_ratios(
    db: Session, org_id: uuid.UUID, server_ids: list[uuid.UUID]
) -> dict[uuid.UUID, float | None]:
    """Each server's measured hit ratio as its answers state it (CurveInfo.measured_hit_ratio:
    hitcurve.rules.windows.measured_over the good recent windows of the answer's model), for a page of
    servers in one query without their curves; a server without a curve is absent. The servers
    list shows this, not the newest window's own (which differed from the card and the API by up
    to 7 pp while memcached filled)."""
    out: dict[uuid.UUID, float | None] = {}
    facts = curves_crud.recent_window_facts_by_server(db, org_id, server_ids, hysteresis.HISTORY_WINDOWS)
    for sid, rows in facts.items():
        # the rows window_curves keeps for the best curve: stored sizes and a calibrated or
        # proportional curve (the worker stores no curve of non-positive or non-finite sizes)
        model = one_model(rows, "best", lambda r: bool(r.ttl_aware))
        kept = [r for r in model if r.n_sizes and (r.n_calibrated or r.n_proportional)]
        wins = [
            windows.WindowSummary(
                r.window_end, int(r.cmd_get), float(r.loss_ratio), bool(r.flagged), True, r.measured_hit_ratio
            )
            for r in kept
        ]
        if wins:
            out[sid] = windows.measured_hit_ratio(wins)
    return out


def server_facts(db: Session, org_id: uuid.UUID, server_id: uuid.UUID, kind: CurveKind, b: Basis) -> None:
    """What an operator's answer needs beyond the latest curve: the recent windows weighed
    (a quiet or lossy window never replaces a good curve), memcached's fill, the -m model's
    classes, how far the curve is seen (sizing.sight), the band at its confidence, earlier windows
    for the recommended limit."""
    rows = one_model(
        curves_crud.recent_server_windows(db, org_id, server_id, hysteresis.HISTORY_WINDOWS), kind
    )
    if rows:
        b.data_basis = rows[-1].basis
    wins = window_curves(rows, kind)
    comb = use_windows(b, wins)
    if comb is not None:
        newest = next(r.ServerCurve for r in rows if r.ServerCurve.window_end == comb.newest.window_end)
        b.info = b.info.model_copy(update={"computed_at": newest.computed_at})
        snapshot_id, snapshot_end = newest.snapshot_id, newest.window_end
        # the optimal-allocation curve is the LRU class curves' (only the model is TTL-aware)
        b.ttl_aware = kind != "optimal" and ttl_model(newest)
    else:
        snapshot_id, snapshot_end = None, None
    if b.info.stream_loss_flagged:
        warn = (
            f"the agent lost {percent(b.info.stream_loss_ratio or 0)} of memcached's events: "
            "hit rates above today's memory may be under-estimated"
        )
        b.note = f"{b.note}; {warn}" if b.note else warn
    fill_rows = curves_crud.recent_fill(db, org_id, server_id, limit=hysteresis.HISTORY_WINDOWS)
    if fill_rows:
        b.fill = warmup.state_of(fill_rows[-RATE_ROWS:])
        last = fill_rows[-1]
        b.limit_bytes = int(last.limit_maxbytes)
        b.used_bytes = int(last.total_malloced) if last.total_malloced else None
        b.connections = int(last.curr_connections) if last.curr_connections is not None else None
    if snapshot_id is not None and snapshot_end is not None:
        facts = curves_crud.snapshot_class_facts(db, org_id, snapshot_id, snapshot_end)
        b.classes = [memlimit.ClassNow(int(f.chunk_size), int(f.items), int(f.pages)) for f in facts]
        b.items_now = sum(c.items for c in b.classes)
    base = (
        curves_crud.attach_evictions(db, org_id, server_id, fill_rows[-1].instance_id) if fill_rows else None
    )
    set_sight(b, fill_rows, base)
    tier = flash.flash_tier(db, org_id, server_id)
    b.flash_note = tier.note if tier is not None else None
    set_band(b, recent_errors_pp(db, org_id, [server_id]))
