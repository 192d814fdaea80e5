"""Rate limits that hold under concurrency, in two kinds:

- Request rates of one API token or agent key (`take`): a token bucket per key in this process
  (Settings.api_token_rate_per_s / api_token_burst, agent_key_rate_per_s / agent_key_burst),
  under a lock. Past it, 429 `rate_limited` with Retry-After: the seconds until a request is
  allowed again. Per API process (no round trip on the upload path); with N processes a key
  gets at most N times the rate.
- Bytes one agent key's uploads inflate to per minute (`reserve_decoded`, `charge_decoded`):
  Settings.agent_key_decoded_bytes_per_minute per process. Each upload reserves what it says it
  inflates to before a decoder is used, under the lock, and the difference is settled once it
  has been read: uploads sent at once cannot all pass a check made before any was charged.
- Counts per window shared by every process (`count_in_window`): Redis INCR and EXPIRE in one
  MULTI/EXEC, so concurrent requests each see their own count and none slips past the limit.
  Used for the sign-ups of one address, counted before any password work.
"""

import logging
import threading
import time
from functools import lru_cache

import redis

from hitcurve.core.config import get_settings
from hitcurve.core.domain import TooMany

log = logging.getLogger("hitcurve.ratelimit")

_lock = threading.Lock()
# (kind, key) -> (tokens, last refill time)
_buckets: dict[tuple[str, str], tuple[float, float]] = {}
_MAX_BUCKETS = 100_000


def _rate(kind: str) -> tuple[float, int]:
    s = get_settings()
    if kind == "agent_key":
        return s.agent_key_rate_per_s, s.agent_key_burst
    return s.api_token_rate_per_s, s.api_token_burst


def take(kind: str, key: str) -> None:
    """One request of this key, or TooMany (429 with Retry-After) when its bucket is empty."""
    rate, burst = _rate(kind)
    now = time.monotonic()
    with _lock:
        tokens, last = _buckets.get((kind, key), (float(burst), now))
        tokens = min(float(burst), tokens + (now - last) * rate)
        if tokens < 1.0:
            _buckets[(kind, key)] = (tokens, now)
            wait = max(1, int((1.0 - tokens) / rate + 0.999))
            raise TooMany(
                "rate_limited",
                f"more than {rate:g} requests per second (burst {burst}) with this "
                f"{'agent key' if kind == 'agent_key' else 'API token'}; retry after {wait} s",
                retry_after_s=wait,
            )
        if len(_buckets) >= _MAX_BUCKETS:
            _buckets.clear()  # a full table starts over: every key gets its burst again
        _buckets[(kind, key)] = (tokens - 1.0, now)


# key -> (minute, bytes decoded in it)
_decoded: dict[str, tuple[int, int]] = {}


def reserve_decoded(key: str, size: int) -> None:
    """Reserve size bytes of this agent key's minute (what the upload says it inflates to), or
    TooMany (429 with Retry-After) when its uploads already passed
    Settings.agent_key_decoded_bytes_per_minute in this process this minute (reserved included)."""
    limit = get_settings().agent_key_decoded_bytes_per_minute
    now = time.time()
    minute = int(now) // 60
    with _lock:
        at, used = _decoded.get(key, (minute, 0))
        used = used if at == minute else 0
        if used > limit:
            wait = 60 - int(now) % 60
            raise TooMany(
                "decode_budget_exhausted",
                f"this agent key's uploads inflated to more than {limit} bytes this minute "
                f"(HITCURVE_AGENT_KEY_DECODED_BYTES_PER_MINUTE); retry after {wait} s",
                retry_after_s=wait,
            )
        if len(_decoded) >= _MAX_BUCKETS:
            _decoded.clear()
        _decoded[key] = (minute, used + size)


def charge_decoded(key: str, size: int) -> None:
    """Add size bytes (negative: give back) to this key's minute: what a body inflated to beyond,
    or short of, what it reserved."""
    minute = int(time.time()) // 60
    with _lock:
        at, used = _decoded.get(key, (minute, 0))
        if len(_decoded) >= _MAX_BUCKETS:
            _decoded.clear()
        _decoded[key] = (minute, max(0, (used if at == minute else 0) + size))


@lru_cache
def _client(url: str, timeout_s: float) -> redis.Redis:
    return redis.Redis.from_url(url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s)


def count_in_window(name: str, key: str, window_s: int) -> int | None:
    """This request's number among those of `key` in the current window of window_s seconds
    (1 for the first); None when Redis is unreachable (the caller decides; logged)."""
    s = get_settings()
    bucket = f"hitcurve:limit:{name}:{key}:{int(time.time()) // window_s}"
    try:
        pipe = _client(s.redis_url, s.broker_timeout_s).pipeline(transaction=True)
        pipe.incr(bucket)
        pipe.expire(bucket, window_s + 60)
        count, _ = pipe.execute()
        return int(count)
    except redis.RedisError as exc:
        log.warning("rate limit %s not counted (Redis unreachable: %s)", name, exc)
        return None
