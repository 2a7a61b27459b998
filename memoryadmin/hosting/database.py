"""A database that cannot be reached answers 503 (try again), not 500 (a bug).

The connection is re-established by the next request (CONN_HEALTH_CHECKS), so the
service recovers by itself once the database is back; no restart is needed.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Callable

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.views import defaults

logger = logging.getLogger("memoryadmin.database")

DATABASE_ERRORS = (OperationalError, InterfaceError)
RETRY_AFTER_SECONDS = 5
# The API's transport-level answers carry a `status` and a `code` (see doors/statuses.py).
API_UNAVAILABLE_STATUS = "unavailable"

UNAVAILABLE_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>memoryadmin: unavailable</title></head>
<body><h1>memoryadmin is unavailable for a moment</h1>
<p>The database cannot be reached. Nothing you saved was lost; try again in a few seconds.</p>
</body></html>
"""


def unavailable_response(request: HttpRequest) -> HttpResponse:
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse(
            {
                "status": API_UNAVAILABLE_STATUS,
                "code": "database_unavailable",
                "message": "The database cannot be reached; retry shortly.",
                "retry_after": RETRY_AFTER_SECONDS,
            },
            status=503,
        )
    else:
        response = HttpResponse(UNAVAILABLE_PAGE, status=503, content_type="text/html")
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    return response


class DatabaseUnavailableMiddleware:
    """Turns a database outage raised by a view into 503."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_exception(self, request: HttpRequest, exception: Exception) -> HttpResponse | None:
        if not isinstance(exception, DATABASE_ERRORS):
            return None
        logger.error("database unavailable: %s", exception, extra={"path": request.path})
        return unavailable_response(request)


def server_error(request: HttpRequest) -> HttpResponse:
    """handler500: an outage met outside a view (e.g. saving the session) is a 503 too."""
    error = sys.exc_info()[1]
    if isinstance(error, DATABASE_ERRORS):
        return unavailable_response(request)
    return defaults.server_error(request)
