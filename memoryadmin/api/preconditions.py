"""The version precondition of a write: If-Match header or `expected_version` in the body."""

from __future__ import annotations

import re
from dataclasses import dataclass

from rest_framework.request import Request

from memoryadmin.api.exceptions import ApiError
from stores.editing import Status

_ETAG = re.compile(r'^(?:W/)?"?(\d+)"?$')


@dataclass(frozen=True)
class Precondition:
    expected_version: int | None
    # Where it came from decides the HTTP code of a failed one: 412 for If-Match, 409 for body.
    from_header: bool


def etag(version: int) -> str:
    return f'"{version}"'


def precondition(request: Request, body_version: int | None) -> Precondition:
    header = request.headers.get("If-Match")
    # A header sent empty is a malformed precondition, not an absent one.
    header_version = None if header is None else _parse_if_match(header.strip())
    if header_version is not None and body_version is not None and header_version != body_version:
        # At most one of two different versions can be the current one.
        raise ApiError(
            Status.CONFLICT,
            f"If-Match names version {header_version} but expected_version is {body_version}; "
            "send one of them, the version you read.",
        )
    if header_version is not None:
        return Precondition(header_version, from_header=True)
    return Precondition(body_version, from_header=False)


def _parse_if_match(header: str) -> int | None:
    if not header:
        raise ApiError(
            Status.INVALID,
            'If-Match is empty: send one ETag as returned by a read, such as "3", or leave '
            "the header out and send expected_version.",
        )
    if header == "*":
        # "Any current version": the record must exist, which every write checks anyway.
        return None
    match = _ETAG.match(header)
    if match is None:
        raise ApiError(
            Status.INVALID,
            f'If-Match must be one ETag as returned by a read, such as "3"; got {header!r}.',
        )
    return int(match.group(1))
