"""memcached's `-m` for a point of the answer's curve, and where the curve stops saying what more
memory gives (pure): a levelled-off curve, memcached still filling (how far the agent has seen is
hitcurve.rules.knowledge's, sizing.sight)."""

from hitcurve.rules import memlimit
from hitcurve.sizing.basis import Basis

# Above the curve's end the target is unreachable (not merely unseen) when the curve has levelled
# off: less than LEVEL_PP gained over its last fifth, and it reaches at least twice today's memory.
LEVEL_PP = 0.1


def levelled_off(b: Basis) -> bool:
    m = b.main
    cur = b.info.current_bytes or 0
    return m.x_max >= 2 * cur > 0 and (m.y_max - m(0.8 * m.x_max)) * 100 < LEVEL_PP


def warming(b: Basis) -> bool:
    return bool(b.fill and b.fill.warming_up)


def limit_for(b: Basis, mem: float) -> int:
    """The -m to set for `mem` on the answer's curve (hitcurve.rules.memlimit): a cluster's is per
    node (its total memory over its nodes)."""
    return memlimit.limit_for_bytes(mem / b.nodes if b.nodes and b.nodes > 1 else mem)


def held_bytes(b: Basis, memory: float) -> float:
    """The curve's memory a server's memcached holds when given `memory` (as its -m): at least one
    1 MiB page for each class holding items (hitcurve.rules.memlimit.pages_at_limit; memcached takes
    a class's first page past the limit). A cluster's memory is its nodes' total: as asked."""
    if b.nodes and b.nodes > 1:
        return memory
    return max(memory, float(memlimit.classes_holding(b.classes) * memlimit.PAGE_BYTES))
