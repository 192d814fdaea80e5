"""The API's exception handlers: every 4xx answers {"detail": "<specific message>", "code":
"<machine code>"}. An ApiError carries its status; every other refusal (hitcurve.core.domain) is
mapped to its kind's status here, in one handler."""

import logging

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from sqlalchemy.exc import DataError, IntegrityError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeout

from hitcurve.api.bounds import RequestRefused
from hitcurve.core.domain import (
    Conflict,
    Invalid,
    Malformed,
    NotEnoughDataError,
    NotFound,
    Refused,
    TooLarge,
    TooMany,
    Unavailable,
)
from hitcurve.core.errors import ApiError, clean_errors

log = logging.getLogger("hitcurve.errors")

# Each kind of refusal's status (a QueryRefused is an Invalid: 422, located on its parameter).
STATUS: dict[type[Refused], int] = {
    Malformed: 400,
    NotFound: 404,
    Conflict: 409,
    NotEnoughDataError: 409,
    TooLarge: 413,
    TooMany: 429,
    Invalid: 422,
    Unavailable: 503,
}


def status_of(exc: Refused) -> int:
    """The status of a refusal: its own for an ApiError, else its kind's (the nearest in its MRO)."""
    if isinstance(exc, ApiError):
        return exc.status
    # a bare Refused names no kind: a defect of the code that raised it, answered as one
    return next((STATUS[k] for k in type(exc).__mro__ if k in STATUS), 500)


def install_handlers(app: FastAPI) -> None:
    @app.exception_handler(Refused)
    async def _refused(request: Request, exc: Refused) -> JSONResponse:
        headers = exc.headers if isinstance(exc, ApiError) else None
        if headers is None and exc.retry_after_s is not None:
            headers = {"Retry-After": str(exc.retry_after_s)}
        return JSONResponse(
            {"detail": exc.detail, "code": exc.code}, status_code=status_of(exc), headers=headers
        )

    @app.exception_handler(RequestRefused)
    async def _request_refused(request: Request, exc: RequestRefused) -> JSONResponse:
        # a body over its limit or too slow (hitcurve.api.bounds): the rest of it is not read
        return JSONResponse(
            {"detail": exc.detail, "code": exc.code},
            status_code=exc.status_code,
            headers={"Connection": "close"},
        )

    @app.exception_handler(PoolTimeout)
    async def _pool_busy(request: Request, exc: PoolTimeout) -> JSONResponse:
        # every connection of this process's pool in use for Settings.db_pool_timeout_s: busy, not broken
        log.warning("database pool exhausted on %s %s", request.method, request.url.path)
        return JSONResponse(
            {"detail": "the service is busy; retry shortly", "code": "busy"},
            status_code=503,
            headers={"Retry-After": "2"},
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
