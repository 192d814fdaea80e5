"""memcached's memory limit (`-m`) and what it holds: the one meaning of "memory" in answers.

memcached splits its memory into 1 MiB slab pages (`slab_page_size`, fixed since 1.4.29 whatever
`item_size_max` is). A page belongs to one slab class and holds floor(1 MiB / chunk_size) items
of that class: an item takes a whole chunk (chunk rounding), and a class holds whole pages. Pages
are taken until `total_malloced` reaches `-m` (`limit_maxbytes`); a class that has no page yet
may still take its first one past the limit (slabs.c, do_slabs_newslab). The hash table
(8 bytes x 2^hashpower, doubled when items pass 1.5 x 2^hashpower) and the connections' buffers
are allocated outside `-m`.

The worker's curves have memory on their x axis as slab pages x 1 MiB with every class at the
same fraction of today's items (hitcurve_worker.merge, proportional join). So the `-m` that holds
a point of the curve is the pages each class needs at that fraction, each rounded up to a whole
page, in whole MiB (the unit `-m` takes). Pure functions, no I/O.
"""

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from hitcurve.words import counted

PAGE_BYTES = 1 << 20  # memcached's slab page
MIB = 1 << 20  # -m is given in megabytes (MiB)
HASHPOWER_DEFAULT = 16
HASHPOWER_MAX = 32


@dataclass(frozen=True)
class ClassNow:
    """One slab class as memcached holds it today."""

    chunk_size: int  # bytes per chunk (item + header, rounded up to the class size)
    items: int  # items it holds
    pages: int  # 1 MiB pages it holds


def items_per_page(chunk_size: int) -> int:
    """Chunks of this size in one page (chunk rounding: the remainder of the page is unused)."""
    if chunk_size <= 0:
        raise ValueError("chunk_size must be positive")
    return max(1, PAGE_BYTES // chunk_size)


def pages_at_fraction(classes: Iterable[ClassNow], fraction: float) -> int:
    """Pages memcached needs to hold every class at `fraction` of its items today, each class in
    whole pages (a class with items never gets fewer than one page)."""
    if not math.isfinite(fraction) or fraction < 0:
        raise ValueError("fraction must be finite and >= 0")
    total = 0
    for c in classes:
        if c.items <= 0:
            continue
        want = c.items * fraction
        total += max(1, math.ceil(want / items_per_page(c.chunk_size) - 1e-9))
    return total


def limit_for_bytes(curve_bytes: float, current_bytes: float, classes: Sequence[ClassNow]) -> int:
    """The `-m` (integer bytes, a whole number of MiB) at which memcached holds what the curve
    calls `curve_bytes`, `current_bytes` being the curve's x for today (pages x 1 MiB).

    Without per-class facts it is `curve_bytes` rounded up to a whole MiB."""
    if not math.isfinite(curve_bytes) or curve_bytes < 0:
        raise ValueError("curve_bytes must be finite and >= 0")
    need = curve_bytes
    if current_bytes > 0 and any(c.items > 0 for c in classes):
        pages = pages_at_fraction(classes, curve_bytes / current_bytes)
        need = max(need, pages * PAGE_BYTES)
    return max(1, math.ceil(need / MIB - 1e-9)) * MIB


def items_at_limit(limit_bytes: int, classes: Sequence[ClassNow]) -> dict[int, int]:
    """Items each class (by index) holds once memcached has filled `-m` = limit_bytes, its pages
    shared as today's are (largest remainder), each page holding floor(1 MiB / chunk) items."""
    pages_total = limit_bytes // PAGE_BYTES
    now = sum(c.pages for c in classes)
    if now <= 0 or pages_total <= 0:
        return {i: 0 for i in range(len(classes))}
    exact = [pages_total * c.pages / now for c in classes]
    pages = [math.floor(e) for e in exact]
    order = sorted(range(len(classes)), key=lambda i: exact[i] - pages[i], reverse=True)
    for i in order[: pages_total - sum(pages)]:
        pages[i] += 1
    return {i: pages[i] * items_per_page(c.chunk_size) for i, c in enumerate(classes)}


def hash_table_bytes(items: float) -> int:
    """The hash table memcached ends up with for `items` items (outside -m)."""
    hp = HASHPOWER_DEFAULT
    while items > (1 << hp) * 3 / 2 and hp < HASHPOWER_MAX:
        hp += 1
    return (1 << hp) * 8


@dataclass(frozen=True)
class Outside:
    """Memory memcached uses outside `-m` at a given size."""

    hash_table_bytes: int
    connections: int | None  # open connections today (each has its own buffers, not counted)

    def describe(self) -> str:
        conns = (
            f" and the buffers of its {counted(self.connections, 'connection')}"
            if self.connections is not None
            else ""
        )
        return f"outside -m: the hash table ({human_bytes(self.hash_table_bytes)}){conns}"


def outside_limit(items_at_target: float, connections: int | None) -> Outside:
    return Outside(hash_table_bytes(items_at_target), connections)


NBSP = "\u00a0"
MINUS = "\u2212"
_UNITS = (("TiB", 1 << 40), ("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10), ("B", 1))


def human_bytes(b: float | None) -> str:
    """Bytes for people, exactly as the dashboard writes them (frontend/src/lib/format.ts
    formatBytes; both test suites check one case table, frontend/src/lib/bytes.cases.json): the
    unit in which the value reads in [1, 1024), one decimal below 100 (kept below 10: "1.0 GiB"),
    whole numbers from 100 up, a value that would read 1024 moved up a unit, a no-break space, a
    minus sign. The API's messages wrote "1 GiB" where the dashboard wrote "1.0 GiB"."""
    if b is None:
        return "?"
    v = float(b)
    if not math.isfinite(v):
        return "—"
    i = next((k for k, (_, size) in enumerate(_UNITS) if abs(v) >= size), len(_UNITS) - 1)
    if i > 0 and abs(v) / _UNITS[i][1] >= 1023.5:
        i -= 1
    name, size = _UNITS[i]
    text = str(_js_round(v)) if name == "B" else _for_display(v / size)
    return f"{text}{NBSP}{name}".replace("-", MINUS)


def _js_round(v: float) -> int:
    """JavaScript's Math.round: halves toward +infinity (Python's round goes to even)."""
    return math.floor(v + 0.5)


def _for_display(v: float) -> str:
    """format.ts roundForDisplay: whole from 100 up, else one decimal, ".0" dropped from 10 up."""
    if abs(v) >= 100:
        return str(_js_round(v))
    r = _js_round(v * 10) / 10
    s = f"{r:.1f}"
    return s[:-2] if s.endswith(".0") and abs(r) >= 10 else s
