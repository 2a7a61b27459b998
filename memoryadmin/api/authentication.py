"""Bearer tokens in DRF: `Authorization: Bearer <token>` authenticates as one agent."""

from __future__ import annotations

from rest_framework import authentication, exceptions
from rest_framework.request import Request

from memoryadmin.doors.tokens import WWW_AUTHENTICATE, Unauthenticated, bearer_token
from stores.models import AgentToken


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
        try:
            token = bearer_token(authentication.get_authorization_header(request))
        except Unauthenticated as refusal:
            raise exceptions.AuthenticationFailed(refusal.message) from None
        if token is None:
            return None
        return AgentPrincipal(token), token

    def authenticate_header(self, request: Request) -> str:
        return WWW_AUTHENTICATE
