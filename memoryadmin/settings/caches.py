"""The cache, which the API rate limit counts in."""

from __future__ import annotations

from memoryadmin.settings.background import CELERY_BROKER_URL
from memoryadmin.settings.environment import env

# Each gunicorn worker is a process with its own memory, so without a shared cache a token
# got the limit once per worker. Production sets MEMORYADMIN_CACHE_URL, or shares the
# broker's Redis; the embedded default (one process) keeps the local memory cache.
_cache_url = env("CACHE_URL") or (
    CELERY_BROKER_URL if CELERY_BROKER_URL.startswith(("redis://", "rediss://")) else None
)
if _cache_url:
    CACHES = {
        "default": {
            # Django's own, with its Redis client kept (memoryadmin/hosting/cache.py).
            "BACKEND": "memoryadmin.hosting.cache.ReusedClientRedisCache",
            "LOCATION": _cache_url,
            "KEY_PREFIX": "memoryadmin",
        }
    }
