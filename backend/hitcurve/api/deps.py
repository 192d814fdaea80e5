"""Who is calling: a browser session (cookie + CSRF), an API token or an agent key.

- Browser: cookie `hitcurve_session` (HttpOnly) names a session; unsafe methods also need the
  header `X-CSRF-Token` equal to the readable cookie `hitcurve_csrf` and to the session's token
  (double submit bound to the session).
- Autoscalers: `Authorization: Bearer hct_…` (scope read, or read_write for simulation requests).
- Agents: `Authorization: Bearer hca_…`, accepted only by the upload endpoints.
"""

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from typing import Annotated, cast

from fastapi import Depends, Query, Request
from fastapi.concurrency import run_in_threadpool
from sqlalchemy import select, update
from sqlalchemy.orm import Session

from hitcurve.core import mail, ratelimit
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_db, get_sessionmaker
from hitcurve.core.errors import ApiError
from hitcurve.core.principal import ROLE_RANK, Principal
from hitcurve.core.security import AGENT_KEY_PREFIX, API_TOKEN_PREFIX, same, sha256_hex
from hitcurve.core.ttlcache import TTLCache, refresh_in_background
from hitcurve.models import AgentKey, ApiToken, Membership, UserSession

SESSION_COOKIE = "hitcurve_session"
CSRF_COOKIE = "hitcurve_csrf"
CSRF_HEADER = "X-CSRF-Token"
SAFE_METHODS = {"GET", "HEAD", "OPTIONS"}
# last_used_at / last_seen_at are written at most this often per key, token or session.
TOUCH_INTERVAL = timedelta(seconds=60)


def client_ip(request: Request) -> str:
    return request.client.host if request.client else "unknown"


def _bearer(request: Request) -> str | None:
    header = request.headers.get("authorization")
    if not header:
        return None
    scheme, _, value = header.partition(" ")
    if scheme.lower() != "bearer" or not value.strip():
        raise ApiError(401, "bad_authorization", "Authorization header must be 'Bearer <token>'")
    return value.strip()


def _unauthorized(
    msg: str = "authentication required: log in or send 'Authorization: Bearer hct_…'",
) -> ApiError:
    return ApiError(401, "unauthenticated", msg, headers={"WWW-Authenticate": "Bearer"})


def _now() -> datetime:
    return datetime.now(UTC)


def _session_principal(request: Request, db: Session, cookie: str) -> Principal:
    now = _now()
    row = db.execute(
        select(UserSession, Membership.role)
        .join(
            Membership,
            (Membership.user_id == UserSession.user_id) & (Membership.org_id == UserSession.org_id),
        )
        .where(UserSession.token_hash == sha256_hex(cookie))
    ).first()
    if row is None:
        db.rollback()
        raise _unauthorized("session unknown or expired: log in again")
    sess, role = row
    if sess.revoked_at is not None or sess.expires_at <= now:
        raise _unauthorized("session unknown or expired: log in again")
    if request.method not in SAFE_METHODS:
        header = request.headers.get(CSRF_HEADER, "")
        cookie_csrf = request.cookies.get(CSRF_COOKIE, "")
        if (
            not header
            or not cookie_csrf
            or not same(header, cookie_csrf)
            or not same(header, sess.csrf_token)
        ):
            raise ApiError(
                403,
                "csrf_failed",
                f"CSRF check failed: send the {CSRF_COOKIE} cookie's value in the {CSRF_HEADER} header",
            )
    if now - sess.last_seen_at > TOUCH_INTERVAL:
        db.execute(update(UserSession).where(UserSession.id == sess.id).values(last_seen_at=now))
    db.commit()  # ends the transaction: the connection goes back to the pool
    return Principal(kind="session", org_id=sess.org_id, user_id=sess.user_id, role=role, session_id=sess.id)


_caches: dict[str, TTLCache] = {}


def _cache(name: str, ttl: float) -> TTLCache:
    """This process's cache `name`; a new TTL starts it empty."""
    cache = _caches.get(name)
    if cache is None or cache.ttl_s != ttl:
        cache = _caches[name] = TTLCache(ttl)
    return cache


