"""GET /api/v1/health: is the service and each of its dependencies reachable, checked for real,
and is any worker consuming (core/workers.py).

HTTP 503 when PostgreSQL or Redis is unreachable (this API process cannot serve: take it out of a
load balancer). status "degraded" with HTTP 200 when the API serves but no worker consumes or
the oldest pending upload is older than Settings.max_queue_lag_s (alert on `status`)."""

import time
from typing import Any

import redis
from fastapi import APIRouter
from fastapi.responses import JSONResponse
from sqlalchemy import text

from hitcurve import __version__
from hitcurve.core.config import get_settings
from hitcurve.core.db import get_engine
from hitcurve.core.workers import queue_status, worker_status

router = APIRouter(tags=["health"])


def _check_database() -> dict[str, Any]:
    started = time.monotonic()
    try:
        with get_engine().connect() as conn:
            conn.execute(text("SELECT 1"))
    except Exception as exc:  # any failure means unreachable; the message says which
        return {"ok": False, "error": f"PostgreSQL unreachable: {type(exc).__name__}: {exc}".strip()[:300]}
    return {"ok": True, "latency_ms": round((time.monotonic() - started) * 1000, 1)}


def _check_redis_and_workers() -> dict[str, dict[str, Any]]:
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
            latency = round((time.monotonic() - started) * 1000, 1)
            workers = worker_status(client)
            try:
                queue = queue_status(client)
            except Exception as exc:  # the database check names the cause
                queue = {"ok": False, "error": f"queue lag unknown: {type(exc).__name__}"}
        finally:
            client.close()
    except Exception as exc:
        error = f"Redis unreachable: {type(exc).__name__}: {exc}".strip()[:300]
        return {
            "redis": {"ok": False, "error": error},
            "workers": {"ok": False, "error": "unknown: the broker is unreachable"},
        }
    return {"redis": {"ok": True, "latency_ms": latency}, "workers": workers, "queue": queue}


@router.get("/health", summary="Service health with real dependency checks")
def health() -> JSONResponse:
    checks = {"database": _check_database(), **_check_redis_and_workers()}
    serving = checks["database"]["ok"] and checks["redis"]["ok"]
    ok = all(c["ok"] for c in checks.values())
    body = {"status": "ok" if ok else "degraded", "version": __version__, "checks": checks}
    return JSONResponse(body, status_code=200 if serving else 503)
