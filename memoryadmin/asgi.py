"""The application: Django in a fixed pool of threads, the long-poll feed and MCP on the loop.

`gunicorn -c gunicorn.conf.py memoryadmin.asgi:application` serves it in production (uvicorn
workers, the container does); `bin/serve` runs it under uvicorn on the embedded default.

Django (the UI and the REST API) runs as a WSGI application in `MEMORYADMIN_WEB_THREADS`
threads per process, the same threads from one request to the next, so each keeps its
PostgreSQL connection (CONN_MAX_AGE, health-checked before reuse). Django's own ASGI handler
runs every request in a new thread, and so opened a connection per request: an edit took 1.7
to 2.7 times as long (bench/edit_path.py measures both). On the event loop beside it: the
MCP door (an ASGI application of the SDK's) and the change feed's long polls, which wait
there without holding a thread or a connection (memoryadmin/api/longpoll.py).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from a2wsgi import WSGIMiddleware
from django.conf import settings
from django.contrib.staticfiles.handlers import StaticFilesHandler
from django.core.wsgi import get_wsgi_application
from starlette.applications import Starlette
from starlette.routing import Route

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
# The change feed, whose long polls wait here rather than in a Django view (api/longpoll.py).
CHANGES_PATH = "/api/v1/changes/"


def build_application() -> Starlette:
    """A new application (each MCP door can be started once, so tests build their own)."""
    django_wsgi = get_wsgi_application()
    if "whitenoise.middleware.WhiteNoiseMiddleware" not in settings.MIDDLEWARE:
        # The embedded default has no WhiteNoise (production's collected files) and no
        # front server: Django serves the static files from the source folders, DEBUG on or
        # off (DEBUG is off unless asked for, and the pages need their stylesheet and script).
        django_wsgi = StaticFilesHandler(django_wsgi)
    django_application = WSGIMiddleware(django_wsgi, workers=settings.MEMORYADMIN["WEB_THREADS"])

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
    return application


application = build_application()
