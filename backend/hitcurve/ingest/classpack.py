"""A snapshot's slab classes as one compact, lossless bytes value (snapshots.classes).

Why: stored as one row per class with two float8[100] curves each, an upload of 28 classes wrote
~55 KB of WAL (1.8 KB a row, under PostgreSQL's toast threshold, and binary doubles of hit ratios
do not compress) plus ~57 index entries: 60 % of the upload's write path
(bench/results/2026-12-02-fleet-write-path.md). The agent rounds hit ratios to millionths and
sizes to integers or thousandths (profiler-agent/src/agent/snapshot.c), and an LRU curve never
decreases, so a curve written as integer steps from point to point is mostly small numbers; laid
out byte plane by byte plane (the high bytes of small numbers are zero) zlib packs a 28-class
snapshot into ~3-5 KB, in one row.

Lossless for any float: an array is written as integer steps only when every value comes back
exactly (the decimal's double is the value's double); otherwise as its raw doubles. Integers
and absent values (NULL) per class are columns: -1 for an absent count, NaN for an absent mean.

Layout (little-endian), zlib-compressed:
  magic "HCK1", classes n (u16), points per class p (u16), flags (u8: 1 = TTL-aware curves)
  columns of n: id i16, chunk_size i32, pages i32, items i64, evictions i64, requests i64,
    current_items i64, cost_count i64, ghost_reach i64, ghost_filters i16, has_ttl u8, then the
    cost's mean/p50/p90/p99 f64
  curves: sizes, hit ratios (n x p each); with flag 1, the TTL-aware sizes and hit ratios of the
    classes with has_ttl (m x p each). Each curve: a mode byte (0 raw f64; k > 0 integer steps at
    10^-(k-1), as i64 byte planes) then its data.
Pure: numpy and zlib only.
"""

from __future__ import annotations

import struct
import zlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

MAGIC = b"HCK1"
_HEAD = struct.Struct("<4sHHB")
MAX_CLASSES = 1 << 15
# The decimals tried for a curve, finest last: integers (items), thousandths (items below one per
# point), millionths (hit ratios). The first whose every value round-trips is used.
_SCALES = (0, 3, 6)

# (column, dtype) in stored order: the per-class values of the protocol's `classes`.
_INTS = (
    ("class_id", "<i2"),
    ("chunk_size", "<i4"),
    ("pages", "<i4"),
    ("items", "<i8"),
    ("evictions", "<i8"),
    ("requests", "<i8"),
    ("current_items", "<i8"),
    ("cost_count", "<i8"),
)
_FLOATS = ("cost_mean_us", "cost_p50_us", "cost_p90_us", "cost_p99_us")
_TAIL = (("ghost_reach_items", "<i8"), ("ghost_filters", "<i2"), ("has_ttl", "u1"))
# Columns where an absent value (None) is stored as -1 (counts are never negative).
_OPTIONAL = {"cost_count", "ghost_reach_items", "ghost_filters"}


class ClassPackError(ValueError):
    """Bytes that are not a packed class set (a truncated or foreign value)."""


@dataclass(frozen=True)
class StoredClass:
    """One slab class of a snapshot as stored: the fields of the protocol's class (the curve's
    sizes in items, its LRU hit ratios, the TTL-aware curve or None)."""

    class_id: int
    chunk_size: int
    pages: int
    items: int
    evictions: int
    requests: int
    current_items: int
    cost_count: int | None
    cost_mean_us: float | None
    cost_p50_us: float | None
    cost_p90_us: float | None
    cost_p99_us: float | None
    ghost_reach_items: int | None
    ghost_filters: int | None
    sizes_items: list[float]
    hit_ratios: list[float]
    ttl_sizes_items: list[float] | None
    ttl_hit_ratios: list[float] | None


def _planes(v: np.ndarray) -> bytes:
    """An i64 array's bytes grouped by significance: every value's lowest byte, then the next..."""
    return np.ascontiguousarray(v.astype("<i8").view(np.uint8).reshape(-1, 8).T).tobytes()


def _unplanes(buf: bytes, count: int) -> np.ndarray:
    return np.frombuffer(buf, np.uint8).reshape(8, count).T.copy().view("<i8").ravel()


