"""Memory held per prefix, and which question each "memory for the target" figure answers (pure).

Memory held: the agent estimates each prefix's resident bytes from its sampled keys (stored and
not since evicted, deleted or expired, in slab chunks, scaled by 1/R). On its own that estimate
can sum past what memcached holds (chunks are larger than items; evictions the stream did not
show, page moves, keep items in it), so the figure shown is memcached's stored bytes split in
proportion to it, rounded down: the prefixes together hold at most what memcached stores. Agents
from 2026-12-02 on send it so (docs/agent-protocol.md); windows of older agents are split here
by the same rule, which leaves a window that already adds up as it is.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

HELD_RULE = (
    "memcached's stored bytes (its bytes statistic at the window's end) split in proportion to the agent's "
    "estimate of each prefix's resident bytes from its sampled keys, rounded down: the prefixes together "
    "hold at most what memcached stores. A prefix's share is an estimate: with k of its keys sampled it is "
    "off by about 1/sqrt(k) of itself (the agent samples at most 1,024 keys per prefix)"
)

# The three answers to "how much memory for the target" that the breakdown page shows, by the
# question each answers. Only the server's answer (the sizing API, the curve and server pages) is
# the -m to set; the other two are the breakdown's own and say so.
ANSWERS = {
    "server": "the -m to set for the target: memcached's curve calibrated to its measured hit ratio "
    "(GET /sizing/servers/{id}/memory; the curve and server pages show the same)",
    "prefix_alone": "what one prefix needs for the target in a pool of its own (its own TTL-aware curve); "
    "the sum over prefixes is what separate pools would need, not one pool's answer",
    "ttl_model": "the agent's merged TTL-aware curve before calibration to memcached's measured hit ratio, "
    "against the same curve with expiry ignored: how much expiry saves, not the -m to set",
}


def held(bytes_: Sequence[int], stored: int | None) -> tuple[list[int], float]:
    """Each part's memory held (prefixes, then the rest), and the factor applied: stored / sum
    when the estimates sum above memcached's stored bytes, else 1 (None: not known, kept)."""
    total = sum(bytes_)
    if stored is None or total <= stored or total <= 0:
        return [int(b) for b in bytes_], 1.0
    scale = stored / total
    return [math.floor(b * scale) for b in bytes_], scale


def with_held_bytes(doc: dict[str, Any]) -> dict[str, Any]:
    """The stored breakdown with each prefix's and prefix_other's `bytes` as memory held by the
    rule above (memcached's stored bytes: measured.bytes), for every answer that reads it."""
    prefixes = doc.get("prefixes") or []
    other = doc.get("prefix_other")
    parts = [p["bytes"] for p in prefixes] + ([other["bytes"]] if other else [])
    got, scale = held(parts, (doc.get("measured") or {}).get("bytes"))
    if scale == 1.0:
        return doc
    out = dict(doc, prefixes=[dict(p, bytes=b) for p, b in zip(prefixes, got, strict=False)])
    if other:
        out["prefix_other"] = dict(other, bytes=got[-1])
    return out
