"""The -m answer scored in memory (bench_accuracy.py): for the hit rate real memcached had at each
-m from M/4 to 4M, the product's memory answer for that hit rate (hitcurve.sizing.answers
memory_answer on the same basis as the last poll) against that -m.

A row meets the target when the answer's memory_limit_bytes (this window's -m) and its
recommended_memory_limit_bytes (the one -m to set) are both within TOL_FRACTION or TOL_BYTES of
the -m memcached ran at, whichever is larger, and both lie inside the answer's own band
(band.memory_limit_bytes_min .. _max). Also said, not counted as met: whether the answer's -m
holds the same pages as memcached's (hitcurve.rules.memlimit.pages_at_limit: below one page a slab
class memcached holds one page each whatever -m, so -m 8 and -m 17 are the same memcached with 18
classes). Scored in pp of hit rate a flat stretch of the curve hides
a -m 22 % too large (a fraction of a point); in memory it does not.
"""

from __future__ import annotations

import uuid
from typing import Any

MIB = 1 << 20
TOL_FRACTION = 0.05
TOL_BYTES = 2 * MIB


def tolerance(limit_bytes: int) -> float:
    return max(TOL_FRACTION * limit_bytes, TOL_BYTES)


def within(answer: int | None, limit_bytes: int) -> bool:
    return answer is not None and abs(answer - limit_bytes) <= tolerance(limit_bytes)


def in_band(value: int | None, band: Any) -> bool:
    lo, hi = band.memory_limit_bytes_min, band.memory_limit_bytes_max
    return value is not None and lo is not None and lo <= value and (hi is None or value <= hi)


def score(basis: Any, measured: dict[float, float], mem_mb: int) -> list[dict]:
    """One row per size factor: memcached's -m and hit rate there, the answer for that hit rate."""
    from hitcurve.rules.memlimit import pages_at_limit
    from hitcurve.schemas.sizing import Subject
    from hitcurve.sizing.answers import memory_answer

    subject = Subject(type="server", id=uuid.uuid4())
    rows = []
    for f, hit in sorted(measured.items()):
        want = int(f * mem_mb) * MIB
        a = memory_answer(subject, basis, hit)
        lim, rec = a.memory_limit_bytes, a.recommended_memory_limit_bytes
        row = {
            "factor": f,
            "mem_mb": want // MIB,
            "target": hit,
            "status": a.status,
            "limit_mb": None if lim is None else lim / MIB,
            "recommended_mb": None if rec is None else rec / MIB,
            "band_mb": [
                None if v is None else v / MIB
                for v in (a.band.memory_limit_bytes_min, a.band.memory_limit_bytes_max)
            ],
            "limit_err_pct": None if lim is None else (lim - want) / want * 100,
            "recommended_err_pct": None if rec is None else (rec - want) / want * 100,
            "limit_ok": within(lim, want),
            "recommended_ok": within(rec, want),
            "inside": in_band(lim, a.band) and in_band(rec, a.band),
            # is memcached's own -m inside the answer's band (the band's coverage in memory)?
            "m_in_band": in_band(want, a.band),
        }
        row["ok"] = row["limit_ok"] and row["recommended_ok"] and row["inside"]
        held = pages_at_limit(want, basis.classes)
        row["same_pages"] = all(
            v is not None and pages_at_limit(v, basis.classes) == held for v in (lim, rec)
        )
        rows.append(row)
    return rows


def cell(row: dict) -> str:
    """The memory-terms columns of a row of the per-size table."""

    def mb(v: float | None) -> str:
        return "-" if v is None else f"{v:.0f}"

    def pct(v: float | None) -> str:
        return "   -" if v is None else f"{v:+4.0f}%"

    lo, hi = row["band_mb"]
    band = f"{mb(lo)}-{mb(hi) if hi is not None else '?'}"
    return (
        f"-m {mb(row['limit_mb']):>4} {pct(row['limit_err_pct'])} rec {mb(row['recommended_mb']):>4} "
        f"{pct(row['recommended_err_pct'])} band {band:>9} {'ok' if row['ok'] else 'MISSED'}"
        + (" (same pages)" if row["same_pages"] and not row["ok"] else "")
    )


HEADER = "| memory terms: -m for memcached's hit rate there (err), recommended, band -m"


def summary(results: list[dict]) -> str:
    rows = [row for r in results for row in r.get("memory_terms", [])]
    if not rows:
        return "memory terms: no rows"
    ok = sum(1 for row in rows if row["ok"])
    same = sum(1 for row in rows if row["same_pages"] and not row["ok"])
    worst = max(
        (abs(row[k]) for row in rows for k in ("limit_err_pct", "recommended_err_pct") if row[k] is not None),
        default=0.0,
    )
    return (
        f"-m in memory terms: {ok}/{len(rows)} sizes with memory_limit_bytes and "
        f"recommended_memory_limit_bytes within {TOL_FRACTION:.0%} or {TOL_BYTES // MIB} MiB of "
        f"memcached's -m and inside their band; worst {worst:.1f} %"
        + (f"; {same} more at the same pages as memcached's -m" if same else "")
    )
