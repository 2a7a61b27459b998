"""The doors' per-caller rate limit as a DRF throttle."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rest_framework.request import Request
from rest_framework.throttling import BaseThrottle

from memoryadmin.doors.throttling import admit, caller_ident
from stores.models import AgentToken

if TYPE_CHECKING:
    from rest_framework.views import APIView


class CallerRateThrottle(BaseThrottle):
    """One budget per token, user or (unauthenticated) address: `memoryadmin.doors.throttling`."""

    wait_seconds: float | None = None

    def allow_request(self, request: Request, view: APIView) -> bool:
        if isinstance(request.auth, AgentToken):
            ident = caller_ident(token_id=request.auth.pk)
        elif request.user is not None and request.user.is_authenticated:
            ident = caller_ident(user_id=request.user.pk)
        else:
            ident = caller_ident(address=self.get_ident(request))
        admission = admit(ident)
        self.wait_seconds = admission.wait
        return admission.allowed

    def wait(self) -> float | None:
        return self.wait_seconds
