"""A lean HTTP/1.1 client for the fleet simulator: keep-alive connections to one host,
one request at a time on each, responses parsed by httptools (llhttp in C; pinned in
requirements.lock for uvicorn). httpx cost the simulator ~2 ms of CPU per upload (its connection
pool, anyio, and httpcore importing the absent `sniffio` on every request); this costs ~0.1 ms.

It does what the simulator needs and nothing more: POST with a body, the status and the body of
the answer, redirects never followed, no TLS. The simulated agents stand behind it the way a
fleet stands behind a load balancer: the API sees a few long-lived connections, each carrying
many agents' uploads (the agent itself opens a connection per upload, libcurl in
profiler-agent/src/agent/upload.c)."""

from __future__ import annotations

import asyncio
import time

import httptools

# uvicorn closes a connection idle for 5 s (timeout_keep_alive); one idle this long is not reused,
# so a request is not sent into a close already on its way.
IDLE_S = 3.0


class HttpError(Exception):
    """The connection failed, closed before the answer, timed out or sent what is not HTTP."""


class Closed(HttpError):
    """The server closed the connection."""


class _Connection(asyncio.Protocol):
    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.parser = httptools.HttpResponseParser(self)
        self.waiter: asyncio.Future[tuple[int, bytes]] | None = None
        self.body: list[bytes] = []
        self.closed = False
        self.answered = False  # a byte of the current answer arrived
        self.idle_since = 0.0

    # asyncio.Protocol
    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]

    def data_received(self, data: bytes) -> None:
        self.answered = True
        try:
            self.parser.feed_data(data)
        except httptools.HttpParserError as exc:
            self._fail(HttpError(f"bad response: {exc}"))

    def connection_lost(self, exc: Exception | None) -> None:
        self.closed = True
        self._fail(Closed(f"connection closed: {exc or 'by the server'}"))

    # httptools callbacks
    def on_body(self, body: bytes) -> None:
        self.body.append(body)

    def on_message_complete(self) -> None:
        if not self.parser.should_keep_alive():
            self.closed = True
            if self.transport is not None:
                self.transport.close()
        w, self.waiter = self.waiter, None
        if w is not None and not w.done():
            w.set_result((self.parser.get_status_code(), b"".join(self.body)))
        self.body = []

    def _fail(self, exc: Exception) -> None:
        self.closed = True
        w, self.waiter = self.waiter, None
        if w is not None and not w.done():
            w.set_exception(exc)
        if self.transport is not None:
            self.transport.close()


class Pool:
    """Keep-alive connections to host:port, opened when needed and reused; the caller bounds the
    requests in flight (the simulator's semaphore), which bounds the connections."""

    def __init__(self, host: str, port: int, timeout: float = 120.0) -> None:
        self.host, self.port, self.timeout = host, port, timeout
        self.idle: list[_Connection] = []
        self.opened = 0

    async def post(self, path: str, body: bytes, headers: bytes) -> tuple[int, bytes]:
        """(status, body) of POST path; `headers` are complete header lines (b"Name: value\\r\\n"
        each) besides Host and Content-Length. A kept-alive connection the server closed before
        answering is retried once on a new one (what the agent's retry would do; uploads are
        idempotent by their id). Raises HttpError."""
        conn = self._idle()
        if conn is not None:
            try:
                return await self._send(conn, path, body, headers)
            except Closed:
                if conn.answered:
                    raise
        return await self._send(await self._open(), path, body, headers)

    def _idle(self) -> _Connection | None:
        now = time.monotonic()
        while self.idle:
            c = self.idle.pop()
            if not c.closed and now - c.idle_since < IDLE_S:
                return c
            if c.transport is not None:
                c.transport.close()
        return None

    async def _open(self) -> _Connection:
        try:
            _, conn = await asyncio.get_running_loop().create_connection(_Connection, self.host, self.port)
        except OSError as exc:
            raise HttpError(f"connect: {exc}") from None
        self.opened += 1
        return conn

    async def _send(self, conn: _Connection, path: str, body: bytes, headers: bytes) -> tuple[int, bytes]:
        loop = asyncio.get_running_loop()
        head = (
            f"POST {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            f"Content-Length: {len(body)}\r\n".encode()
            + headers
            + b"\r\n"
        )
        fut: asyncio.Future[tuple[int, bytes]] = loop.create_future()
        conn.waiter = fut
        conn.answered = False
        assert conn.transport is not None
        conn.transport.writelines((head, body))
        timer = loop.call_later(self.timeout, conn._fail, HttpError(f"no answer within {self.timeout:g} s"))
        try:
            result = await fut
        except BaseException:
            conn._fail(HttpError("request abandoned"))  # never reuse a connection mid-answer
            raise
        finally:
            timer.cancel()
        if not conn.closed:
            conn.idle_since = time.monotonic()
            self.idle.append(conn)
        return result

    def close(self) -> None:
        for c in self.idle:
            if c.transport is not None:
                c.transport.close()
        self.idle.clear()
