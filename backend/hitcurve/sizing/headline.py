"""The one -m to set for a known answer (pure): the recommended limit, replayed over the windows
that had seen out to the target, inside the answer's own band. The API, the dashboard, the
e-mail, the alerts, /metrics and the autoscaler client all show this value."""

from hitcurve.rules import hysteresis, knowledge
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


def history_past(b: Basis, target: float) -> list[bool]:
    """Each history window: its curve, seen out to its end, does not reach the target (False where
    it reaches it, or where it had not seen that far: memcached filling, or the agent's sight short
    of the curve's end). An answer past the curve is held once the last hysteresis.HOLD_WINDOWS
    windows all say so (hysteresis.held, the wait an answer on the curve has too): a single window
    past the curve, the next one back on it, opened and resolved a memory alert in one window."""
    seen = b.history_seen if len(b.history_seen) == len(b.history) else [None] * len(b.history)
    out: list[bool] = []
    for f, s in zip(b.history, seen, strict=True):
        whole = s is None or s >= f.x_max * (1 - knowledge.REACH_SLACK)
        out.append(whole and f.inverse(target) is None)
    return out


def past_held(b: Basis, target: float) -> bool:
    """The answer past the curve has held (history_past over the last HOLD_WINDOWS windows)."""
    return hysteresis.held(history_past(b, target))


def headline(
    b: Basis, target: float, limit: int, m_min: float | None, m_max: float | None
) -> hysteresis.Recommendation:
    """The -m to set: the hysteresis over history_limits (on the fixed period grid when the window
    ends are known), the answer's own -m `limit` when no window gives one, then kept inside the
    band's -m range [limit_for(m_min), limit_for(m_max)]; stable only when the band did not move it."""
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
    return hysteresis.Recommendation(
        value, rec.stable and value == rec.memory_limit_bytes, rec.changes, rec.windows
    )
