"""Request bodies as JSON, no deeper than MEMORYADMIN["MAX_JSON_DEPTH"] levels, at every door."""

from __future__ import annotations

import json
from typing import Any

from django.conf import settings

from stores.services.validation import nesting_depth, too_deep_message, unstorable_string

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
    return settings.MEMORYADMIN["MAX_JSON_DEPTH"]


def check_depth(data: Any) -> None:
    """Refuse parsed JSON nested past the limit: deeper bodies cost recursion downstream."""
    limit = max_json_depth()
    if nesting_depth(data, limit) > limit:
        raise BodyTooDeep(limit)


def loads_bounded(raw: bytes | str) -> Any:
    """json.loads for a request body: ValueError when it is not JSON, BodyTooDeep.

    Python's parser recurses once per level and raises RecursionError near 1,000 levels,
    which was a 500; that is a body too deep as well.
    """
    try:
        data = json.loads(raw)
    except RecursionError:
        raise BodyTooDeep(max_json_depth()) from None
    check_depth(data)
    return data
