"""The cost-optimal -m scored against real memcached (bench_accuracy.py): at each of a ladder of
prices, the -m of least total cost found by running memcached at M/4 .. 4M (its hit ratio there
from `stats`, the same seeded phases in lock step) against the product's cost answer on the last
poll's basis (hitcurve.cost.answer.cost_answer, the function GET /sizing/.../cost, the e-mail and
/metrics read).

    total(-m) = memory price x -m + miss cost x (1 - hit ratio(-m)) x reads a month

The prices: memory at PRICE_PER_GIB_MONTH, READS_PER_SECOND reads, and the miss cost set so that
a whole miss ratio costs as much a month as LAMBDA_MIB MiB of memory do (the slope where the
curve's tangent gives the optimum is 1 / LAMBDA_MIB per MiB: a rising ladder moves the optimum
from the smallest size out to the largest). The prices are fixed here, not fitted to a workload.

A price point is met when the cost answer is known (status ok) and its optimal -m lies within one
step of the grid's optimum: between the grid's sizes on either side of it (at an end of the grid,
from its neighbour to the end and past it). An answer past the curve's end is a bound, not an
optimum (above_curve: more than the curve's end; past_curve: the least within the curve, or more
than its end); it is checked against real memcached run past the grid as well (PAST_FACTORS x M):
it holds when, within one step of the least of the grid and those sizes (between its neighbours),
lies a size past the curve's end, or (past_curve) the least within the curve. Also said: what the
grid's own totals cost at the answer's -m (memcached's hit ratio there, linear in log size between
the grid's points) over the grid's least, a figure of what the product's -m would cost in money.
"""

from __future__ import annotations

import bisect
import math
import uuid
from typing import Any

MIB = 1 << 20
PRICE_PER_GIB_MONTH = 4.0
READS_PER_SECOND = 1000.0
# MiB of memory a whole miss ratio costs as much as, a month: 2^3 .. 2^12
LAMBDA_MIB = [2.0**k for k in range(3, 13)]
# memcached past the grid (x M), for the answers past the curve's end (the agent's ghost reaches 5 M)
PAST_FACTORS = (5.0, 6.0, 8.0)


def prices(lam_mib: float) -> Any:
    from hitcurve.cost.model import GIB, SECONDS_PER_MONTH
    from hitcurve.schemas.cost import CostPrices

    per_mib = PRICE_PER_GIB_MONTH * MIB / GIB
    per_million = lam_mib * per_mib / (READS_PER_SECOND * SECONDS_PER_MONTH) * 1e6
    return CostPrices(
        memory_per_gib_month=PRICE_PER_GIB_MONTH,
        miss_cost_per_million=per_million,
        miss_cost_source="entered",
        reads_per_second=READS_PER_SECOND,
    )


def grid_total(mb: float, hit: float, lam_mib: float) -> float:
    """The monthly total at `mb` MiB and `hit`, in MiB-months of memory (the price cancels)."""
    return mb + lam_mib * (1.0 - hit)


def interp_hit(grid: list[tuple[float, float]], mb: float) -> float | None:
    """memcached's hit ratio at `mb`, linear in log size between the grid's points (None outside)."""
    xs = [g[0] for g in grid]
    if mb < xs[0] or mb > xs[-1]:
        return None
    i = bisect.bisect_left(xs, mb)
    if xs[i] == mb:
        return grid[i][1]
    (x0, h0), (x1, h1) = grid[i - 1], grid[i]
    f = (math.log(mb) - math.log(x0)) / (math.log(x1) - math.log(x0))
    return h0 + f * (h1 - h0)


def bound_holds(a: Any, wide: list[tuple[float, float]], lam: float) -> bool | None:
    """Whether an answer past the curve's end holds on real memcached over the grid and past it
    (`wide`): the least total lies past the curve's end, or for past_curve within one step of the
    least within the curve. None for an answer that is not a bound."""
    if a.status not in ("above_curve", "past_curve") or a.searched_bytes_max is None:
        return None
    totals = [grid_total(mb, hit, lam) for mb, hit in wide]
    i = min(range(len(wide)), key=lambda k: (totals[k], k))
    # within one step, as for an optimum: the sizes either side of the least bound where it lies
    lo = wide[i - 1][0] if i > 0 else 0.0
    hi = wide[i + 1][0] if i + 1 < len(wide) else math.inf
    if hi > a.searched_bytes_max / MIB:
        return True
    if a.status == "past_curve" and a.optimal_within_curve_bytes is not None:
        return lo <= a.optimal_within_curve_bytes / MIB <= hi
    return False


