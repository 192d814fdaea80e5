"""A small per-process cache with a time to live, for hot read paths (token lookups, fitted curves).

Bounded: when full it is simply emptied (the entries are cheap to recompute). Thread-safe enough
for its use: single dict operations under the GIL.
"""

import threading
import time
from collections.abc import Callable, Hashable
from typing import Any


class TTLCache:
    def __init__(self, ttl_s: float, max_entries: int = 10_000) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._data: dict[Hashable, tuple[float, Any]] = {}
        self._locks: dict[Hashable, threading.Lock] = {}

    def get(self, key: Hashable) -> Any | None:
        hit = self._data.get(key)
        if hit is None:
            return None
        if hit[0] < time.monotonic():
            self._data.pop(key, None)
            return None
        return hit[1]

    def put(self, key: Hashable, value: Any) -> None:
        if self.ttl_s <= 0:
            return
        if len(self._data) >= self.max_entries:
            self._data.clear()
        self._data[key] = (time.monotonic() + self.ttl_s, value)

    def get_or_compute(self, key: Hashable, compute: Callable[[], Any]) -> Any:
        """The cached value, or compute it once: concurrent misses of one key wait for the first
        (no stampede of identical database queries when an entry expires under load)."""
        value = self.get(key)
        if value is not None or self.ttl_s <= 0:
            return value if value is not None else compute()
        if len(self._locks) >= self.max_entries:
            self._locks.clear()
        lock = self._locks.setdefault(key, threading.Lock())
        with lock:
            value = self.get(key)
            if value is None:
                value = compute()
                self.put(key, value)
            return value

    def pop(self, key: Hashable) -> None:
        self._data.pop(key, None)

    def clear(self) -> None:
        self._data.clear()