def _pack_curve(values: np.ndarray, width: int) -> bytes:
    """One curve set (rows of `width` points): integer steps when lossless, else raw doubles."""
    v = np.ascontiguousarray(values, dtype=np.float64)
    if v.size and np.isfinite(v).all():
        for k in _SCALES:
            q = np.rint(v * 10.0**k)
            if np.abs(q).max() < 2**62 and np.array_equal(q / 10.0**k, v):
                steps = np.diff(q.reshape(-1, width), axis=1, prepend=0).astype(np.int64)
                return bytes([k + 1]) + _planes(steps.ravel())
    return b"\x00" + v.astype("<f8").tobytes()


def _unpack_curve(buf: memoryview, at: int, count: int, width: int) -> tuple[np.ndarray, int]:
    mode = buf[at]
    end = at + 1 + 8 * count
    if end > len(buf):
        raise ClassPackError("truncated curve")
    if mode == 0:
        return np.frombuffer(buf[at + 1 : end], "<f8").copy(), end
    if mode - 1 not in _SCALES:
        raise ClassPackError(f"unknown curve mode {mode}")
    steps = _unplanes(bytes(buf[at + 1 : end]), count).reshape(-1, width)
    return (np.cumsum(steps, axis=1).ravel() / 10.0 ** (mode - 1)), end


def pack(
    columns: Mapping[str, Sequence[Any]],
    xs: np.ndarray,
    ys: np.ndarray,
    points: int,
    ttl_xs: np.ndarray | None = None,
    ttl_ys: np.ndarray | None = None,
) -> bytes:
    """The packed value of a snapshot's classes.

    columns: one list per column of _INTS, _FLOATS and ghost_reach_items / ghost_filters /
    has_ttl (None where absent); xs, ys: every class's `points` sizes and hit ratios end to end;
    ttl_xs, ttl_ys: the same for the classes with has_ttl, in class order (or None)."""
    n = len(columns["class_id"])
    if n >= MAX_CLASSES or not 0 <= points < 1 << 16:
        raise ValueError(f"{n} classes of {points} points: at most {MAX_CLASSES - 1} of {(1 << 16) - 1}")
    if len(xs) != n * points or len(ys) != n * points:
        raise ValueError(f"{len(xs)} sizes and {len(ys)} hit ratios for {n} classes of {points} points")
    has_ttl = [bool(h) for h in columns["has_ttl"]]
    m = sum(has_ttl)
    flags = 1 if m else 0
    out = [_HEAD.pack(MAGIC, n, points, flags)]
    for name, dtype in _INTS + _TAIL:
        vals = has_ttl if name == "has_ttl" else columns[name]
        if name in _OPTIONAL:
            vals = [-1 if v is None else v for v in vals]
        out.append(np.asarray(vals, dtype=np.int64).astype(dtype).tobytes())
    for name in _FLOATS:
        out.append(np.asarray([np.nan if v is None else v for v in columns[name]], "<f8").tobytes())
    if points:
        out.append(_pack_curve(xs, points))
        out.append(_pack_curve(ys, points))
        if m:
            if ttl_xs is None or ttl_ys is None or len(ttl_xs) != m * points or len(ttl_ys) != m * points:
                raise ValueError(f"TTL-aware curves for {m} classes of {points} points expected")
            out.append(_pack_curve(ttl_xs, points))
            out.append(_pack_curve(ttl_ys, points))
    return zlib.compress(b"".join(out), 6)


def _column(buf: memoryview, at: int, dtype: str, n: int) -> tuple[np.ndarray, int]:
    size = np.dtype(dtype).itemsize * n
    if at + size > len(buf):
        raise ClassPackError("truncated columns")
    return np.frombuffer(buf[at : at + size], dtype), at + size


@dataclass(frozen=True)
class Columns:
    """A packed value as arrays: one per column (absent values as stored: -1, NaN), the curves as
    (classes, points) arrays, the TTL-aware ones for the classes with has_ttl only."""

    cols: dict[str, np.ndarray]
    sizes: np.ndarray
    hits: np.ndarray
    ttl_sizes: np.ndarray
    ttl_hits: np.ndarray


