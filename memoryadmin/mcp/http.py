"""MCP over streamable HTTP at /mcp/, behind the REST door's tokens, hosts and rate limits.

Every HTTP request to /mcp/ is admitted as the REST API admits one, before the SDK sees it:
- its Host must be one of ALLOWED_HOSTS (Django's own check, which this path bypasses);
- `Authorization: Bearer <token>` must name a live agent token (401 otherwise, with the
  REST door's body and `WWW-Authenticate`);
- the token's rate limit is the REST API's, counted in the same budget (429 otherwise), so
  a token cannot double its budget by switching doors.
The admitted token rides in the ASGI scope to the tool handlers: an agent's token only ever
reaches its own agent's records.

The transport is stateless and answers JSON: each POST is one self-contained exchange, so
any worker process can answer any request (no session to pin to a process) and nothing
needs a server-to-client stream (no tool sends progress or asks the client anything).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager
from types import SimpleNamespace

from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from rest_framework.exceptions import AuthenticationFailed
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Receive, Scope, Send

from memoryadmin.api import statuses
from memoryadmin.api.authentication import WWW_AUTHENTICATE, AgentPrincipal, bearer_token
from memoryadmin.api.exceptions import error_body
from memoryadmin.api.throttling import CallerRateThrottle
from memoryadmin.mcp.server import build_server, in_database_thread
from stores.editing import Status
from stores.models import AgentToken

TOKEN_SCOPE_KEY = "memoryadmin.agent_token"
# Django's own default when DEBUG is on and ALLOWED_HOSTS is empty.
DEBUG_HOSTS = [".localhost", "127.0.0.1", "[::1]"]


def _token_in_scope(request: Request | None) -> AgentToken | None:
    return None if request is None else request.scope.get(TOKEN_SCOPE_KEY)


class McpHttpDoor:
    """The ASGI app answering /mcp/. Run `lifespan()` around the app's life."""

    def __init__(self) -> None:
        self.server = build_server(_token_in_scope)
        self.sessions = StreamableHTTPSessionManager(
            app=self.server, json_response=True, stateless=True
        )

    def lifespan(self) -> AbstractAsyncContextManager[None]:
        return self.sessions.run()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        headers = Headers(scope=scope)
        refused = _disallowed_host(headers.get("host", ""))
        if refused is None:
            admitted = await in_database_thread(
                _admit, headers.get("authorization", "").encode("latin-1")
            )
            if isinstance(admitted, AgentToken):
                await self.sessions.handle_request(
                    {**scope, TOKEN_SCOPE_KEY: admitted}, receive, send
                )
                return
            refused = admitted
        await refused(scope, receive, send)


def _disallowed_host(host: str) -> JSONResponse | None:
    allowed = settings.ALLOWED_HOSTS or (DEBUG_HOSTS if settings.DEBUG else [])
    domain, _port = split_domain_port(host)
    if domain and validate_host(domain, allowed):
        return None
    return JSONResponse(
        error_body(Status.INVALID, f"Invalid Host header {host!r}.", code="disallowed_host"),
        status_code=400,
    )


def _admit(authorization: bytes) -> AgentToken | JSONResponse:
    """The live token of the request, or the REST door's answer refusing it."""
    try:
        token = bearer_token(authorization)
    except AuthenticationFailed as error:
        return _unauthenticated(error.default_code, str(error.detail))
    if token is None:
        return _unauthenticated(
            "not_authenticated", "Authentication credentials were not provided."
        )
    throttle = CallerRateThrottle()
    # The REST throttle reads only who is calling; the view is not used.
    caller = SimpleNamespace(auth=token, user=AgentPrincipal(token))
    if not throttle.allow_request(caller, None):
        wait = int(throttle.wait() or 0) + 1
        return JSONResponse(
            error_body(
                statuses.RATE_LIMITED_STATUS,
                f"Request was throttled. Expected available in {wait} seconds.",
                code="rate_limited",
                retry_after=wait,
            ),
            status_code=statuses.RATE_LIMITED,
            headers={"Retry-After": str(wait)},
        )
    return token


def _unauthenticated(code: str, message: str) -> JSONResponse:
    return JSONResponse(
        error_body(statuses.UNAUTHENTICATED_STATUS, message, code=code),
        status_code=statuses.UNAUTHENTICATED,
        headers={"WWW-Authenticate": WWW_AUTHENTICATE},
    )
