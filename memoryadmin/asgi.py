"""The ASGI application: Django for every page and the REST API, MCP at /mcp/, one process.

`uvicorn memoryadmin.asgi:application` serves it (bin/serve does); in production run several
workers (`uvicorn --workers N`, or gunicorn with `-k uvicorn_worker.UvicornWorker`). The MCP
door is stateless, so any worker answers any request.
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from django.conf import settings
from django.contrib.staticfiles.handlers import ASGIStaticFilesHandler
from django.core.asgi import get_asgi_application
from starlette.applications import Starlette
from starlette.routing import Route

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
# Django's ASGI handler runs each request's sync code in a thread of its own and keeps
# connections per thread: a connection kept for reuse (CONN_MAX_AGE > 0) is never reused
# and never closed, so a busy server ran PostgreSQL out of connections ("too many clients",
# found by the list-append checker at full size). Django's advice: no persistent
# connections under ASGI; MEMORYADMIN_DATABASE_POOL=true reuses them through a pool.
os.environ.setdefault("MEMORYADMIN_CONN_MAX_AGE", "0")
# The change feed, whose long polls wait here rather than in a Django view (api/longpoll.py).
CHANGES_PATH = "/api/v1/changes/"


def build_application() -> Starlette:
    """A new application (each MCP door can be started once, so tests build their own)."""
    django_application = get_asgi_application()
    if "whitenoise.middleware.WhiteNoiseMiddleware" not in settings.MIDDLEWARE:
        # The embedded default has no WhiteNoise (production's collected files) and no
        # front server: Django serves the static files from the source folders, DEBUG on or
        # off (DEBUG is off unless asked for, and the pages need their stylesheet and script).
        django_application = ASGIStaticFilesHandler(django_application)

    # Imported once get_asgi_application has set Django up: it reaches the models.
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
