"""GET /api/v1/health: is the service and each of its dependencies reachable, checked for real."""

import time
from typing import Any

import redis
from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from hitcurve import __version__
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine

router = APIRouter(tags=["health"])


def _check_database() -> dict[str, Any]:
    started = time.monotonic()
    try:
        with get_engine().connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # any failure means unreachable; the message says which
        return {"ok": False, "error": f"PostgreSQL unreachable: {type(exc).__name__}: {exc}".strip()[:300]}
    return {"ok": True, "latency_ms": round((time.monotonic() - started) * 1000, 1)}


def _check_redis() -> dict[str, Any]:
    settings = get_settings()
    started = time.monotonic()
    try:
        client = redis.Redis.from_url(
            settings.redis_url,
            socket_timeout=settings.health_timeout_s,
            socket_connect_timeout=settings.health_timeout_s,
        )
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return {"ok": False, "error": f"Redis unreachable: {type(exc).__name__}: {exc}".strip()[:300]}
    return {"ok": True, "latency_ms": round((time.monotonic() - started) * 1000, 1)}


@router.get("/health", summary="Service health with real dependency checks")
def health() -> JSONResponse:
    checks = {"database": _check_database(), "redis": _check_redis()}
    ok = all(c["ok"] for c in checks.values())
    body = {"status": "ok" if ok else "degraded", "version": __version__, "checks": checks}
    return JSONResponse(body, status_code=200 if ok else 503)
