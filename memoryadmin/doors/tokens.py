"""Agent tokens at the doors: `Authorization: Bearer <token>` resolved to a live token.

Every door that takes agent tokens (REST, MCP over HTTP, MCP on stdio) reads them here; the
token's agent is the only agent the request reaches (`Actor.for_token`).
"""

from __future__ import annotations

import datetime as dt

from django.utils import timezone

from stores.models import AgentToken
from stores.services.agents import token_authenticate

KEYWORD = "Bearer"
WWW_AUTHENTICATE = f'{KEYWORD} realm="memoryadmin"'
# Refusal codes, as in every door's 401 body.
NOT_AUTHENTICATED = "not_authenticated"
AUTHENTICATION_FAILED = "authentication_failed"
NOT_PROVIDED_MESSAGE = "Authentication credentials were not provided."
# last_used_at is bookkeeping, not an audit log: write it at most once a minute per token
# so a busy agent does not turn every read into a write.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)


class Unauthenticated(Exception):
    """A header that names no live token: malformed, or an unknown, revoked or expired token."""

    code = AUTHENTICATION_FAILED

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


def bearer_token(header: bytes) -> AgentToken | None:
    """The live token an `Authorization: Bearer <token>` header names; None without one.

    Raises Unauthenticated for a malformed header or an unknown, revoked or expired token.
    """
    words = header.decode("latin-1").split()
    if len(words) == 1 and words[0].lower() != KEYWORD.lower():
        # A bare secret (no scheme at all) is a token sent without its keyword.
        raise Unauthenticated(
            "The Authorization header must read 'Bearer <token>': the word Bearer, a space, "
            "then the token; this one has the token alone."
        )
    if not words or words[0].lower() != KEYWORD.lower():
        return None
    if len(words) != 2:
        raise Unauthenticated("The Authorization header must read 'Bearer <token>'.")
    token = live_token(words[1])
    if token is None:
        raise Unauthenticated("Unknown, revoked or expired token.")
    return token


def live_token(raw: str) -> AgentToken | None:
    """The live token for the secret `raw`, its use recorded; None if it is not live."""
    token = token_authenticate(raw)
    if token is not None:
        touch_last_used(token)
    return token


def touch_last_used(token: AgentToken) -> None:
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_RESOLUTION:
        return
    AgentToken.objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now
