"""The one -m to set for a known answer (pure): the recommended limit, replayed over the windows
that had seen out to the target, inside the answer's own band. The API, the dashboard, the
e-mail, the alerts, /metrics and the autoscaler client all show this value."""

from hitcurve.rules import hysteresis, knowledge
from hitcurve.rules.curves import Pchip
from hitcurve.sizing.basis import Basis
from hitcurve.sizing.limits import limit_for


def history_limits(b: Basis, target: float) -> list[float | None]:
    """Each history window's raw -m for the target, None where that window had not seen out to it
    (memcached filling, or the target past its seen part, b.history_seen): a value taken then is a
    transient's, and the recommended limit never starts from or moves to one (the demo's stayed at
    the first post-fill window's -m 72 beside later windows' -m 66-69)."""
    seen = b.history_seen if len(b.history_seen) == len(b.history) else [None] * len(b.history)
    out: list[float | None] = []
    for f, s in zip(b.history, seen, strict=True):
        r = f.inverse(target)
        known = r is not None and (s is None or (s > 0 and r <= s * (1 + 1e-9)))
        out.append(float(limit_for(b, r)) if known and r is not None else None)
    return out


def _then(b: Basis, i: int) -> tuple[Pchip, float | None]:
    """The curve the answer read as of history window i and how far it was seen then (None: not
    said): the windows up to it combined (b.history_answer) within its ghost reach then, as the
    answer's sight takes it (knowledge.seen_bytes); that window's own curve where not kept."""
    seen = b.history_seen[i] if len(b.history_seen) == len(b.history) else None
    curve = b.history_answer[i] if len(b.history_answer) == len(b.history) else None
    if curve is None:
        return b.history[i], seen
    reach = b.history_reach[i] if len(b.history_reach) == len(b.history) else None
    if reach is not None and seen is not None and seen > 0:
        seen = max(min(seen, reach), b.history_current[i])
    return curve, seen


def history_past(b: Basis, target: float) -> list[bool]:
    """Each history window: its curve, seen out to its end, does not reach the target (False where
    it reaches it, or where it had not seen that far: memcached filling, or the agent's sight short
    of the curve's end). An answer past the curve is held once the last hysteresis.HOLD_WINDOWS
    windows all say so (hysteresis.held, the wait an answer on the curve has too): a single window
    past the curve, the next one back on it, opened and resolved a memory alert in one window."""
    out: list[bool] = []
    for i in range(len(b.history)):
        f, s = _then(b, i)
        whole = s is None or s >= f.x_max * (1 - knowledge.REACH_SLACK)
        out.append(whole and f.inverse(target) is None)
    return out


def answered_then(b: Basis, target: float) -> list[bool]:
    """Each history window: the answer as of that window was known and on its curve (its curve,
    seen that far, reaches the target). The -m to set has held only once the last
    hysteresis.HOLD_WINDOWS windows were (headline): a window whose own curve reached the target
    while the answer then, from the windows combined, said "unknown" counted toward the hold, and
    a live -m 32 memcached's first known answer was held, short, and opened a memory alert that
    the next window resolved."""
    out: list[bool] = []
    for i in range(len(b.history)):
        curve, seen = _then(b, i)
        r = curve.inverse(target)
        out.append(r is not None and (seen is None or (seen > 0 and r <= seen * (1 + 1e-9))))
    return out


def past_held(b: Basis, target: float) -> bool:
    """The answer past the curve has held (history_past over the last HOLD_WINDOWS windows)."""
    return hysteresis.held(history_past(b, target))


def headline(
    b: Basis, target: float, limit: int, m_min: float | None, m_max: float | None
) -> hysteresis.Recommendation:
    """The -m to set: the hysteresis over history_limits (on the fixed period grid when the window
    ends are known), the answer's own -m `limit` when no window gives one, then kept inside the
    band's -m range [limit_for(m_min), limit_for(m_max)]; stable only when the band did not move it
    and the answer was known in each of the last HOLD_WINDOWS windows (answered_then)."""
    limits = history_limits(b, target)
    if b.history and len(b.history_ends) == len(b.history):
        rec = hysteresis.recommend_periodic(b.history_ends, limits)
    else:
        rec = hysteresis.recommend(limits)
    value = rec.memory_limit_bytes if rec.memory_limit_bytes is not None else limit
    if m_min is not None:
        value = max(value, limit_for(b, m_min))
    if m_max is not None:
        value = min(value, limit_for(b, m_max))
    stable = rec.stable and value == rec.memory_limit_bytes and hysteresis.held(answered_then(b, target))
    return hysteresis.Recommendation(value, stable, rec.changes, rec.windows)
