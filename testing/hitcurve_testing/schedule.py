"""The order in which `pytest -n N --dist worksteal` (scripts/test.sh) gets the tests.

pytest-xdist's work-stealing scheduler hands worker i the i-th of N consecutive, equally long
runs of the collection; a worker that runs dry then takes the back half of the longest queue left.
Collected as written, the long live tests (the version matrix, page moves, the agent's minutes of
backend outage) sit together at the end of the last worker's run and start late. Ordered here,
each worker's run starts with its share of the long modules (longest first, each to the worker
with the least so far: the LPT rule), followed by short ones that any idle worker can steal.
Modules stay whole, so their module-scoped fixtures (Celery workers, memcached) start once."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

T = TypeVar("T")

# A module shorter than this (seconds, module-seconds.json) is left in place: short enough to be
# stolen and run anywhere.
LONG_S = 15.0


def run_lengths(n: int, workers: int) -> list[int]:
    """How many tests the scheduler gives each worker first: len(pending) // workers_left."""
    sizes = []
    for i in range(workers):
        sizes.append(n // (workers - i))
        n -= sizes[-1]
    return sizes


def worksteal_order(
    items: Sequence[T], module_of: Callable[[T], str], seconds: dict[str, float], workers: int
) -> list[T]:
    """`items` reordered so that the scheduler's first split gives each worker a balanced share of
    the long modules at the front of its run; everything else keeps its order."""
    modules: dict[str, list[T]] = {}
    for item in items:
        modules.setdefault(module_of(item), []).append(item)
    long = sorted(
        (m for m in modules if seconds.get(m, 0.0) >= LONG_S), key=lambda m: (-seconds[m], m)
    )
    sizes = run_lengths(len(items), workers)
    runs: list[list[T]] = [[] for _ in range(workers)]
    load = [0.0] * workers
    for m in long:
        fits = [i for i in range(workers) if len(runs[i]) + len(modules[m]) <= sizes[i]]
        i = min(fits or range(workers), key=lambda k: (load[k], k))
        runs[i].extend(modules[m])
        load[i] += seconds[m]
    placed = set(long)
    rest = [item for m, its in modules.items() if m not in placed for item in its]
    for i in range(workers):
        take = max(0, sizes[i] - len(runs[i]))
        runs[i].extend(rest[:take])
        rest = rest[take:]
    runs[-1].extend(rest)  # only when a long module outgrew its run: the split then shifts
    return [item for run in runs for item in run]
