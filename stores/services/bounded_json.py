"""JSON whose nesting is measured on the raw text before any parser reads it, for every JSON
the app takes in (request bodies, tools, MCP, imports of every format, form fields).

Parsers pay for depth before they can refuse it: Python's json recurses once per level, and
ijson keeps the whole path to the current value at every level, so a 200 KiB PAM upload of
100,000 `[` then 100,000 `]` grew ijson past 21 GB. The scan below keeps one counter: a regular
expression (possessive, so it never backtracks) steps over everything that is not a bracket
outside a string, and Python sees only the brackets, stopping at the first level past the
limit or when the first value closes. Its memory is constant and its time linear in the text.
"""

from __future__ import annotations

import json
import mmap
import re
from pathlib import Path
from typing import Any

from django.conf import settings

from stores.engine.validation import too_deep_message

# Everything up to the next bracket that is not inside a string, then that bracket.
_NEXT_BRACKET = r'(?:[^"\[\]{}]++|"(?:[^"\\]++|\\.)*+")*+([\[\]{}])'
_NEXT_BRACKET_BYTES = re.compile(_NEXT_BRACKET.encode("ascii"), re.DOTALL)
_NEXT_BRACKET_TEXT = re.compile(_NEXT_BRACKET, re.DOTALL)
_OPENERS = frozenset(("[", "{", ord("["), ord("{")))


class JsonTooDeep(Exception):
    """JSON nested past the limit, refused before it was parsed."""

    def __init__(self, what: str, limit: int) -> None:
        self.limit = limit
        self.message = too_deep_message(what, limit)
        # For a report that names the place first ("memories.json:4 nests ...").
        self.reason = f"nests objects and arrays more than {limit} levels deep"
        super().__init__(self.message)


def max_depth() -> int:
    return int(settings.MEMORYADMIN["MAX_JSON_DEPTH"])


def check_nesting(
    raw: bytes | bytearray | memoryview | mmap.mmap | str,
    what: str = "The JSON",
    limit: int | None = None,
) -> None:
    """Raise JsonTooDeep when the first JSON value of `raw` nests past `limit` levels.

    Text that is not JSON is let through (its parser says what is wrong with it); brackets
    inside strings, escaped quotes included, do not count.
    """
    limit = max_depth() if limit is None else limit
    pattern = _NEXT_BRACKET_TEXT if isinstance(raw, str) else _NEXT_BRACKET_BYTES
    depth = 0
    position = 0
    while (found := pattern.match(raw, position)) is not None:  # type: ignore[arg-type]
        position = found.end()
        if raw[position - 1] in _OPENERS:
            depth += 1
            if depth > limit:
                raise JsonTooDeep(what, limit)
        else:
            depth -= 1
            if depth <= 0:
                return


def loads(raw: bytes | str, what: str = "The JSON") -> Any:
    """json.loads, once the nesting is known to be within the limit (JsonTooDeep if not)."""
    check_nesting(raw, what)
    return json.loads(raw)


def check_file(path: Path, what: str | None = None) -> None:
    """check_nesting for a file, read through a memory map rather than into memory."""
    with path.open("rb") as handle:
        if path.stat().st_size == 0:
            return
        with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as mapped:
            check_nesting(mapped, what or path.name)
