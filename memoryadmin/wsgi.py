"""The production application: Django under WSGI, with the MCP door's ASGI app at /mcp/.

`gunicorn -c gunicorn.conf.py memoryadmin.wsgi:application` serves it (the container does).
Django serves the UI and the REST API in gunicorn's threaded workers: each worker thread
keeps its PostgreSQL connection from one request to the next (CONN_MAX_AGE, health-checked
before reuse), where Django's ASGI handler runs every request in a thread of its own and so
opened a new connection for each (bench/edit_path.py measures both servers side by side).
The MCP SDK's endpoint is an ASGI application: it runs on one event loop per process, in a
thread of its own, bridged by a2wsgi; its tool calls reach the database through the same
Django code as every other door.

`memoryadmin.asgi` is the same site as one ASGI application (bin/serve runs it under uvicorn
on the embedded default).
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable, Iterable
from typing import Any

from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")

Environ = dict[str, Any]
StartResponse = Callable[..., Any]
WSGIApp = Callable[[Environ, StartResponse], Iterable[bytes]]


class McpBridge:
    """The MCP door (ASGI) as a WSGI app: its own event loop, in a daemon thread, with the
    door's lifespan (the SDK's session manager) entered once for the life of the process."""

    def __init__(self) -> None:
        from a2wsgi import ASGIMiddleware

        # Imported once Django is set up: the door reaches the models.
        from memoryadmin.mcp.http import McpHttpDoor

        door = McpHttpDoor()
        loop = asyncio.new_event_loop()
        threading.Thread(target=loop.run_forever, name="memoryadmin-mcp", daemon=True).start()
        started = threading.Event()
        life = asyncio.run_coroutine_threadsafe(_serve(door, started), loop)
        life.add_done_callback(lambda _life: started.set())
        started.wait()
        if life.done():  # the lifespan failed at once: say why rather than serve a dead door
            life.result()
        self.app = ASGIMiddleware(door, loop=loop)

    def __call__(self, environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        return self.app(environ, start_response)


async def _serve(door: Any, started: threading.Event) -> None:
    async with door.lifespan():
        started.set()
        await asyncio.Event().wait()  # for the life of the process


def build_application() -> WSGIApp:
    django_application: WSGIApp = get_wsgi_application()
    if "whitenoise.middleware.WhiteNoiseMiddleware" not in settings.MIDDLEWARE:
        # As in memoryadmin.asgi: without WhiteNoise, Django serves the source folders' files.
        django_application = StaticFilesHandler(django_application)
    from memoryadmin.mcp.http import MCP_PATHS

    mcp: McpBridge | None = None
    lock = threading.Lock()

    def application(environ: Environ, start_response: StartResponse) -> Iterable[bytes]:
        nonlocal mcp
        if environ.get("PATH_INFO", "") not in MCP_PATHS:
            return django_application(environ, start_response)
        # Started by the first MCP request, in the worker process that serves it (never in
        # a parent before it forks: a loop thread does not survive a fork).
        with lock:
            if mcp is None:
                mcp = McpBridge()
        return mcp(environ, start_response)

    return application


application = build_application()
