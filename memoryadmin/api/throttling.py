"""Per-caller rate limiting: each token (or logged-in user) has its own budget."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from django.conf import settings
from redis.exceptions import RedisError
from rest_framework.request import Request
from rest_framework.throttling import SimpleRateThrottle

from stores.models import AgentToken

if TYPE_CHECKING:
    from rest_framework.views import APIView

logger = logging.getLogger("memoryadmin.api")


class CallerRateThrottle(SimpleRateThrottle):
    """MEMORYADMIN["API"]["RATE_LIMIT"] requests per token, user or (unauthenticated) address.

    The counters live in Django's cache: configure a shared cache (Redis) when several
    processes serve the API, or each process counts on its own.
    """

    scope = "caller"

    def allow_request(self, request: Request, view: APIView) -> bool:
        # The counters live in Redis when there is one; a Redis outage must not turn every
        # API call into a 500 (edits keep working while the broker is down, PRODUCT.md 7).
        try:
            return super().allow_request(request, view)
        except RedisError as error:
            logger.warning("rate limit not applied: the cache is unavailable (%s)", error)
            return True

    def get_rate(self) -> str | None:
        # Read on each request (not at import, as DRF does) so settings changes apply.
        return settings.MEMORYADMIN["API"]["RATE_LIMIT"]

    def get_cache_key(self, request: Request, view: APIView) -> str:
        if isinstance(request.auth, AgentToken):
            ident = f"token:{request.auth.pk}"
        elif request.user is not None and request.user.is_authenticated:
            ident = f"user:{request.user.pk}"
        else:
            ident = f"address:{self.get_ident(request)}"
        return self.cache_format % {"scope": self.scope, "ident": ident}
