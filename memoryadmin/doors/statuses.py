"""The one table from status words to HTTP codes, for every answer of every door over HTTP."""

from __future__ import annotations

from stores.editing import Status

HTTP_CODES: dict[Status, int] = {
    Status.OK: 200,
    Status.UPDATED: 200,
    Status.CREATED: 201,
    Status.DELETED: 200,
    Status.INVALIDATED: 200,
    Status.REVERTED: 200,
    Status.APPROVED: 200,
    Status.INVALID: 400,
    Status.FORBIDDEN: 403,
    Status.DISABLED: 403,
    Status.PRIVACY_RESTRICTED: 403,
    Status.NOT_FOUND: 404,
    Status.CONFLICT: 409,
    Status.NOT_EDITABLE: 409,
    Status.NO_MATCH: 422,
    Status.AMBIGUOUS: 422,
    Status.NO_CHANGE: 422,
    Status.SUSPECTED_TRUNCATION: 422,
    Status.SENSITIVE_DATA: 422,
    Status.PRECONDITION_REQUIRED: 428,
}

# A conflict against the version sent in an If-Match header is HTTP's own precondition
# failure; against `expected_version` in the body it is a plain 409.
IF_MATCH_CONFLICT = 412
# Transport-level answers that have no status word of their own; their bodies carry
# `status` (below) and a `code` that says exactly what happened.
UNAUTHENTICATED = 401
RATE_LIMITED = 429
# A body over DATA_UPLOAD_MAX_MEMORY_SIZE: `invalid` like any bad request, but with HTTP's own
# code for it, so a client (or a proxy's log) tells it from a malformed body. This case only.
REQUEST_TOO_LARGE = 413
RATE_LIMITED_STATUS = Status.FORBIDDEN
UNAUTHENTICATED_STATUS = Status.FORBIDDEN


def http_code(status: Status, *, precondition_from_header: bool = False) -> int:
    if status is Status.CONFLICT and precondition_from_header:
        return IF_MATCH_CONFLICT
    return HTTP_CODES[status]