def unpack_columns(value: bytes) -> Columns:
    """The packed value's columns and curves (what a reader of many snapshots wants: no object
    per class). Raises ClassPackError."""
    try:
        raw = zlib.decompress(value)
    except zlib.error as exc:
        raise ClassPackError(f"not a packed class set: {exc}") from exc
    if len(raw) < _HEAD.size:
        raise ClassPackError("truncated header")
    magic, n, p, flags = _HEAD.unpack_from(raw)
    if magic != MAGIC:
        raise ClassPackError(f"not a packed class set (magic {magic!r})")
    buf, at = memoryview(raw), _HEAD.size
    cols: dict[str, np.ndarray] = {}
    for name, dtype in _INTS + _TAIL:
        cols[name], at = _column(buf, at, dtype, n)
    for name in _FLOATS:
        cols[name], at = _column(buf, at, "<f8", n)
    xs = ys = tx = ty = np.zeros(0)
    if p:
        xs, at = _unpack_curve(buf, at, n * p, p)
        ys, at = _unpack_curve(buf, at, n * p, p)
        if flags & 1:
            m = int(cols["has_ttl"].sum())
            tx, at = _unpack_curve(buf, at, m * p, p)
            ty, at = _unpack_curve(buf, at, m * p, p)
    if at != len(buf):
        raise ClassPackError(f"{len(buf) - at} trailing bytes")
    shape = (n, p)
    m = int(cols["has_ttl"].sum()) if flags & 1 else 0
    return Columns(cols, xs.reshape(shape), ys.reshape(shape), tx.reshape(m, p), ty.reshape(m, p))


def unpack(value: bytes) -> list[StoredClass]:
    """The classes of a packed value, in stored (class) order. Raises ClassPackError."""
    c = unpack_columns(value)
    n, p = c.sizes.shape
    return _records(
        c.cols,
        c.sizes.ravel().tolist(),
        c.hits.ravel().tolist(),
        c.ttl_sizes.ravel().tolist(),
        c.ttl_hits.ravel().tolist(),
        n,
        p,
    )


def _opt_int(v: Any) -> int | None:
    return None if v < 0 else int(v)


def _opt_float(v: Any) -> float | None:
    return None if np.isnan(v) else float(v)


def _records(
    cols: dict[str, np.ndarray],
    xs: list[float],
    ys: list[float],
    tx: list[float],
    ty: list[float],
    n: int,
    p: int,
) -> list[StoredClass]:
    lists = {k: v.tolist() for k, v in cols.items()}
    out, t = [], 0
    for i in range(n):
        ttl = bool(lists["has_ttl"][i])
        out.append(
            StoredClass(
                class_id=lists["class_id"][i],
                chunk_size=lists["chunk_size"][i],
                pages=lists["pages"][i],
                items=lists["items"][i],
                evictions=lists["evictions"][i],
                requests=lists["requests"][i],
                current_items=lists["current_items"][i],
                cost_count=_opt_int(lists["cost_count"][i]),
                cost_mean_us=_opt_float(lists["cost_mean_us"][i]),
                cost_p50_us=_opt_float(lists["cost_p50_us"][i]),
                cost_p90_us=_opt_float(lists["cost_p90_us"][i]),
                cost_p99_us=_opt_float(lists["cost_p99_us"][i]),
                ghost_reach_items=_opt_int(lists["ghost_reach_items"][i]),
                ghost_filters=_opt_int(lists["ghost_filters"][i]),
                sizes_items=xs[i * p : (i + 1) * p],
                hit_ratios=ys[i * p : (i + 1) * p],
                ttl_sizes_items=tx[t * p : (t + 1) * p] if ttl else None,
                ttl_hit_ratios=ty[t * p : (t + 1) * p] if ttl else None,
            )
        )
        t += ttl
    return out


def cost_sums(counts: Sequence[int | None], means: Sequence[float | None]) -> tuple[int | None, float | None]:
    """(timed lookups, their summed cost in us) over the classes that timed any (a count > 0 and
    a mean), None and None when none did: snapshots.cost_count and cost_us_total, what the cost
    view's per-window rate reads. Ingest and revision 0023 both count with this."""
    timed = [(n, m) for n, m in zip(counts, means, strict=True) if n and n > 0 and m is not None]
    if not timed:
        return None, None
    return sum(n for n, _ in timed), sum(n * m for n, m in timed)


def cost_totals(classes: list[StoredClass]) -> tuple[int | None, float | None]:
    """cost_sums over stored classes."""
    return cost_sums([c.cost_count for c in classes], [c.cost_mean_us for c in classes])
