"""The JSON body of every refusal over HTTP: a status word, a message and what to act on."""

from __future__ import annotations

from typing import Any

from django.conf import settings

from memoryadmin.doors import statuses
from stores.editing import Status


def error_body(status: Status, message: str, **details: Any) -> dict[str, Any]:
    return {"status": str(status), "message": message, **details}


def too_large_body() -> dict[str, Any]:
    """The answer to a body over the upload limit (HTTP 413), for every door."""
    limit = settings.DATA_UPLOAD_MAX_MEMORY_SIZE
    return error_body(
        Status.INVALID,
        f"The request body is larger than {limit} bytes, the limit. Send less at once "
        "(e.g. one record per request).",
        code="too_large",
        max_bytes=limit,
    )


def unauthenticated_body(code: str, message: str) -> dict[str, Any]:
    """The answer (HTTP 401) to a request without a live token; `code` says why."""
    return error_body(statuses.UNAUTHENTICATED_STATUS, message, code=code)
