"""The JSON body of every refusal over HTTP: a status word, a message and what to act on."""

from __future__ import annotations

import re
from typing import Any

from django.conf import settings

from memoryadmin.doors import statuses
from stores.editing import Status
from stores.editing.status import SUCCESS_STATUSES


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


# A refusal's sentence says what was wrong and where; a value it quotes from the request is
# cut to its first characters (a 1 MB id came back whole in "No memory record …").
ECHOED_CHARS = 40
_LONG_RUN = re.compile(rf"\S{{{2 * ECHOED_CHARS},}}")
MAX_MESSAGE_CHARS = 1000
SUCCESS_WORDS = frozenset(str(status) for status in SUCCESS_STATUSES)


def bounded_message(text: str) -> str:
    """`text` with every long run of it (a value as sent) cut, and at most MAX_MESSAGE_CHARS."""
    text = _LONG_RUN.sub(
        lambda run: f"{run[0][:ECHOED_CHARS]}… ({len(run[0]):,} characters, not repeated)", text
    )
    if len(text) <= MAX_MESSAGE_CHARS:
        return text
    return f"{text[:MAX_MESSAGE_CHARS]}… ({len(text):,} characters, the rest not repeated)"


def _bounded(value: Any) -> Any:
    if isinstance(value, str):
        return bounded_message(value)
    if isinstance(value, dict):
        return {key: _bounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_bounded(item) for item in value]
    return value


def bounded_refusal(answer: Any) -> Any:
    """A refusal's `message` and `errors` with what they quote of the request bounded; any
    other answer as it is (a record's text is not a refusal's echo)."""
    if not isinstance(answer, dict) or answer.get("status") in SUCCESS_WORDS:
        return answer
    return {
        key: _bounded(value) if key in ("message", "errors") else value
        for key, value in answer.items()
    }
