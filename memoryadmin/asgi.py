"""The application: Django in a fixed pool of threads, the long-poll feed and MCP on the loop.

`gunicorn -c gunicorn.conf.py memoryadmin.asgi:application` serves it in production (uvicorn
workers, the container does); `bin/serve` runs it under uvicorn on the embedded default.

Django (the UI and the REST API) runs as a WSGI application in `MEMORYADMIN_WEB_THREADS`
threads per process (DjangoInThreads), the same threads from one request to the next, so
each keeps its PostgreSQL connection (CONN_MAX_AGE, health-checked before reuse). Django's
own ASGI handler runs every request in a new thread, and so opened a connection per request:
an edit took 1.7 to 2.7 times as long (bench/edit_path.py). On the event loop beside it: the
MCP door (an ASGI application of the SDK's) and the change feed's long polls, which wait
there without holding a thread or a connection (memoryadmin/api/longpoll.py).

In front of all of them, BodyLimit refuses a body past the upload limit before anything else
reads it, on every path.
"""

from __future__ import annotations

import asyncio
import contextvars
import os
import tempfile
from collections.abc import AsyncIterator, Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from importlib import import_module
from typing import Any

from a2wsgi.wsgi import build_environ
from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.wsgi import get_wsgi_application
from starlette.applications import Starlette
from starlette.datastructures import Headers
from starlette.responses import JSONResponse
from starlette.routing import Route
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memoryadmin.doors import statuses
from memoryadmin.doors.errors import too_large_body, unauthenticated_body
from memoryadmin.hosting.database import API_UNAVAILABLE_STATUS, RETRY_AFTER_SECONDS
from memoryadmin.hosting.memory import RELEASE_EVERY, freeze_loaded, give_back

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
# The change feed, whose long polls wait here rather than in a Django view (api/longpoll.py).
CHANGES_PATH = "/api/v1/changes/"

WSGIApp = Callable[[dict[str, Any], Callable[..., Any]], Iterable[bytes]]
Answer = tuple[int, list[tuple[bytes, bytes]], bytes]


# The agent doors: every request needs a token (or a logged-in session), so a body sent with
# neither is refused before it is read.
AGENT_DOORS = ("/api/v1/", "/mcp")
SERVER_BUSY = 503


class BodyLimit:
    """A request body past DATA_UPLOAD_MAX_MEMORY_SIZE answered 413 before it is read, and the
    bodies of all requests together held to MEMORYADMIN["BODY_BYTES_IN_FLIGHT"].

    A declared Content-Length past the limit is refused before a byte is read (and before
    any authentication work); a chunked body is counted as it is read and, once past the
    limit, the application behind sees the client go away and the 413 goes out instead. The
    limit covers the largest text a write may carry as JSON (settings), and no page of the
    app takes a file upload, so one limit serves every path.

    Each body is held whole until its request is answered (DjangoInThreads reads it first),
    so many bodies at once were bounded only by their number: 300 connections each sending
    2.4 MiB took the server from 174 to 697 MiB. The bytes read and not yet answered, over
    all requests, stay within the budget: a body that would pass it answers 503 (retry
    shortly). A body to an agent door with no token and no session is answered 401 unread.

    Each time a share of the budget has been read in bodies and answered, the memory of the
    answered requests goes back to the system (memoryadmin.hosting.memory): they outlive
    their answers otherwise, beside the bodies the budget counts.
    """

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.in_flight = 0  # bytes of bodies read and not yet answered, every request's
        self.read_since_release = 0  # bytes of bodies read since memory was last given back

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
        if scope["type"] != "http" or limit is None:
            await self.app(scope, receive, send)
            return
        budget = int(settings.MEMORYADMIN["BODY_BYTES_IN_FLIGHT"])
        headers = Headers(scope=scope)
        declared = headers.get("content-length", "")
        refusal = _refusal_unread(scope["path"], headers, declared, limit, budget - self.in_flight)
        if refusal is not None:
            await refusal(scope, receive, send)
            return
        read = held = 0
        cut_off: JSONResponse | None = None
        answered = False

        async def bounded_receive() -> Message:
            nonlocal read, held, cut_off
            if cut_off is not None:
                return {"type": "http.disconnect"}
            message = await receive()
            size = len(message.get("body", b""))
            read += size
            if read > limit:
                cut_off = _too_large()
            elif self.in_flight + size > budget:
                cut_off = _busy()
            if cut_off is not None:
                return {"type": "http.disconnect"}
            self.in_flight += size
            held += size
            return message

        async def watched_send(message: Message) -> None:
            nonlocal answered
            answered = True
            await send(message)

        try:
            await self.app(scope, bounded_receive, watched_send)
        finally:
            self.in_flight -= held
            self.read_since_release += held
            if self.read_since_release >= budget * RELEASE_EVERY:
                self.read_since_release = 0
                give_back()
        if cut_off is not None and not answered:
            await cut_off(scope, receive, send)


