"""Bearer tokens: `Authorization: Bearer <token>` authenticates as one agent."""

from __future__ import annotations

import datetime as dt

from django.utils import timezone
from rest_framework import authentication, exceptions
from rest_framework.request import Request

from stores.models import AgentToken
from stores.services import token_authenticate

# last_used_at is bookkeeping, not an audit log: write it at most once a minute per token
# so a busy agent does not turn every read into a write.
LAST_USED_RESOLUTION = dt.timedelta(minutes=1)


class AgentPrincipal:
    """`request.user` for a request authenticated by an agent token."""

    is_authenticated = True
    is_anonymous = False
    is_active = True
    is_staff = False
    is_superuser = False
    pk = None

    def __init__(self, token: AgentToken) -> None:
        self.token = token

    def __str__(self) -> str:
        return f"agent:{self.token.agent.name}/{self.token.name}"

    def get_username(self) -> str:
        return str(self)

    def has_perm(self, perm: str, obj: object = None) -> bool:
        return False


class BearerTokenAuthentication(authentication.BaseAuthentication):
    def authenticate(self, request: Request) -> tuple[AgentPrincipal, AgentToken] | None:
        token = bearer_token(authentication.get_authorization_header(request))
        if token is None:
            return None
        return AgentPrincipal(token), token

    def authenticate_header(self, request: Request) -> str:
        return WWW_AUTHENTICATE


KEYWORD = "Bearer"
WWW_AUTHENTICATE = f'{KEYWORD} realm="memoryadmin"'


def bearer_token(header: bytes) -> AgentToken | None:
    """The live token an `Authorization: Bearer <token>` header names; None without one.

    Raises AuthenticationFailed for a malformed header or an unknown, revoked or expired
    token. Every door that takes agent tokens (REST, MCP over HTTP) reads the header here.
    """
    words = header.decode("latin-1").split()
    if not words or words[0].lower() != KEYWORD.lower():
        return None
    if len(words) != 2:
        raise exceptions.AuthenticationFailed(
            "The Authorization header must read 'Bearer <token>'."
        )
    token = token_authenticate(words[1])
    if token is None:
        raise exceptions.AuthenticationFailed("Unknown, revoked or expired token.")
    touch_last_used(token)
    return token


def touch_last_used(token: AgentToken) -> None:
    now = timezone.now()
    if token.last_used_at is not None and now - token.last_used_at < LAST_USED_RESOLUTION:
        return
    AgentToken.objects.filter(pk=token.pk).update(last_used_at=now)
    token.last_used_at = now
