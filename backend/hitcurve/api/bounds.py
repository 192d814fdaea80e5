"""What every request may send and what every answer carries, in one place: an ASGI middleware
outside every route (hitcurve.main adds it last, so it runs first).

- The path: a NUL or another control character (`GET /%00`) is a 400 `bad_path`; no route, static
  file lookup or log line sees it.
- The body: at most Settings.max_body_bytes on the agent upload routes (/api/v1/agent/...) and
  Settings.max_request_body_bytes on every other route, whatever the method. A declared
  Content-Length over the limit is a 413 before the route (or its authentication) runs; a body
  without one (chunked) is read here, before the route, and refused with a 413 as soon as it
  passes the limit (so even a route that answers without reading a body refuses it alike), and
  no route ever holds more than the limit in memory.
- Slow bodies: the whole body must arrive within Settings.request_body_timeout_s of its first
  read (a byte now and then holds nothing for long), else 408 `request_timeout`. (Slow or
  oversized request heads are the HTTP protocol's to refuse, before any ASGI code runs:
  hitcurve.api.http_protocol.)
- Every answer: Content-Security-Policy with frame-ancestors 'none', X-Frame-Options DENY and
  X-Content-Type-Options nosniff (the dashboard and the API can be framed by no page). The
  dashboard's policy allows only its own scripts, styles, images and API; the Swagger UI and
  ReDoc pages (inline start-up scripts, a worker from a blob) get theirs.
"""

import asyncio
import json
from typing import Any

from starlette.exceptions import HTTPException
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from hitcurve.core.config import get_settings

UPLOAD_PREFIX = "/api/v1/agent/"
DOCS_PREFIXES = ("/api/v1/docs", "/api/v1/redoc")

_FRAMING = "frame-ancestors 'none'; base-uri 'none'; object-src 'none'; form-action 'self'"
DASHBOARD_CSP = (
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    f"connect-src 'self'; font-src 'self'; {_FRAMING}"
)
DOCS_CSP = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    f"img-src 'self' data:; worker-src 'self' blob:; {_FRAMING}"
)


def _security_headers(path: str) -> list[tuple[bytes, bytes]]:
    csp = DOCS_CSP if path.startswith(DOCS_PREFIXES) else DASHBOARD_CSP
    return [
        (b"content-security-policy", csp.encode()),
        (b"x-frame-options", b"DENY"),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"same-origin"),
    ]


_SECURITY = {b"content-security-policy", b"x-frame-options", b"x-content-type-options", b"referrer-policy"}


class RequestRefused(HTTPException):
    """A request this layer refuses (raised from `receive` inside a route, answered by the API's
    handler with {"detail", "code"}; FastAPI passes HTTPExceptions from a body read through)."""

    def __init__(self, status: int, code: str, detail: str) -> None:
        super().__init__(status_code=status, detail=detail)
        self.code = code


def body_limit(path: str) -> int:
    s = get_settings()
    return s.max_body_bytes if path.startswith(UPLOAD_PREFIX) else s.max_request_body_bytes


def _bad_path(path: str) -> bool:
    return any(ord(c) < 0x20 or ord(c) == 0x7F for c in path)


def _header(scope: Scope, wanted: bytes) -> bytes | None:
    for name, value in scope["headers"]:
        if name == wanted:
            return bytes(value)
    return None


def _declared_length(scope: Scope) -> int | None:
    value = _header(scope, b"content-length")
    return int(value) if value is not None and value.isdigit() else None


def too_large(limit: int) -> RequestRefused:
    return RequestRefused(413, "body_too_large", f"request body exceeds the limit of {limit} bytes")


class RequestBounds:
    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        path: str = scope["path"]
        extra = _security_headers(path)
        started = False

        async def send_with_headers(message: Message) -> None:
            nonlocal started
            if message["type"] == "http.response.start":
                started = True
                headers = [h for h in message.get("headers", []) if h[0].lower() not in _SECURITY]
                message = {**message, "headers": headers + extra}
            await send(message)

        async def refuse(exc: RequestRefused) -> None:
            body = json.dumps({"detail": exc.detail, "code": exc.code}).encode()
            await send_with_headers(
                {
                    "type": "http.response.start",
                    "status": exc.status_code,
                    "headers": [
                        (b"content-type", b"application/json"),
                        (b"content-length", str(len(body)).encode()),
                        (b"connection", b"close"),
                    ],
                }
            )
            await send({"type": "http.response.body", "body": body})

        if _bad_path(path):
            await refuse(
                RequestRefused(400, "bad_path", "the path must not contain NUL or control characters")
            )
            return
        limit = body_limit(path)
        declared = _declared_length(scope)
        if declared is not None and declared > limit:
            await refuse(too_large(limit))
            return
        bounded = _bounded_receive(receive, limit)
        try:
            if declared is None and _header(scope, b"transfer-encoding"):
                # no length declared: read it here (at most limit), so that every route, even one
                # answering before it reads a body, refuses one over the limit alike
                bounded = await _read_ahead(bounded)
            await self.app(scope, bounded, send_with_headers)
        except RequestRefused as exc:  # raised outside a route, or where no handler answered it
            if not started:
                await refuse(exc)


def _bounded_receive(receive: Receive, limit: int) -> Receive:
    """receive() that counts the body against limit and ends at the body timeout, counted from
    the route's first read; once the body is complete it passes the server's messages (a
    disconnect) through."""
    timeout = get_settings().request_body_timeout_s
    received = 0
    done = False
    deadline: float | None = None

    async def bounded() -> Any:
        nonlocal received, done, deadline
        if done:
            return await receive()
        if deadline is None:
            deadline = asyncio.get_running_loop().time() + timeout
        try:
            async with asyncio.timeout_at(deadline):
                message = await receive()
        except TimeoutError:
            raise RequestRefused(
                408, "request_timeout", f"the request body did not arrive within {timeout:g} s"
            ) from None
        if message["type"] == "http.request":
            received += len(message.get("body", b""))
            if received > limit:
                raise too_large(limit)
            done = not message.get("more_body", False)
        else:
            done = True
        return message

    return bounded


async def _read_ahead(receive: Receive) -> Receive:
    """The whole body read now through receive (bounded), then handed to the app as one message."""
    body = bytearray()
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return _replay([message], receive)
        body += message.get("body", b"")
        if not message.get("more_body", False):
            return _replay([{"type": "http.request", "body": bytes(body), "more_body": False}], receive)


def _replay(messages: list[Message], receive: Receive) -> Receive:
    async def replay() -> Any:
        return messages.pop(0) if messages else await receive()

    return replay
