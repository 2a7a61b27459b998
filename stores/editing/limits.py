"""The size limit of a text, checked on a result's computed length before the result is built.

Every op computes the length its result would have from the lengths and match counts of its
inputs, so a small request can never make the engine build a text far larger than the limit.
"""

from __future__ import annotations

from stores.editing.errors import TooLong


def check_length(length: int, max_length: int | None, *, what: str = "The edit") -> None:
    """Refuse when `length` is over `max_length` (None: no limit)."""
    if max_length is not None and length > max_length:
        raise TooLong(
            f"{what} would make the text {length} characters; it may hold at most "
            f"{max_length}. Nothing was written: shorten the new text, or change fewer places.",
            limit=max_length,
            length=length,
        )
