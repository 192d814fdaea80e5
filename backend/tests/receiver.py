"""A real HTTP receiver on loopback for the notification tests (backend and worker): records every
POST (path, headers, raw body) and answers each path with a scripted sequence of status codes
(the last one repeats), e.g. {"/flaky": [500, 500, 200]}."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes


class Receiver:
    def __init__(self, script: dict[str, list[int]] | None = None) -> None:
        self.script = {k: list(v) for k, v in (script or {}).items()}
        self.received: list[Received] = []
        self.lock = threading.Lock()
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:  # noqa: N802 - http.server's name
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with outer.lock:
                    outer.received.append(
                        Received(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    )
                    codes = outer.script.get(self.path, [200])
                    code = codes.pop(0) if len(codes) > 1 else codes[0]
                self.send_response(code)
                self.send_header("Content-Type", "text/plain")
                self.end_headers()
                self.wfile.write(b"ok" if code < 300 else b"receiver says no")

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def at(self, path: str) -> list[Received]:
        with self.lock:
            return [r for r in self.received if r.path == path]

    def __enter__(self) -> Receiver:
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.server.shutdown()
        self.server.server_close()
