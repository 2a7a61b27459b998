"""Per-caller rate limiting: each token (or logged-in user, or address) has one budget.

MEMORYADMIN["API"]["RATE_LIMIT"] requests per caller and period, counted over a sliding
window (the timestamps of the caller's recent requests). A token's requests to /api/ and
/mcp/ share one budget, so switching doors does not double it. The counters live in
Django's cache: configure a shared cache (Redis) when several processes serve the doors, or
each process counts on its own.
"""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
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
    key = CACHE_KEY.format(ident=ident)
    # A Redis outage must not turn every call into a 500 (edits keep working while the
    # broker is down, PRODUCT.md 7): the limit is then not applied.
    try:
        history: list[float] = cache.get(key, [])
        now = time.time()
        while history and history[-1] <= now - duration:
            history.pop()
        if len(history) >= limit:
            return Admission(allowed=False, wait=_wait(history, now, limit, duration))
        history.insert(0, now)
        cache.set(key, history, duration)
    except RedisError as error:
        logger.warning("rate limit not applied: the cache is unavailable (%s)", error)
    return Admission(allowed=True)


def _wait(history: list[float], now: float, limit: int, duration: int) -> float | None:
    remaining = duration - (now - history[-1]) if history else duration
    available = limit - len(history) + 1
    return remaining / available if available > 0 else None
