"""The API as the scripts start it (`python -m hitcurve.serve`, a real uvicorn on loopback) for
tests that need what only a real server does: its own process (memory, CPU), the HTTP parser,
connections and timeouts."""

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]


@dataclass
class LiveApi:
    url: str
    host: str
    port: int
    proc: subprocess.Popen[bytes]
    log: Path

    def rss_bytes(self) -> int:
        """Resident memory of the serving process (one API process: HITCURVE_API_WORKERS=1)."""
        with open(f"/proc/{self.proc.pid}/statm") as f:
            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@contextmanager
def live_api(log_dir: Path, **env: str) -> Iterator[LiveApi]:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    full_env = {**os.environ, "HITCURVE_API_WORKERS": "1", **env}
    log = log_dir / f"api-{port}.log"
    with open(log, "wb") as out:
        proc = subprocess.Popen(
            [sys.executable, "-m", "hitcurve.serve", "--port", str(port), "--log-level", "warning"],
            env=full_env,
            cwd=ROOT,
            stdout=out,
            stderr=subprocess.STDOUT,
        )
    url = f"http://127.0.0.1:{port}"
    # Started when /health answers; a machine at load 30 took over 90 s to import and bind, and
    # the tests then met a refused connection instead of this wait's own message.
    deadline = time.monotonic() + 300
    try:
        while True:
            try:
                if httpx.get(url + "/api/v1/health", timeout=2).status_code in (200, 503):
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, log.read_text()
            assert time.monotonic() < deadline, f"no answer on /health within 300 s: {log.read_text()}"
            time.sleep(0.2)
        yield LiveApi(url=url, host="127.0.0.1", port=port, proc=proc, log=log)
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)
