"""Request bodies as JSON, no deeper than MEMORYADMIN["MAX_JSON_DEPTH"] levels, at every door.

The depth is measured on the raw body before it is parsed (stores.services.bounded_json): a
parser pays for depth before it can refuse it."""

from __future__ import annotations

import json
from typing import Any

from stores.engine.validation import too_deep_message, unstorable_string
from stores.services import bounded_json

TOO_DEEP = "too_deep"
NOT_TEXT = "not_text"


class BodyTooDeep(Exception):
    """A body nested past the limit: refused as invalid (400), the limit in `details`."""

    code = TOO_DEEP

    def __init__(self, limit: int) -> None:
        self.message = too_deep_message("The request body", limit)
        super().__init__(self.message)
        self.details = {"max_depth": limit}


class BodyNotText(Exception):
    """A string of the body no text can hold: refused as invalid (400), naming its field."""

    code = NOT_TEXT

    def __init__(self, field: str, problem: str) -> None:
        self.message = f"{field} {problem}."
        super().__init__(self.message)
        self.details = {"field": field}


def check_text(data: Any) -> None:
    """Refuse parsed JSON holding a string no text can hold (a NUL, a lone surrogate)."""
    found = unstorable_string(data)
    if found is not None:
        raise BodyNotText(*found)


def max_json_depth() -> int:
    return bounded_json.max_depth()


def check_depth(raw: bytes | str) -> None:
    """Refuse a raw body nested past the limit, before any parser reads it."""
    try:
        bounded_json.check_nesting(raw, "The request body")
    except bounded_json.JsonTooDeep as refusal:
        raise BodyTooDeep(refusal.limit) from None


def loads_bounded(raw: bytes | str) -> Any:
    """json.loads for a request body: ValueError when it is not JSON, BodyTooDeep."""
    check_depth(raw)
    return json.loads(raw)