def principal_cache() -> TTLCache:
    """Valid API tokens by the SHA-256 of their secret (see Settings.hot_cache_ttl_s)."""
    return _cache("api_tokens", get_settings().hot_cache_ttl_s)


def agent_key_cache() -> TTLCache:
    """Valid agent keys by the SHA-256 of their secret (see Settings.agent_key_cache_ttl_s)."""
    return _cache("agent_keys", get_settings().agent_key_cache_ttl_s)


def forget_secret(secret_hash: str) -> None:
    """Called on revocation: this process refuses the secret from now on."""
    principal_cache().pop(secret_hash)
    agent_key_cache().pop(secret_hash)


def _token_principal(db: Session, token: str) -> Principal:
    digest = sha256_hex(token)
    principal: Principal = principal_cache().get_or_compute(digest, lambda: _lookup_token(db, digest))
    if principal.kind != "api_token":
        raise _unauthorized("API token unknown or revoked")
    return principal


def _lookup_token(db: Session, digest: str) -> Principal:
    row = db.execute(select(ApiToken).where(ApiToken.token_hash == digest)).scalar_one_or_none()
    if row is None or row.revoked_at is not None:
        db.rollback()
        raise _unauthorized("API token unknown or revoked")
    now = _now()
    if row.last_used_at is None or now - row.last_used_at > TOUCH_INTERVAL:
        db.execute(update(ApiToken).where(ApiToken.id == row.id).values(last_used_at=now))
    db.commit()
    return Principal(kind="api_token", org_id=row.org_id, scope=row.scope, key_id=row.id)


def _agent_principal(db: Session, key: str) -> Principal:
    digest = sha256_hex(key)
    principal: Principal = agent_key_cache().get_or_compute(digest, lambda: _lookup_agent_key(db, digest))
    if principal.kind != "agent_key":
        raise _unauthorized("agent key unknown or revoked")
    return principal


def _lookup_agent_key(db: Session, digest: str) -> Principal:
    row = db.execute(select(AgentKey).where(AgentKey.key_hash == digest)).scalar_one_or_none()
    if row is None or row.revoked_at is not None:
        db.rollback()
        raise _unauthorized("agent key unknown or revoked")
    now = _now()
    if row.last_used_at is None or now - row.last_used_at > TOUCH_INTERVAL:
        db.execute(update(AgentKey).where(AgentKey.id == row.id).values(last_used_at=now))
    db.commit()
    return Principal(kind="agent_key", org_id=row.org_id, key_id=row.id)


DbDep = Annotated[Session, Depends(get_db)]


def get_principal(request: Request, db: DbDep) -> Principal:
    """Any reader: a browser session or an API token. Agent keys are refused (upload only)."""
    token = _bearer(request)
    if token is not None:
        if token.startswith(AGENT_KEY_PREFIX):
            raise ApiError(403, "agent_key_upload_only", "agent keys may only upload snapshots and traces")
        if token.startswith(API_TOKEN_PREFIX):
            return _limited(_token_principal(db, token))
        raise _unauthorized("API token unknown or revoked")
    cookie = request.cookies.get(SESSION_COOKIE)
    if cookie:
        return _session_principal(request, db, cookie)
    raise _unauthorized()


def _principal_in_thread(request: Request, which: Callable[[Request, Session], Principal]) -> Principal:
    with get_sessionmaker()() as db:
        return which(request, db)


def _cached_principal(
    request: Request, prefix: str, kind: str, lookup: Callable[[Session, str], Principal], cache: TTLCache
) -> Principal | None:
    """The cached principal of the request's bearer secret, resolved on the event loop with no
    thread hop and no database session; past half its life it is looked up again in the
    background (refresh ahead: a revoked secret is dropped there, so revocation still takes at
    most the cache's ttl in other processes, and at once in the revoking one)."""
    header = request.headers.get("authorization", "")
    if header[:7].lower() != "bearer " or not header[7:].strip().startswith(prefix):
        return None
    digest = sha256_hex(header[7:].strip())
    cached = cache.get(digest)
    if cached is None or cached.kind != kind:
        return None
    if cache.due(digest):

        def fresh() -> Principal:
            with get_sessionmaker()() as db:
                return lookup(db, digest)

        refresh_in_background(cache, digest, fresh)
    return cast(Principal, cached)


