"""The agent's optional `extstore` object (docs/agent-protocol.md, "Extstore"): memcached's flash
tier as the agent measured it in the window. Strict like the rest of the protocol
(hitcurve.schemas.agent); `stream` is kept with the stored payload only (PAYLOAD_ONLY)."""

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field, model_validator

MAX_BYTES = 2**50
MAX_ITEMS = 2**40
MAX_COUNT = 2**53
MAX_RATE = 1e15  # objects or bytes per second: far above any device

Bytes = Annotated[int, Field(ge=0, le=MAX_BYTES)]
Items = Annotated[int, Field(ge=0, le=MAX_ITEMS)]
Count = Annotated[int, Field(ge=0, le=MAX_COUNT)]
Rate = Annotated[float, Field(ge=0, le=MAX_RATE)]


class _Strict(BaseModel):
    model_config = ConfigDict(strict=True, extra="ignore", allow_inf_nan=False, frozen=True)


class ExtSettings(_Strict):
    """`stats settings` ext_* as memcached prints them (item_age 4294967295: no age limit)."""

    item_size: Bytes | None = None
    item_age: Annotated[int, Field(ge=0, le=2**32)] | None = None
    wbuf_size: Bytes | None = None
    recache_rate: Annotated[int, Field(ge=0, le=2**32)] | None = None
    low_ttl: Annotated[int, Field(ge=0, le=2**32)] | None = None


class ExtRamClass(_Strict):
    id: Annotated[int, Field(ge=1, le=255)]
    chunk_size: Annotated[int, Field(ge=1, le=2**30)]
    header_items: Items  # of the class's items, headers of values on flash


class ExtRam(_Strict):
    header_items: Items
    header_bytes: Bytes
    whole_items: Items
    classes: Annotated[list[ExtRamClass], Field(max_length=256)]

    @model_validator(mode="after")
    def _sums(self) -> "ExtRam":
        ids = [c.id for c in self.classes]
        if len(set(ids)) != len(ids):
            raise ValueError("extstore.ram.classes: a class id appears twice")
        if self.header_items != sum(c.header_items for c in self.classes):
            raise ValueError("extstore.ram.header_items must be the sum of its classes' header_items")
        return self


class ExtFlash(_Strict):
    limit_bytes: Bytes  # the flash file's size, whole pages
    bytes_used: Bytes
    bytes_fragmented: Bytes
    pages_used: Count
    pages_free: Count
    objects_used: Items


class ExtWindow(_Strict):
    flash_reads: Count
    flash_hits: Count
    flash_misses: Count
    badcrc: Count
    aborted: Count
    recached: Count
    objects_written: Count
    bytes_written: Count
    objects_read: Count
    bytes_read: Count
    page_evictions: Count
    objects_evicted: Count
    compact_rescues: Count
    compact_lost: Count
    compact_skipped: Count
    writes_per_s: Rate | None
    write_bytes_per_s: Rate | None
    reads_per_s: Rate | None
    read_bytes_per_s: Rate | None
    flash_hit_share: Annotated[float, Field(ge=0.0, le=1.0)] | None

    @model_validator(mode="after")
    def _hits(self) -> "ExtWindow":
        if self.flash_hits > self.flash_reads:
            raise ValueError("extstore.window: flash_hits must not exceed flash_reads")
        return self


class Extstore(_Strict):
    settings: ExtSettings
    ram: ExtRam
    flash: ExtFlash
    window: ExtWindow
