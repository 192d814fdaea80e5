"""The fitted curves answers read, kept per process for Settings.hot_cache_ttl_s (basis_cache):
a hot sizing request needs no database query. A not-enough-data answer is kept like a basis; a
404 never is. best_basis and drawn_band read the same cached basis the /sizing routes do."""

import uuid
from collections.abc import Callable
from typing import TypeVar

from sqlalchemy.orm import Session

from hitcurve.core.config import get_settings
from hitcurve.core.domain import NotEnoughDataError
from hitcurve.core.ttlcache import TTLCache
from hitcurve.schemas.sizing import CurveKind, SubjectKind
from hitcurve.sizing.band import curve_band
from hitcurve.sizing.basis import Basis
from hitcurve.sizing.cluster import cluster_basis
from hitcurve.sizing.server import server_basis
from hitcurve.sizing.sight import sight_of

T = TypeVar("T")

_cache: TTLCache | None = None


def basis_cache() -> TTLCache:
    """Fitted curves per (org, subject, options) for Settings.hot_cache_ttl_s: a hot sizing request
    then needs no database query. Only answers and not-enough-data errors are kept, never 404s."""
    global _cache
    ttl = get_settings().hot_cache_ttl_s
    if _cache is None or _cache.ttl_s != ttl:
        _cache = TTLCache(ttl)
    return _cache


def attempt(compute: Callable[[], T]) -> T | NotEnoughDataError:
    """compute(), with a not-enough-data answer returned instead of raised: it is cached like an
    answer (any other error, e.g. a 404, is raised and never cached)."""
    try:
        return compute()
    except NotEnoughDataError as exc:
        return exc


def cached(key: tuple[object, ...], compute: Callable[[], T]) -> T:
    value = basis_cache().get_or_compute(key, lambda: attempt(compute))
    if isinstance(value, NotEnoughDataError):
        raise value
    return value


def server_key(
    org_id: uuid.UUID, server_id: uuid.UUID, curve: CurveKind, policy: str | None
) -> tuple[object, ...]:
    return ("server", org_id, server_id, curve, policy)


def cluster_key(org_id: uuid.UUID, cluster_id: uuid.UUID, policy: str | None) -> tuple[object, ...]:
    return ("cluster", org_id, cluster_id, policy)


def best_basis(db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> Basis | None:
    """The cached basis of GET /sizing/{servers|clusters}/{id}/memory (best curve, no policy), for
    callers outside the sizing routes; None while the subject has no curve yet."""
    try:
        if kind == "server":
            return cached(
                server_key(org_id, subject_id, "best", None),
                lambda: server_basis(db, org_id, subject_id, "best", None),
            )
        b, _ = cached(
            cluster_key(org_id, subject_id, None), lambda: cluster_basis(db, org_id, subject_id, None)
        )
        return b
    except NotEnoughDataError:
        return None


def drawn_band(
    db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID, xs: list[float], ys: list[float]
) -> tuple[list[float], list[float]] | None:
    """The band the curve endpoints give with a drawn curve (sizes xs, hit rates ys): the sizing
    answer's band (same cached basis, same model), so the chart's band and the answer's agree.
    None while the subject has no answer."""
    b = best_basis(db, kind, org_id, subject_id)
    return None if b is None else curve_band(b, xs, ys)


def seen_up_to(db: Session, kind: SubjectKind, org_id: uuid.UUID, subject_id: uuid.UUID) -> float | None:
    """Where the answer's curve stops being measured (hitcurve.rules.knowledge.Sight: the ghost's
    reach, capped by the evictions since the agent attached), for the chart's faded part: the sight
    the answers read. None: measured out to its end, or no answer yet."""
    b = best_basis(db, kind, org_id, subject_id)
    if b is None:
        return None
    sight = sight_of(b)
    return None if sight.whole else sight.seen_bytes
