"""Idempotency-Key: a retried write is applied once and answered with the first answer."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
from dataclasses import dataclass
from typing import Any

from django.db import IntegrityError, transaction
from django.utils import timezone
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.exceptions import ApiError
from stores.editing import Status
from stores.models import IdempotentRequest

HEADER = "Idempotency-Key"
REPLAYED_HEADER = "Idempotent-Replayed"
MAX_KEY_LENGTH = 255
# A key is remembered this long; an older one is forgotten and may be used again.
KEY_LIFETIME = dt.timedelta(hours=24)
KEPT_HEADERS = ("ETag", "Location")
# Fields of an answer shown once and never kept (a webhook's signing secret): the stored
# answer a retry gets has them removed and says so, for the table is no place for a secret.
SHOWN_ONCE = ("secret",)
WITHHELD_NOTE = (
    "This repeats the first answer to this {header}, without its {fields}: {verb} shown only "
    "once, in that first answer, and not kept. If it was lost, delete what was added and add "
    "it again."
)


@dataclass(frozen=True)
class Reservation:
    row_id: int


def fingerprint(request: Request) -> str:
    """What makes two requests "the same": method, path with query, If-Match and body."""
    try:
        body = json.dumps(request.data, sort_keys=True, default=str)
    except TypeError:
        body = repr(request.data)
    parts = [request.method, request.get_full_path(), request.headers.get("If-Match", ""), body]
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


def begin(request: Request, owner: str) -> Reservation | Response | None:
    """Reserve the request's key, or the stored answer of its first attempt.

    None when the request carries no key.
    """
    key = (request.headers.get(HEADER) or "").strip()
    if not key:
        return None
    if len(key) > MAX_KEY_LENGTH:
        raise ApiError(Status.INVALID, f"{HEADER} is at most {MAX_KEY_LENGTH} characters.")
    request_print = fingerprint(request)
    IdempotentRequest.objects.filter(
        owner=owner, key=key, created_at__lt=timezone.now() - KEY_LIFETIME
    ).delete()
    try:
        with transaction.atomic():
            row = IdempotentRequest.objects.create(owner=owner, key=key, fingerprint=request_print)
        return Reservation(row.pk)
    except IntegrityError:
        pass
    first = IdempotentRequest.objects.filter(owner=owner, key=key).first()
    if first is None:  # expired and deleted between the two statements: treat as new
        return begin(request, owner)
    if first.fingerprint != request_print:
        raise ApiError(
            Status.CONFLICT,
            f"This {HEADER} was already used for a different request; use a new key for a "
            "new write.",
        )
    if first.status_code == IdempotentRequest.IN_PROGRESS:
        raise ApiError(
            Status.CONFLICT,
            f"The first request with this {HEADER} is still running; retry in a moment.",
        )
    response = Response(first.body, status=first.status_code, headers=first.headers)
    response[REPLAYED_HEADER] = "true"
    return response


def finish(reservation: Reservation, response: Response) -> None:
    """Keep the answer for retries; a server error frees the key so a retry runs again."""
    if response.status_code >= 500 or not isinstance(response.data, dict):
        release(reservation)
        return
    headers = {name: response[name] for name in KEPT_HEADERS if response.has_header(name)}
    IdempotentRequest.objects.filter(pk=reservation.row_id).update(
        status_code=response.status_code,
        body=_json_ready(_without_secrets(response.data)),
        headers=headers,
    )


def _without_secrets(body: dict[str, Any]) -> dict[str, Any]:
    """The answer with its shown-once fields removed, its message saying where they went."""
    withheld = [name for name in SHOWN_ONCE if name in body]
    if not withheld:
        return body
    kept = {name: value for name, value in body.items() if name not in withheld}
    note = WITHHELD_NOTE.format(
        header=HEADER,
        fields=" and ".join(withheld),
        verb="they were" if len(withheld) > 1 else "it was",
    )
    kept["message"] = f"{kept['message']} {note}" if kept.get("message") else note
    return kept


def release(reservation: Reservation) -> None:
    IdempotentRequest.objects.filter(pk=reservation.row_id).delete()


def _json_ready(data: Any) -> Any:
    return _storable(json.loads(json.dumps(data, default=str)))


def _storable(value: Any) -> Any:
    """PostgreSQL's jsonb holds no NUL and no unpaired surrogate; a refusal that quotes them
    (an unknown field named with one) is kept with U+FFFD in their place, not a 500."""
    if isinstance(value, str):
        return "".join(
            "\ufffd" if character == "\x00" or "\ud800" <= character <= "\udfff" else character
            for character in value
        )
    if isinstance(value, dict):
        return {_storable(key): _storable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_storable(item) for item in value]
    return value