def score(
    basis: Any, measured: dict[float, float], mem_mb: int, past: dict[float, float] | None = None
) -> list[dict]:
    from hitcurve.cost.answer import cost_answer
    from hitcurve.schemas.sizing import Subject

    grid = sorted((f * mem_mb, hit) for f, hit in measured.items())
    wide = sorted(grid + [(f * mem_mb, hit) for f, hit in (past or {}).items()])
    rows = []
    for lam in LAMBDA_MIB:
        totals = [grid_total(mb, hit, lam) for mb, hit in grid]
        i = min(range(len(grid)), key=lambda k: (totals[k], k))
        lo = grid[i - 1][0] if i > 0 else 0.0
        hi = grid[i + 1][0] if i + 1 < len(grid) else math.inf
        a = cost_answer(Subject(type="server", id=uuid.uuid4()), basis, prices(lam))
        opt = a.optimal_memory_limit_bytes / MIB if a.optimal_memory_limit_bytes else None
        row: dict[str, Any] = {
            "lambda_mib": lam,
            "grid_mb": grid[i][0],
            "status": a.status,
            "answer_mb": opt,
            "band_mb": [
                None if v is None else v / MIB
                for v in (a.optimal_memory_limit_bytes_min, a.optimal_memory_limit_bytes_max)
            ],
            "ok": a.status == "ok" and opt is not None and lo <= opt <= hi,
            # past_curve: the least within the curve's reach, or a size past its end (a bound)
            "within_mb": None if a.optimal_within_curve_bytes is None else a.optimal_within_curve_bytes / MIB,
            "searched_max_mb": None if a.searched_bytes_max is None else a.searched_bytes_max / MIB,
            "wide_mb": wide[min(range(len(wide)), key=lambda k: (grid_total(*wide[k], lam), k))][0],
            "bound_holds": bound_holds(a, wide, lam) if past else None,
        }
        h = None if opt is None else interp_hit(grid, opt)
        row["extra_pct"] = (
            None if h is None else (grid_total(opt, h, lam) - totals[i]) / totals[i] * 100  # type: ignore[arg-type]
        )
        rows.append(row)
    return rows


HEADER = (
    "lambda (MiB)  grid optimum -m  answer -m (band)  status  extra cost  met  least with past-grid sizes"
)


def lines(rows: list[dict]) -> list[str]:
    out = []
    for r in rows:
        lo, hi = r["band_mb"]
        band = "" if lo is None else f" ({lo:.0f}-{'?' if hi is None else f'{hi:.0f}'})"
        ans = "-" if r["answer_mb"] is None else f"{r['answer_mb']:.0f}{band}"
        if r.get("within_mb") is not None:
            ans = f"{r['within_mb']:.0f} or >{r['searched_max_mb']:.0f}"
        extra = "-" if r["extra_pct"] is None else f"{r['extra_pct']:+.1f} %"
        out.append(
            f"{r['lambda_mib']:>12.0f}  {r['grid_mb']:>15.0f}  {ans:>16}  {r['status']:>10}  {extra:>10}  "
            f"{'ok' if r['ok'] else 'MISSED':>6}  {r.get('wide_mb', 0):.0f}"
            + ("" if r.get("bound_holds") is None else f" (bound {'holds' if r['bound_holds'] else 'FAILS'})")
        )
    return out


def summary(results: list[dict]) -> str:
    rows = [row for r in results for row in r.get("cost_terms", [])]
    if not rows:
        return "cost-optimal -m: no rows"
    ok = sum(1 for row in rows if row["ok"])
    known = sum(1 for row in rows if row["status"] == "ok")
    bounds = sum(1 for row in rows if row["status"] in ("past_curve", "above_curve"))
    held = sum(1 for row in rows if row.get("bound_holds"))
    checked = sum(1 for row in rows if row.get("bound_holds") is not None)
    unmet = [
        f"{r['workload']} lambda {row['lambda_mib']:.0f}: answer {row['answer_mb']:.0f}, "
        f"least {row['wide_mb']:.0f}"
        for r in results
        for row in r.get("cost_terms", [])
        if row["status"] == "ok" and not row["ok"] and row["answer_mb"] is not None
    ]
    extra = [row["extra_pct"] for row in rows if row["extra_pct"] is not None]
    worst = (
        f"; at the answer's -m memcached's total is at most {max(extra):+.1f} % over the grid's least"
        if extra
        else ""
    )
    return (
        f"cost-optimal -m: {ok}/{len(rows)} price points within one grid step of real memcached's "
        f"optimum ({known} known, {bounds} bounds past the curve's end, {held}/{checked} of them holding "
        f"on memcached past the grid){worst}" + (f"; known but missed: {'; '.join(unmet)}" if unmet else "")
    )
