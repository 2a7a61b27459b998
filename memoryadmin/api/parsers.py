"""Request bodies as JSON in DRF, no deeper than the doors' limit (`memoryadmin.doors.bodies`)."""

from __future__ import annotations

import io
from typing import Any

from rest_framework.exceptions import ParseError
from rest_framework.parsers import JSONParser

from memoryadmin.doors import bodies


class BodyTooDeep(ParseError):
    """A body nested past the limit: refused as invalid (400), the limit in `max_depth`."""

    default_code = bodies.TOO_DEEP

    def __init__(self, refusal: bodies.BodyTooDeep) -> None:
        super().__init__(refusal.message)
        self.details = refusal.details


class BodyNotText(ParseError):
    """A body holding a string no text can hold: refused as invalid (400), naming the field."""

    default_code = bodies.NOT_TEXT

    def __init__(self, refusal: bodies.BodyNotText) -> None:
        super().__init__(refusal.message)
        self.details = refusal.details


class BoundedJSONParser(JSONParser):
    """DRF's JSON parser, refusing a body nested past the limit, or holding a NUL or a lone
    surrogate in any string (an id, a name, a filter as much as a text), as invalid (400)."""

    def parse(self, stream, media_type=None, parser_context=None) -> Any:
        # DRF's parser reads the whole body anyway; reading it first lets its depth be
        # measured before json recurses into it.
        raw = stream.read()
        try:
            bodies.check_depth(raw)
        except bodies.BodyTooDeep as refusal:
            raise BodyTooDeep(refusal) from None
        data = super().parse(io.BytesIO(raw), media_type, parser_context)
        try:
            bodies.check_text(data)
        except bodies.BodyNotText as refusal:
            raise BodyNotText(refusal) from None
        return data
