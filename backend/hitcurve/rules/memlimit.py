"""memcached's memory limit (`-m`) and what it holds: the one meaning of "memory" in answers.

memcached splits its memory into 1 MiB slab pages (`slab_page_size`, fixed since 1.4.29 whatever
`item_size_max` (-I) or `slab_chunk_max` is). A page belongs to one slab class and holds
floor(1 MiB / chunk_size) items of that class: an item takes a whole chunk (chunk rounding), and
an item larger than `slab_chunk_max` takes several chunks of the largest class plus a tail chunk.
Pages are taken until `total_malloced` reaches `-m` (`limit_maxbytes`); a class that has no page
yet still takes its first one past the limit (slabs.c, do_slabs_newslab). Measured on real
memcached 1.5.16, 1.6.14, 1.6.18 and 1.6.24 at -m 8 ... 1024 with -I 2m, -I 4m, slab_chunk_max
16 KiB and 1 MiB and -f 1.08 (bench/memlimit/measure.py): once full, memcached holds exactly
max(-m in MiB, the classes holding items) pages, total_malloced the same in bytes. The hash table
(8 bytes x 2^hashpower, doubled when items pass 1.5 x 2^hashpower) and the connections' buffers
are allocated outside `-m`.

The worker's curves have memory on their x axis as slab pages x 1 MiB (each class's items counted
in its own chunks per page; the proportional join keeps every class at the same fraction of its
pages today). So the `-m` that holds a point of the curve is its pages in whole MiB, with no per-class
rounding on top (memcached at -m L holds L pages whatever their split). Pure functions, no I/O.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass

from hitcurve.rules.words import counted

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


def classes_holding(classes: Sequence[ClassNow]) -> int:
    """Classes that hold a page or an item today: each keeps at least one page at any -m."""
    return sum(1 for c in classes if c.pages > 0 or c.items > 0)


def pages_at_limit(limit_bytes: int, classes: Sequence[ClassNow]) -> int:
    """Pages memcached holds once full at `-m` = limit_bytes: the limit's whole pages, or one per
    class holding items when those are more (each class's first page is taken past the limit)."""
    if limit_bytes < 0:
        raise ValueError("limit_bytes must be >= 0")
    return max(limit_bytes // PAGE_BYTES, classes_holding(classes))


def limit_for_bytes(curve_bytes: float) -> int:
    """The `-m` (integer bytes, a whole number of MiB, at least 1) whose pages hold what the curve
    calls `curve_bytes` (slab pages x 1 MiB): those pages rounded up to a whole MiB. Below one page
    per class memcached holds one page a class whatever the -m (pages_at_limit); a smaller -m than
    this then holds the same, but not once a new class takes a page, so it is not the answer."""
    if not math.isfinite(curve_bytes) or curve_bytes < 0:
        raise ValueError("curve_bytes must be finite and >= 0")
    return max(1, math.ceil(curve_bytes / MIB - 1e-9)) * MIB


def items_at_limit(limit_bytes: int, classes: Sequence[ClassNow]) -> dict[int, int]:
    """Items each class (by index) holds once memcached has filled `-m` = limit_bytes: its pages
    (pages_at_limit) shared as today's are (largest remainder, a class holding items keeps one),
    each page holding floor(1 MiB / chunk) items."""
    pages_total = pages_at_limit(limit_bytes, classes)
    now = sum(c.pages for c in classes)
    if now <= 0 or pages_total <= 0:
        return {i: 0 for i in range(len(classes))}
    exact = [pages_total * c.pages / now for c in classes]
    pages = [math.floor(e) for e in exact]
    order = sorted(range(len(classes)), key=lambda i: exact[i] - pages[i], reverse=True)
    for i in order[: pages_total - sum(pages)]:
        pages[i] += 1
    for i, c in enumerate(classes):
        if pages[i] == 0 and (c.pages > 0 or c.items > 0):
            donor = max(range(len(classes)), key=lambda j: pages[j])
            pages[donor] -= 1
            pages[i] = 1
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
