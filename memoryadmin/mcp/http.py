"""MCP over streamable HTTP at /mcp/, behind the doors' tokens, hosts and rate limits.

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
So only POST is served: a GET, which would open a stream that never carries anything (and
never ends), answers 405 as the Streamable HTTP transport provides for a server without one.

A POST's body is read here, within the REST door's limits, before the SDK parses it: at
most DATA_UPLOAD_MAX_MEMORY_SIZE bytes (413 otherwise, without reading further) and JSON
nested at most MAX_JSON_DEPTH levels (400).
"""

from __future__ import annotations

from contextlib import AbstractAsyncContextManager

import anyio
from django.conf import settings
from django.http.request import split_domain_port, validate_host
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from starlette.datastructures import Headers
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.types import Message, Receive, Scope, Send

from memoryadmin.doors import statuses, tokens
from memoryadmin.doors.bodies import BodyTooDeep, loads_bounded
from memoryadmin.doors.errors import error_body, too_large_body, unauthenticated_body
from memoryadmin.doors.throttling import admit, caller_ident
from memoryadmin.mcp.server import build_server, in_database_thread
from stores.editing import Status
from stores.models import AgentToken

TOKEN_SCOPE_KEY = "memoryadmin.agent_token"
# Where the door answers (memoryadmin.asgi routes them here, with and without the slash).
MCP_PATHS = ("/mcp", "/mcp/")
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
        admitted = await _admitted(scope, receive)
        if admitted is None:  # the client went away
            return
        if isinstance(admitted, JSONResponse):
            await admitted(scope, receive, send)
            return
        token, body = admitted
        await self.sessions.handle_request(
            {**scope, TOKEN_SCOPE_KEY: token}, _replay(body, receive), send
        )


async def _admitted(
    scope: Scope, receive: Receive
) -> tuple[AgentToken, bytes] | JSONResponse | None:
    """The request's live token and its body, or the answer refusing it (None: no one to
    answer). Checked cheapest first: nothing is read before the token is known."""
    headers = Headers(scope=scope)
    refused = _disallowed_host(headers.get("host", "")) or _disallowed_method(scope)
    if refused is not None:
        return refused
    token = await in_database_thread(_admit, headers.get("authorization", "").encode("latin-1"))
    if not isinstance(token, AgentToken):
        return token
    body = await _read_body(headers, receive)
    if not isinstance(body, bytes):
        return body
    # Parsing a body of up to the upload limit is CPU work: in a worker thread, off the loop.
    refused = await anyio.to_thread.run_sync(_too_deep, body)
    return (token, body) if refused is None else refused


def _disallowed_host(host: str) -> JSONResponse | None:
    allowed = settings.ALLOWED_HOSTS or (DEBUG_HOSTS if settings.DEBUG else [])
    domain, _port = split_domain_port(host)
    if domain and validate_host(domain, allowed):
        return None
    return JSONResponse(
        error_body(Status.INVALID, f"Invalid Host header {host!r}.", code="disallowed_host"),
        status_code=400,
    )


def _disallowed_method(scope: Scope) -> JSONResponse | None:
    if scope["method"] == "POST":
        return None
    return JSONResponse(
        error_body(
            Status.INVALID,
            f"{scope['method']} is not served at /mcp/: send each JSON-RPC message as a POST. "
            "This server opens no event stream (it has nothing to send unasked).",
            code="method_not_allowed",
        ),
        status_code=405,
        headers={"Allow": "POST"},
    )


async def _read_body(headers: Headers, receive: Receive) -> bytes | JSONResponse | None:
    """The whole body; a 413 answer once it passes the upload limit; None on disconnect."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    too_large = JSONResponse(too_large_body(), status_code=statuses.REQUEST_TOO_LARGE)
    declared = headers.get("content-length", "")
    if limit is not None and declared.isdecimal() and int(declared) > limit:
        return too_large
    chunks: list[bytes] = []
    size = 0
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            return None
        chunk = message.get("body", b"")
        size += len(chunk)
        if limit is not None and size > limit:
            return too_large
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


def _too_deep(body: bytes) -> JSONResponse | None:
    """The REST door's answer to a body nested past the limit; None for any other body
    (one that is not JSON gets the SDK's own JSON-RPC parse error)."""
    try:
        loads_bounded(body)
    except BodyTooDeep as refusal:
        return JSONResponse(
            error_body(Status.INVALID, refusal.message, code=refusal.code, **refusal.details),
            status_code=statuses.http_code(Status.INVALID),
        )
    except ValueError:
        pass
    return None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive that hands the SDK the body already read, then listens as before."""
    delivered = False

    async def replay() -> Message:
        nonlocal delivered
        if delivered:
            return await receive()
        delivered = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


def _admit(authorization: bytes) -> AgentToken | JSONResponse:
    """The live token of the request, or the answer refusing it (as the REST door would)."""
    try:
        token = tokens.bearer_token(authorization)
    except tokens.Unauthenticated as refusal:
        return _unauthenticated(refusal.code, refusal.message)
    if token is None:
        return _unauthenticated(tokens.NOT_AUTHENTICATED, tokens.NOT_PROVIDED_MESSAGE)
    admission = admit(caller_ident(token_id=token.pk))
    if not admission.allowed:
        wait = int(admission.wait or 0) + 1
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
        unauthenticated_body(code, message),
        status_code=statuses.UNAUTHENTICATED,
        headers={"WWW-Authenticate": tokens.WWW_AUTHENTICATE},
    )