async def get_principal_fast(request: Request) -> Principal:
    """get_principal for hot endpoints: a cached API token needs no thread hop and no database
    (_cached_principal); anything else takes the usual path in a worker thread."""
    cached = _cached_principal(request, API_TOKEN_PREFIX, "api_token", _lookup_token, principal_cache())
    if cached is not None:
        return _limited(cached)
    return await run_in_threadpool(_principal_in_thread, request, get_principal)


async def get_agent_fast(request: Request) -> Principal:
    """get_agent for the upload endpoints, same idea as get_principal_fast."""
    cached = _cached_principal(request, AGENT_KEY_PREFIX, "agent_key", _lookup_agent_key, agent_key_cache())
    if cached is not None:
        return _limited(cached)
    return await run_in_threadpool(_principal_in_thread, request, get_agent)


def get_agent(request: Request, db: DbDep) -> Principal:
    token = _bearer(request)
    if token is None:
        raise _unauthorized("agent uploads need 'Authorization: Bearer hca_…'")
    if not token.startswith(AGENT_KEY_PREFIX):
        raise ApiError(403, "agent_key_required", "uploads need an agent key (hca_…), not a token or session")
    return _limited(_agent_principal(db, token))


def _limited(principal: Principal) -> Principal:
    """The principal, once its token's or key's request rate allows (else 429, core.ratelimit)."""
    ratelimit.take(principal.kind, str(principal.key_id))
    return principal


def get_user(principal: "ReaderDep") -> Principal:
    """A browser session (account and organization management)."""
    if principal.kind != "session":
        raise ApiError(403, "session_required", "this endpoint is for logged-in users, not API tokens")
    return principal


def require_role(min_role: str) -> Callable[[Principal], Principal]:
    def dep(principal: Annotated[Principal, Depends(get_user)]) -> Principal:
        if ROLE_RANK.get(principal.role or "", -1) < ROLE_RANK[min_role]:
            raise ApiError(
                403, "forbidden", f"your role ({principal.role}) may not do this; needs {min_role} or above"
            )
        return principal

    return dep


def get_writer(principal: "ReaderDep") -> Principal:
    if not principal.can_write:
        what = "token scope read" if principal.kind == "api_token" else f"role {principal.role}"
        raise ApiError(403, "forbidden", f"{what} may not make changes")
    return principal


ReaderDep = Annotated[Principal, Depends(get_principal)]
AgentDep = Annotated[Principal, Depends(get_agent_fast)]
FastReaderDep = Annotated[Principal, Depends(get_principal_fast)]
UserDep = Annotated[Principal, Depends(get_user)]
WriterDep = Annotated[Principal, Depends(get_writer)]
MemberDep = Annotated[Principal, Depends(require_role("member"))]
OwnerDep = Annotated[Principal, Depends(require_role("owner"))]

# Paging of list endpoints.
Limit = Annotated[int, Query(ge=1, le=500)]
Offset = Annotated[int, Query(ge=0, le=10**9)]


def require_mail() -> None:
    """Routes that promise a mail (sign-up, password reset, invitation, test report) call this once
    their input and caller are checked and before they change anything: 503 mail_unavailable, with
    the reason, when the mail server does not answer, so the dashboard never says "we sent a
    message" when none can go out."""
    reason = mail.unavailable()
    if reason is not None:
        raise ApiError(
            503,
            "mail_unavailable",
            f"no e-mail can be sent now: {reason}. Nothing was changed; try again later, or ask the "
            "administrator to set HITCURVE_SMTP_HOST and HITCURVE_SMTP_PORT to a working mail server",
        )


MAIL_UNAVAILABLE: dict[int | str, dict[str, str]] = {
    503: {"description": "the mail server does not answer (code mail_unavailable): nothing was done"}
}
