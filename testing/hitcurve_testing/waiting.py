"""Waiting for an event in a test: poll until it happened, fail only after a generous deadline.

The machines tests run on are shared and at times loaded 15-70 on 2 cores (two `make test` at
once): a server's start-up, a first request that builds state or a worker's first answer can take
tens of seconds there. So no test waits a fixed time or a short count of polls; it waits for the
event, and the deadline (DEADLINE_S, minutes) only ends a run that would hang."""

import subprocess
import time
from collections.abc import Callable
from typing import TypeVar

import httpx

T = TypeVar("T")

DEADLINE_S = 180.0
# The read timeout of a request whose answer the test needs (a loaded server answers late).
REQUEST_TIMEOUT_S = 120.0


def wait_until(done: Callable[[], T], what: str, timeout: float = DEADLINE_S, interval: float = 0.1) -> T:
    """done()'s first truthy value; AssertionError naming `what` after `timeout` seconds."""
    deadline = time.monotonic() + timeout
    while True:
        value = done()
        if value:
            return value
        if time.monotonic() >= deadline:
            raise AssertionError(f"{what}: not within {timeout:.0f} s")
        time.sleep(interval)


def wait_http(url: str, proc: subprocess.Popen[bytes] | None = None, timeout: float = DEADLINE_S) -> None:
    """Until url answers at all (any status): a server that is up. Fails at once when proc, the
    server's process, has exited."""

    def answered() -> bool:
        if proc is not None and proc.poll() is not None:
            raise AssertionError(f"the server exited with {proc.returncode} before answering {url}")
        try:
            httpx.get(url, timeout=REQUEST_TIMEOUT_S)
        except httpx.TransportError:
            return False
        return True

    wait_until(answered, f"{url} answering", timeout)
