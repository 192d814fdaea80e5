"""Requests that really overlap: n calls released together by a barrier, each in its own thread
(a probe of a limit that must hold under concurrency: the log-in and sign-up limits, the password
slots). Used by backend/tests/test_concurrency_limits.py and bench/bounds/probe.py."""

import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import Any


def all_at_once(n: int, call: Callable[[int], Any]) -> list[Any]:
    """call(0) .. call(n - 1), started together; their results in order."""
    start = threading.Barrier(n)

    def one(i: int) -> Any:
        start.wait()
        return call(i)

    with ThreadPoolExecutor(n) as pool:
        return list(pool.map(one, range(n)))
