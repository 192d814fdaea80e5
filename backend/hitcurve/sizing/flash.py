"""A server's flash tier (memcached's extstore), as the answers and the server page state it: how
big and how full the flash is, how much of RAM its headers take, what share of the hits it served
and at what read and write rates, and the one sentence every surface shows about what the curve
means on such a server. There is no two-tier curve yet: the curve is for RAM (-m) with this flash
tier as it is (the agent's per-class profiles count a flushed item's hits in its header's class,
profiler-agent/src/agent/extstore.h). Pure but for the one query."""

import uuid
from dataclasses import dataclass
from typing import Any

from sqlalchemy.orm import Session

from hitcurve.crud import curves as curves_crud
from hitcurve.rules.memlimit import human_bytes
from hitcurve.rules.percent import percent

# the windows the shares and rates are taken over (the newest instance's, newest first)
WINDOWS = 10


@dataclass(frozen=True)
class FlashTier:
    limit_bytes: int  # the flash file's size
    bytes_used: int  # live values on flash
    fill_ratio: float  # flash pages taken / all pages: memcached evicts a page when none is free
    header_items: int  # items in RAM that are headers of values on flash
    header_bytes: int  # the RAM those headers take (their chunks)
    flash_hit_share: float | None  # of get_hits, those the flash served (null: no hits)
    flash_miss_share: float | None  # of get_hits, flash reads that found nothing (a miss for the client)
    reads_per_s: float | None
    read_bytes_per_s: float | None
    writes_per_s: float | None
    write_bytes_per_s: float | None
    windows: int
    note: str


def tier_note(limit_bytes: int, fill_ratio: float, flash_hit_share: float | None) -> str:
    """The sentence every surface shows for a server with a flash tier."""
    served = (
        f"; {percent(flash_hit_share)} of its hits came from flash" if flash_hit_share is not None else ""
    )
    return (
        f"This server has a flash tier (extstore: {human_bytes(limit_bytes)} of flash, "
        f"{percent(fill_ratio)} full){served}. The curve and these answers are for RAM (-m) with this "
        "flash tier as it is; what a different flash size would give (a two-tier curve) is not computed yet"
    )


def _rate(num: float, secs: float) -> float | None:
    return num / secs if secs > 0 else None


def of_rows(rows: list[Any]) -> FlashTier | None:
    """The tier from recent windows, newest first; None when the newest window has none."""
    if not rows or rows[0].extstore is None:
        return None
    with_tier = [r for r in rows if r.extstore is not None]
    new = rows[0].extstore
    flash, ram = new["flash"], new["ram"]
    pages = int(flash["pages_used"]) + int(flash["pages_free"])
    fill = min(1.0, int(flash["pages_used"]) / pages) if pages > 0 else 0.0
    hits = sum(int(r.get_hits) for r in with_tier)
    secs = sum((r.window_end - r.window_start).total_seconds() for r in with_tier)

    def total(field: str) -> int:
        return sum(int(r.extstore["window"][field]) for r in with_tier)

    share = total("flash_hits") / hits if hits > 0 else None
    return FlashTier(
        limit_bytes=int(flash["limit_bytes"]),
        bytes_used=int(flash["bytes_used"]),
        fill_ratio=fill,
        header_items=int(ram["header_items"]),
        header_bytes=int(ram["header_bytes"]),
        flash_hit_share=share,
        flash_miss_share=total("flash_misses") / hits if hits > 0 else None,
        reads_per_s=_rate(total("objects_read"), secs),
        read_bytes_per_s=_rate(total("bytes_read"), secs),
        writes_per_s=_rate(total("objects_written"), secs),
        write_bytes_per_s=_rate(total("bytes_written"), secs),
        windows=len(with_tier),
        note=tier_note(int(flash["limit_bytes"]), fill, share),
    )


def flash_tier(db: Session, org_id: uuid.UUID, server_id: uuid.UUID) -> FlashTier | None:
    return of_rows(curves_crud.recent_extstore(db, org_id, server_id, WINDOWS))
