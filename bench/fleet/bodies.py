"""What the fleet's agents send, built cheaply enough that the simulator does not take
the stack's CPU: a snapshot is gzip of the agent's JSON at the agent's level (zlib level 6,
profiler-agent/src/agent/util.c `ag_gzip`), and nearly all of it -- 20-40 slab classes x 100
points -- is what one memcached's consecutive windows repeat with small changes.

So each agent shape (`Template`: 16 shapes, 20-40 classes, 64 MiB-4 GiB, as before) holds
`VARIANTS` windows of its classes -- the same classes, chunk sizes and pages, each window with its
own requests, evictions and curve noise, as an agent's consecutive windows differ -- serialised
and deflated once at start-up. An upload deflates only its own head (snapshot_id, window,
counters: ~1 KB) and joins it to its window's pre-deflated classes in ONE gzip member (each part
ends on a byte boundary with an empty stored block, Z_SYNC_FLUSH, and the later part refers to
nothing before it, which deflate allows: pigz joins its blocks the same way), with the CRC-32 and
length of the whole document. Any gzip reader (the API's `uploads.inflate`) reads it as the
agent's; the bytes differ from one-shot compression only by the two flush points (~10 bytes).

`snapshot_body` costs ~0.05 ms instead of ~2 ms for a one-shot level-6 gzip of 40-76 KB."""

from __future__ import annotations

import json
import random
import struct
import uuid
import zlib
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import numpy as np

from hitcurve_testing.snapshots import PAGE, envelope, synthetic_classes

# The agent's deflate level (profiler-agent/src/agent/util.c: deflateInit2(&z, 6, ...)).
AGENT_GZIP_LEVEL = 6
# Windows of one shape's classes prepared at start-up; an agent cycles through them.
VARIANTS = 8
# gzip header of zlib's deflateInit2 gzip wrapper, as the agent sends it: no name, mtime 0, OS unix.
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03"
_TAIL = b"}"  # closes the document after the classes array (envelope puts the classes last)


def _deflate(data: bytes, final: bool) -> bytes:
    """Raw deflate of data on its own; ends byte-aligned (sync flush) unless final."""
    c = zlib.compressobj(AGENT_GZIP_LEVEL, zlib.DEFLATED, -zlib.MAX_WBITS)
    return c.compress(data) + c.flush(zlib.Z_FINISH if final else zlib.Z_SYNC_FLUSH)


_TAIL_DEFLATED = _deflate(_TAIL, final=True)


@dataclass
class Window:
    """One window's classes: the JSON (to the end of the classes array), deflated, its CRC-32."""

    raw: bytes
    deflated: bytes
    crc: int


@dataclass
class Template:
    """One agent shape: its classes in VARIANTS windows, serialised and deflated once."""

    n_classes: int
    total_pages: int
    items: int
    windows: list[Window]

    @property
    def classes_json(self) -> str:
        """The first window's classes array (the JSON the decoder benchmark validates)."""
        return self.windows[0].raw.decode()


def window_variants(base: list[dict], n: int, rng: np.random.Generator) -> list[list[dict]]:
    """n windows of the same slab classes: per class its own requests and evictions in each
    window, and the curve's hit ratios moved by small noise (kept non-decreasing, in [0, 1]), as
    consecutive windows of one memcached differ. Sizes, pages and items stay."""
    out = []
    for _ in range(n):
        classes = []
        for c in base:
            pts = np.asarray(c["curve"]["points"], dtype=float)
            hits = np.clip(np.maximum.accumulate(pts[:, 1] + rng.normal(0, 0.003, len(pts))), 0, 1)
            classes.append(
                {
                    **c,
                    "evictions": int(rng.integers(0, 1000)),
                    "requests": max(1000, int(c["requests"] * rng.lognormal(0, 0.15))),
                    "curve": {
                        **c["curve"],
                        "points": [
                            [p[0], round(float(h), 6)]
                            for p, h in zip(c["curve"]["points"], hits, strict=True)
                        ],
                    },
                }
            )
        out.append(classes)
    return out


def make_templates(n: int, seed: int, variants: int = VARIANTS) -> list[Template]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        n_classes = rng.randint(20, 40)
        pages = rng.choice([64, 256, 1024, 4096])
        base = synthetic_classes(n_classes, pages, seed + i)
        windows = []
        for classes in window_variants(base, variants, np.random.default_rng(seed * 1000 + i)):
            raw = json.dumps(classes, separators=(",", ":")).encode()
            windows.append(Window(raw, _deflate(raw, final=False), zlib.crc32(raw)))
        out.append(Template(n_classes, pages, sum(c["items"] for c in base), windows))
    return out


