"""Liveness (`/healthz`) and readiness (`/readyz`) probes.

They are answered by the first middleware, before host validation and the HTTPS redirect:
a container or load-balancer probe talks plain HTTP to an address that is not a public
host name. Liveness touches nothing outside the process (a database outage must not get
the web container restarted); readiness checks each dependency and reports each one.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable

from django.conf import settings
from django.db import connections
from django.http import HttpRequest, HttpResponse, JsonResponse

from memoryadmin.celery import app as celery_app
from stores.embeddings import get_backend

logger = logging.getLogger("memoryadmin.health")

LIVENESS_PATHS = frozenset({"/healthz", "/healthz/"})
READINESS_PATHS = frozenset({"/readyz", "/readyz/"})


def check_database() -> str:
    with connections["default"].cursor() as cursor:
        cursor.execute("SELECT 1")
        cursor.fetchone()
    return "ok"


def check_broker() -> str:
    if settings.CELERY_TASK_ALWAYS_EAGER:
        # No broker configured: tasks run inside the request (the embedded default).
        return "eager"
    timeout = settings.MEMORYADMIN["READINESS_TIMEOUT"]
    with celery_app.connection_for_write() as connection:
        connection.ensure_connection(max_retries=1, interval_start=0, timeout=timeout)
    return "ok"


def check_embeddings() -> str:
    backend = get_backend()
    vector = backend.embed_query("readiness probe")
    if len(vector) != backend.dimensions:
        raise ValueError(f"{len(vector)} dimensions instead of {backend.dimensions}")
    return "ok"


READINESS_CHECKS: dict[str, Callable[[], str]] = {
    "database": check_database,
    "broker": check_broker,
    "embeddings": check_embeddings,
}


def readiness() -> tuple[bool, dict[str, dict[str, object]]]:
    """Run every check (one failing does not hide the others) and report each."""
    report: dict[str, dict[str, object]] = {}
    ready = True
    for name, check in READINESS_CHECKS.items():
        started = time.perf_counter()
        try:
            outcome: dict[str, object] = {"status": check()}
        except Exception as error:
            ready = False
            # The class names the failure for the probe; the message (hosts, ports) stays
            # in the operator's log rather than on a public endpoint.
            outcome = {"status": "error", "error": type(error).__name__}
            # A broken database connection is closed when this request finishes (Django's
            # request_finished handler), so the next probe connects afresh.
            logger.warning("readiness: %s unavailable: %s", name, error, extra={"check": name})
        outcome["ms"] = round((time.perf_counter() - started) * 1000, 1)
        report[name] = outcome
    return ready, report


def _answer(body: dict[str, object], status: int) -> HttpResponse:
    response = JsonResponse(body, status=status)
    response["Cache-Control"] = "no-store"
    return response


class HealthCheckMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        if request.method in {"GET", "HEAD"}:
            if request.path in LIVENESS_PATHS:
                return _answer({"status": "ok"}, 200)
            if request.path in READINESS_PATHS:
                ready, checks = readiness()
                return _answer(
                    {"status": "ready" if ready else "unavailable", "checks": checks},
                    200 if ready else 503,
                )
        return self.get_response(request)
