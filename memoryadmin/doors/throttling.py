"""Per-caller rate limiting: each token (or logged-in user, or address) has one budget.

MEMORYADMIN["API"]["RATE_LIMIT"] requests per caller and period, counted over a sliding
window (the timestamps of the caller's recent requests; in Redis a sorted set that one
script trims, counts and adds to, so a request costs one round trip). A token's requests
to /api/ and /mcp/ share one budget, so switching doors does not double it. The counters live in
Django's cache: configure a shared cache (Redis) when several processes serve the doors, or
each process counts on its own.
"""

from __future__ import annotations

import logging
import random
import time
import weakref
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache, caches
from django.core.cache.backends.redis import RedisCache
from redis import Redis
from redis.commands.core import Script
from redis.exceptions import RedisError

logger = logging.getLogger("memoryadmin.doors")

# The cache keys of DRF's SimpleRateThrottle with scope "caller", which counted before.
CACHE_KEY = "throttle_caller_{ident}"
PERIODS = {"s": 1, "m": 60, "h": 3600, "d": 86400}


@dataclass(frozen=True)
class Admission:
    allowed: bool
    # When refused: seconds until the next request would be admitted (None: unknown).
    wait: float | None = None


def caller_ident(
    *, token_id: int | None = None, user_id: int | None = None, address: str = ""
) -> str:
    """Whose budget a request spends: its token's, else its user's, else its address's."""
    if token_id is not None:
        return f"token:{token_id}"
    if user_id is not None:
        return f"user:{user_id}"
    return f"address:{address}"


def admit(ident: str) -> Admission:
    """Count one request of `ident` against its budget, or refuse it when the budget is spent."""
    rate = settings.MEMORYADMIN["API"]["RATE_LIMIT"]  # read each time: settings changes apply
    if rate is None:
        return Admission(allowed=True)
    number, period = rate.split("/")
    limit, duration = int(number), PERIODS[period[0]]
    # A Redis outage must not turn every call into a 500 (edits keep working while the
    # broker is down, PRODUCT.md 7): the limit is then not applied.
    try:
        client = _redis_client()
        if client is not None:
            return _admit_in_redis(client, ident, limit, duration)
        key = CACHE_KEY.format(ident=ident)
        history: list[float] = cache.get(key, [])
        now = time.time()
        while history and history[-1] <= now - duration:
            history.pop()
        if len(history) >= limit:
            oldest = history[-1] if history else None
            return Admission(allowed=False, wait=_wait(len(history), oldest, now, limit, duration))
        history.insert(0, now)
        cache.set(key, history, duration)
    except RedisError as error:
        logger.warning("rate limit not applied: the cache is unavailable (%s)", error)
    return Admission(allowed=True)


# The same sliding window in one round trip: the caller's request times as a sorted set,
# trimmed, counted and added to by one script (a read then a write were two round trips,
# and two requests at once could both pass the last free place).
# KEYS[1]: the window; ARGV: now, the cut-off (now - duration), limit, duration, a member.
WINDOW_SCRIPT = """
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[2])
local count = redis.call('ZCARD', KEYS[1])
if count >= tonumber(ARGV[3]) then
  local oldest = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return {0, count, oldest[2]}
end
redis.call('ZADD', KEYS[1], ARGV[1], ARGV[5])
redis.call('EXPIRE', KEYS[1], ARGV[4])
return {1, count + 1}
"""
WINDOW_KEY = "throttle_window_{ident}"
_scripts: weakref.WeakKeyDictionary[Redis, Script] = weakref.WeakKeyDictionary()


def _redis_client() -> Redis | None:
    """The default cache's Redis client; None for a cache that is not Redis (the embedded
    default's local memory)."""
    backend = caches["default"]
    if not isinstance(backend, RedisCache):
        return None
    return backend._cache.get_client(write=True)


def _admit_in_redis(client: Redis, ident: str, limit: int, duration: int) -> Admission:
    script = _scripts.get(client)
    if script is None:
        script = _scripts[client] = client.register_script(WINDOW_SCRIPT)
    now = time.time()
    # A member of its own for each request: two at the same instant are two requests.
    member = f"{now!r}:{random.getrandbits(64):x}"
    key = cache.make_key(WINDOW_KEY.format(ident=ident))
    answer = script(keys=[key], args=[repr(now), repr(now - duration), limit, duration, member])
    if answer[0]:
        return Admission(allowed=True)
    oldest = float(answer[2]) if len(answer) > 2 else None
    return Admission(allowed=False, wait=_wait(int(answer[1]), oldest, now, limit, duration))


def _wait(count: int, oldest: float | None, now: float, limit: int, duration: int) -> float | None:
    """Seconds until the next request would be admitted, from the `count` requests in the
    window and the `oldest` of them."""
    remaining = duration - (now - oldest) if oldest is not None else duration
    available = limit - count + 1
    return remaining / available if available > 0 else None
