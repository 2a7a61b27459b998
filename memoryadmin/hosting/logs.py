"""Log records as one JSON object per line, each with its request id and never memory text.

python-json-logger rather than structlog: the edit service and Django already log through
the standard library with `extra=` fields, and a formatter turns exactly those into JSON
keys; structlog would mean a second logging API and a bridge for the records it did not make.
"""

from __future__ import annotations

import logging
from typing import Any

from pythonjsonlogger.json import JsonFormatter as BaseJsonFormatter

from memoryadmin.hosting.requests import current_request_id

# Fields that could hold memory text (service arguments, API bodies). They are replaced by
# their length unless the logger is at DEBUG, where the operator asked for them.
TEXT_FIELDS = frozenset(
    {
        "text",
        "content",
        "value",
        "summary",
        "old_string",
        "new_string",
        "new_text",
        "rule",
        "new_rule",
        "diff",
        "body",
    }
)


class RequestIdFilter(logging.Filter):
    """Stamp the id of the request (or task) being served on every record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            record.request_id = current_request_id() or "-"
        return True


class ClientErrorFilter(logging.Filter):
    """Drop django.request's record of a 4xx answer; keep its 5xx errors.

    A refusal is an answer, not a problem of the server: the request log
    (memoryadmin.requests) has it with its status, at INFO.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        status = getattr(record, "status_code", None)
        return not (isinstance(status, int) and 400 <= status < 500)


class JsonFormatter(BaseJsonFormatter):
    """`time`, `level`, `logger`, `message`, `request_id`, then the record's own fields.

    Redaction happens here, on the output, not on the record: other handlers (a test's
    capture, a DEBUG file) see the record as it was logged.
    """

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("rename_fields", {"levelname": "level", "name": "logger"})
        kwargs.setdefault("timestamp", "time")
        super().__init__(*args, **kwargs)

    def process_log_record(self, log_data: dict[str, Any]) -> dict[str, Any]:
        log_data.pop("asctime", None)
        if log_data.get("request_id") == "-":
            del log_data["request_id"]
        if not logging.getLogger(str(log_data.get("logger", ""))).isEnabledFor(logging.DEBUG):
            for name in TEXT_FIELDS.intersection(log_data):
                value = log_data[name]
                if isinstance(value, str):
                    log_data[name] = f"<{len(value)} characters, not logged>"
                elif value is not None:
                    log_data[name] = "<not logged>"
        return log_data
