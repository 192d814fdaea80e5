"""API errors: every 4xx answers {"detail": "<specific message>", "code": "<machine code>"}."""

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, IntegrityError, OperationalError

log = logging.getLogger("hitcurve.errors")


class ApiError(Exception):
    def __init__(self, status: int, code: str, detail: Any, headers: dict[str, str] | None = None) -> None:
        super().__init__(detail)
        self.status = status
        self.code = code
        self.detail = detail
        self.headers = headers


def not_found(what: str) -> ApiError:
    """Foreign and missing ids answer the same 404, so ids of other organizations leak nothing."""
    return ApiError(404, "not_found", f"{what} not found")


def clean_errors(errors: Any) -> list[dict[str, Any]]:
    """Pydantic errors without the offending input (may be huge) or non-JSON context objects."""
    out = []
    for e in errors:
        out.append(
            {
                "loc": [p if isinstance(p, int | str) else str(p) for p in e.get("loc", ())],
                "msg": str(e.get("msg", "")).removeprefix("Value error, "),
                "type": str(e.get("type", "")),
            }
        )
    return out[:50]


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError) -> JSONResponse:
        return JSONResponse(
            {"detail": exc.detail, "code": exc.code}, status_code=exc.status, headers=exc.headers
        )

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError) -> JSONResponse:
        return JSONResponse(
            {"detail": clean_errors(exc.errors()), "code": "invalid_request"}, status_code=422
        )

    # Safety nets: input that slipped past validation must still get a 4xx, not a 500.
    @app.exception_handler(IntegrityError)
    async def _integrity(request: Request, exc: IntegrityError) -> JSONResponse:
        log.warning("integrity error on %s %s: %s", request.method, request.url.path, exc.orig)
        return JSONResponse(
            {"detail": "conflicts with existing data (a name or id already in use)", "code": "conflict"},
            status_code=409,
        )

    @app.exception_handler(DataError)
    async def _data(request: Request, exc: DataError) -> JSONResponse:
        log.warning("data error on %s %s: %s", request.method, request.url.path, exc.orig)
        reason = str(exc.orig).splitlines()[0] if exc.orig is not None else "invalid value"
        return JSONResponse(
            {"detail": f"the database refused a value: {reason}", "code": "invalid_value"}, status_code=422
        )

    @app.exception_handler(OperationalError)
    async def _database_down(request: Request, exc: OperationalError) -> JSONResponse:
        # PostgreSQL unreachable or overloaded: a clear, retryable answer (agents retry 5xx later).
        log.error("database unavailable on %s %s: %s", request.method, request.url.path, exc.orig)
        return JSONResponse(
            {"detail": "the database is unavailable; retry later", "code": "database_unavailable"},
            status_code=503,
            headers={"Retry-After": "5"},
        )
