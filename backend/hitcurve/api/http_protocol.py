"""uvicorn's httptools protocol with a bound on each request's head (request line and headers):
`python -m hitcurve.serve` runs the API with it.

httptools (llhttp) has no header size limit of its own and keeps a header's value in memory
until the line ends, so a client could send a header of any size; and uvicorn starts no timer
while a head arrives, so a client sending a byte now and then holds the connection for ever.
Here, past Settings.max_request_head_bytes of one head the connection gets a 431 and is closed,
and a head that is not complete Settings.request_header_timeout_s after the piece it began in
(or, for the first request, after the connection opened) gets a 408 and is closed. Bodies are
bounded in the ASGI layer (hitcurve.api.bounds); idle keep-alive connections by uvicorn's own
keep-alive timeout.
"""

import asyncio
import json
from typing import Any

from uvicorn.protocols.http.httptools_impl import HttpToolsProtocol

from hitcurve.core.config import get_settings

_REASONS = {408: b"Request Timeout", 431: b"Request Header Fields Too Large"}


class BoundedHttpToolsProtocol(HttpToolsProtocol):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        s = get_settings()
        self._head_limit = s.max_request_head_bytes
        self._head_timeout = s.request_header_timeout_s
        self._head_bytes = 0
        self._in_head = True  # inside a head (or, on a new connection, before the first)
        self._head_timer: asyncio.TimerHandle | None = None

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        super().connection_made(transport)
        self._arm()

    def connection_lost(self, exc: Exception | None) -> None:
        self._disarm()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        super().data_received(data)
        # counted after parsing, from the piece in which a head began until the one that ends it
        if self._in_head and not self.transport.is_closing():
            self._arm()
            self._head_bytes += len(data)
            if self._head_bytes > self._head_limit:
                self._refuse(
                    431,
                    "request_head_too_large",
                    f"the request line and headers exceed the limit of {self._head_limit} bytes",
                )

    def on_message_begin(self) -> None:
        super().on_message_begin()
        self._in_head = True
        self._head_bytes = 0

    def on_headers_complete(self) -> None:
        self._in_head = False
        self._disarm()
        super().on_headers_complete()

    def _arm(self) -> None:
        if self._head_timer is None:
            self._head_timer = self.loop.call_later(self._head_timeout, self._timed_out)

    def _disarm(self) -> None:
        if self._head_timer is not None:
            self._head_timer.cancel()
            self._head_timer = None

    def _timed_out(self) -> None:
        self._head_timer = None
        if self._in_head and not self.transport.is_closing():
            self._refuse(
                408,
                "request_timeout",
                f"the request's headers did not arrive within {self._head_timeout:g} s",
            )

    def _refuse(self, status: int, code: str, detail: str) -> None:
        self._disarm()
        if self.cycle is not None and not self.cycle.response_complete:
            self.transport.close()  # an earlier request's answer is still being written
            return
        body = json.dumps({"detail": detail, "code": code}).encode()
        self.transport.write(
            b"HTTP/1.1 %d %s\r\ncontent-type: application/json\r\ncontent-length: %d\r\n"
            b"connection: close\r\n\r\n" % (status, _REASONS[status], len(body)) + body
        )
        self.transport.close()