def _refusal_unread(
    path: str, headers: Headers, declared: str, limit: int, room: int
) -> JSONResponse | None:
    """The answer to a request refused before its body is read; None to read it."""
    if declared.isdecimal() and int(declared) > limit:
        return _too_large()
    carries_body = (declared.isdecimal() and int(declared) > 0) or "transfer-encoding" in headers
    if carries_body and path.startswith(AGENT_DOORS) and not _has_credentials(headers):
        from memoryadmin.doors.tokens import WWW_AUTHENTICATE  # reaches the models

        return JSONResponse(
            unauthenticated_body(
                "not_authenticated", "A token is needed: send Authorization: Bearer <token>."
            ),
            status_code=statuses.UNAUTHENTICATED,
            headers={"WWW-Authenticate": WWW_AUTHENTICATE},
        )
    if declared.isdecimal() and int(declared) > room:
        return _busy()
    return None


def _has_credentials(headers: Headers) -> bool:
    session = f"{settings.SESSION_COOKIE_NAME}="
    return "authorization" in headers or session in headers.get("cookie", "")


def _too_large() -> JSONResponse:
    return JSONResponse(too_large_body(), status_code=statuses.REQUEST_TOO_LARGE)


def _busy() -> JSONResponse:
    # The database outage's answer too: nothing was read or written, try again.
    return JSONResponse(
        {
            "status": API_UNAVAILABLE_STATUS,
            "code": "busy",
            "message": "The server holds as many request bodies as it may at once; nothing "
            "was read or written. Retry shortly.",
            "retry_after": RETRY_AFTER_SECONDS,
        },
        status_code=SERVER_BUSY,
        headers={"Retry-After": str(RETRY_AFTER_SECONDS)},
    )


class DjangoInThreads:
    """Django's WSGI application served to ASGI from a fixed pool of threads.

    The request's body is read on the event loop before Django runs, and Django's whole
    answer goes out once it is done: one hand-over to a thread and one back per request
    (none of the app's answers streams). a2wsgi's bridge handed every message over on its
    own, the thread waiting for the loop each time: about 4 ms of a 17 ms edit.
    """

    def __init__(self, app: WSGIApp, threads: int) -> None:
        self.app = app
        self.executor = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="django")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # a websocket: no page of the app speaks it
            await send({"type": "websocket.close", "code": 1000})
            return
        # As Django's own ASGI handler does: a large body waits in a file, not in memory.
        with tempfile.SpooledTemporaryFile(max_size=settings.FILE_UPLOAD_MAX_MEMORY_SIZE) as body:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    return  # nobody is left to answer
                body.write(message.get("body", b""))
                if not message.get("more_body", False):
                    break
            body.seek(0)
            environ = build_environ(scope, body)  # type: ignore[arg-type]
            context = contextvars.copy_context()
            status, headers, content = await asyncio.get_running_loop().run_in_executor(
                self.executor, context.run, self._answer, environ
            )
        await send({"type": "http.response.start", "status": status, "headers": headers})
        await send({"type": "http.response.body", "body": content})

    def _answer(self, environ: dict[str, Any]) -> Answer:
        chunks: list[bytes] = []
        started: dict[str, Any] = {}

        def start_response(
            status: str, headers: list[tuple[str, str]], exc_info: Any = None
        ) -> Callable[[bytes], None]:
            started["status"] = int(status.split(" ", 1)[0])
            started["headers"] = [
                (name.lower().encode("latin-1"), value.encode("latin-1")) for name, value in headers
            ]
            return chunks.append

        iterable = self.app(environ, start_response)
        try:
            chunks.extend(iterable)
        finally:
            close = getattr(iterable, "close", None)
            if close is not None:
                close()  # Django's request_finished: the connection kept or closed
        return started["status"], started["headers"], b"".join(chunks)


def build_application() -> ASGIApp:
    """A new application (each MCP door can be started once, so tests build their own)."""
    django_wsgi = get_wsgi_application()
    if "whitenoise.middleware.WhiteNoiseMiddleware" not in settings.MIDDLEWARE:
        # The embedded default has no WhiteNoise (production's collected files) and no
        # front server: Django serves the static files from the source folders, DEBUG on or
        # off (DEBUG is off unless asked for, and the pages need their stylesheet and script).
        django_wsgi = StaticFilesHandler(django_wsgi)
    django_application = DjangoInThreads(django_wsgi, settings.MEMORYADMIN["WEB_THREADS"])

    # Imported once Django is set up: they reach the models.
    from memoryadmin.api.longpoll import LongPoll
    from memoryadmin.doors.changes import close_listener
    from memoryadmin.mcp.http import MCP_PATHS, McpHttpDoor

    door = McpHttpDoor()

    @asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        async with door.lifespan():
            try:
                yield
            finally:
                await close_listener()

    application = Starlette(
        routes=[
            *(Route(path, door) for path in MCP_PATHS),
            Route(CHANGES_PATH, LongPoll(django_application)),
        ],
        lifespan=lifespan,
    )
    # Everything else is Django's, whatever the path holds: a mount's pattern would not
    # match a path with a newline in it, and answer Starlette's own plain-text 404.
    application.router.default = django_application
    return BodyLimit(application)


application = build_application()
# Every view imported now rather than by the first request, so that it is frozen with the rest
# of what the process keeps for its life (left out of later garbage collections).
import_module(settings.ROOT_URLCONF)
freeze_loaded()