def iso(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


_SENTINELS = ("00000000-0000-4000-8000-00000000f1ee", "1970-01-01T00:00:01Z", "1970-01-01T00:01:01Z")


def head_parts(tpl: Template, address: str, hit: float) -> tuple[str, ...]:
    """An agent's document up to its classes array (`envelope` serialised without its empty
    classes), split where each upload puts its snapshot_id, window start and window end: built
    once per agent, joined per upload."""
    gets = 600_000
    head = envelope(
        address,
        datetime.fromtimestamp(61, UTC),
        tpl.total_pages * PAGE,
        [],
        measured={
            "cmd_get": gets,
            "get_hits": int(gets * hit),
            "get_misses": gets - int(gets * hit),
            "cmd_set": 60_000,
            "evictions": 10,
            "bytes": tpl.total_pages * PAGE,
            "curr_items": tpl.items,
            "hit_ratio": hit,
        },
        events_seen=gets,
        hostname="fleet",
        settings={},
        snapshot_id=uuid.UUID(_SENTINELS[0]),
    )
    raw = json.dumps(head, separators=(",", ":"))
    assert raw.endswith('"classes":[]}')  # envelope puts the classes last
    raw = raw[: -len("[]}")]
    parts: list[str] = []
    for s in _SENTINELS:  # in the order envelope writes them
        before, raw = raw.split(f'"{s}"', 1)
        parts.append(before + '"')
        raw = '"' + raw
    return (*parts, raw)


def _z(t: datetime) -> str:
    return t.isoformat().replace("+00:00", "Z")


def snapshot_body(
    tpl: Template,
    address: str,
    start: float,
    end: float,
    hit: float,
    window: int = 0,
    head: tuple[str, ...] | None = None,
) -> tuple[str, bytes]:
    """(snapshot_id, gzip body) of one upload: a new id, the window (end - 60 s, end] as
    `envelope` states it (`start` is not sent, as before), the shape's `window`-th classes (mod
    VARIANTS). `head`: the agent's `head_parts`, else built here."""
    sid = str(uuid.uuid4())
    w = tpl.windows[window % len(tpl.windows)]
    p = head or head_parts(tpl, address, hit)
    t = datetime.fromtimestamp(end, UTC)
    raw = f"{p[0]}{sid}{p[1]}{_z(t - timedelta(seconds=60))}{p[2]}{_z(t)}{p[3]}".encode()
    crc = zlib.crc32(_TAIL, zlib.crc32(w.raw, zlib.crc32(raw)))
    size = len(raw) + len(w.raw) + len(_TAIL)
    trailer = struct.pack("<II", crc, size & 0xFFFFFFFF)
    return sid, b"".join((_GZIP_HEADER, _deflate(raw, final=False), w.deflated, _TAIL_DEFLATED, trailer))


def trace_body(address: str, seq: int, start: float, end: float, n: int, rng: np.random.Generator) -> bytes:
    """A trace chunk of n records (Zipf keys), gzip at the agent's level. 1 % of agents send one
    per window, so it is built whole each time (~3 ms, ~0.03 ms per upload on average)."""
    keys = (rng.zipf(1.2, n) % 50_000).astype(np.uint64) * np.uint64(0x9E3779B97F4A7C15)
    ops = rng.choice([1, 2, 3], size=n, p=[0.7, 0.2, 0.1])
    t0 = int(start * 1e6)
    step = max(1, int((end - start) * 1e6 / n))
    body = {
        "schema_version": 1,
        "chunk_id": str(uuid.uuid4()),
        "server": {"address": address, "instance_id": "1795349000-4242"},
        "sample_rate": 0.01,
        "seq": seq,
        "start": iso(start),
        "end": iso(end),
        "records": {
            "ts_us": [t0 + i * step for i in range(n)],
            "key": [f"{int(k):016x}" for k in keys],
            "op": ops.tolist(),
            "size": [0 if o == 2 else 200 + int(k) % 7 * 50 for k, o in zip(keys, ops, strict=True)],
            "clsid": [5] * n,
            "ttl": [-1] * n,
            "cost_us": [None] * n,
        },
    }
    return _gzip_whole(json.dumps(body, separators=(",", ":")).encode())


def _gzip_whole(raw: bytes) -> bytes:
    """One-shot gzip with the agent's header and level."""
    trailer = struct.pack("<II", zlib.crc32(raw), len(raw) & 0xFFFFFFFF)
    return _GZIP_HEADER + _deflate(raw, final=True) + trailer
