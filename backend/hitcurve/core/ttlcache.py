"""A small per-process cache with a time to live, for hot read paths (token lookups, fitted curves).

Bounded: when full it is simply emptied (the entries are cheap to recompute). Thread-safe enough
for its use: single dict operations under the GIL.

Refresh ahead: an entry read in the second half of its life is due (`due`, true once until
`refreshed`): the reader answers from it and recomputes it in the background
(`refresh_in_background`). A key read at least every ttl/2 then never expires under its
readers, so no hot request waits for the database, and no entry is ever served past its ttl:
what a refresh stores is as old as its read, exactly as on a miss.
"""

import asyncio
import logging
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

from hitcurve.core.domain import Refused

log = logging.getLogger("hitcurve.cache")


class TTLCache:
    def __init__(self, ttl_s: float, max_entries: int = 10_000) -> None:
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._data: dict[Hashable, tuple[float, Any]] = {}
        self._locks: dict[Hashable, threading.Lock] = {}
        self._refreshing: set[Hashable] = set()

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

    def due(self, key: Hashable) -> bool:
        """True once for a live entry in the second half of its life (until `refreshed(key)`):
        the caller recomputes it in the background."""
        hit = self._data.get(key)
        if self.ttl_s <= 0 or hit is None or hit[0] - time.monotonic() > self.ttl_s / 2:
            return False
        if key in self._refreshing:
            return False
        self._refreshing.add(key)
        return True

    def refreshed(self, key: Hashable) -> None:
        self._refreshing.discard(key)

    def pop(self, key: Hashable) -> None:
        self._data.pop(key, None)

    def clear(self) -> None:
        self._data.clear()


def refresh_in_background(cache: TTLCache, key: Hashable, compute: Callable[[], Any]) -> None:
    """From the event loop: recompute a due entry in a worker thread and store it; the caller
    answers from the current entry meanwhile. compute returns the new value, or raises: a
    refusal (the key is gone: a revoked token, a deleted server) drops the entry, anything else
    (the database unreachable) is logged and leaves the entry to expire as usual."""

    def run() -> None:
        try:
            cache.put(key, compute())
        except Refused:
            cache.pop(key)
        except Exception:  # a failed refresh must not end the thread silently or noisily
            log.warning("background refresh of a cached entry failed", exc_info=True)
        finally:
            cache.refreshed(key)

    asyncio.get_running_loop().run_in_executor(None, run)
