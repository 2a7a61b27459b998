"""Request ids: taken from X-Request-ID (set by a proxy or the client) or made here.

The id is echoed in the response, so a client reporting a problem can quote it, and every
log line written while the request runs carries it (see memoryadmin.hosting.logs).
"""

from __future__ import annotations

import logging
import random
import re
import time
from collections.abc import Callable
from contextvars import ContextVar

from django.http import HttpRequest, HttpResponse

REQUEST_ID_HEADER = "X-Request-ID"
# A proxy's id is kept if it looks like an id; anything else (too long, spaces, control
# characters that could forge log lines) is replaced.
VALID_REQUEST_ID = re.compile(r"[A-Za-z0-9._:\-]{1,128}")
# Probes hit these every few seconds; logging each would bury the real traffic.
UNLOGGED_PATHS = frozenset({"/healthz", "/healthz/", "/readyz", "/readyz/"})

_request_id: ContextVar[str | None] = ContextVar("memoryadmin_request_id", default=None)
logger = logging.getLogger("memoryadmin.requests")


def current_request_id() -> str | None:
    return _request_id.get()


def new_request_id() -> str:
    """32 hex digits, as a uuid4's were. An id needs to be unique, not unguessable: Python's
    own generator (reseeded in each forked worker) makes it without a system call, which
    lets another thread take the interpreter (uuid4 reads os.urandom)."""
    return f"{random.getrandbits(128):032x}"


class RequestIdMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        incoming = request.headers.get(REQUEST_ID_HEADER, "")
        request_id = incoming if VALID_REQUEST_ID.fullmatch(incoming) else new_request_id()
        request.request_id = request_id  # type: ignore[attr-defined]
        token = _request_id.set(request_id)
        started = time.perf_counter()
        try:
            response = self.get_response(request)
            response[REQUEST_ID_HEADER] = request_id
            if request.path not in UNLOGGED_PATHS:
                logger.info(
                    "%s %s %s",
                    request.method,
                    request.path,
                    response.status_code,
                    extra={
                        "method": request.method,
                        "path": request.path,
                        "http_status": response.status_code,
                        "duration_ms": round((time.perf_counter() - started) * 1000, 1),
                    },
                )
            return response
        finally:
            _request_id.reset(token)
