"""Inserting whole lines: at a line number (as Anthropic's memory tool and OpenHands insert), or
before the first line (prepend). Everything else in the text stays byte for byte."""

from __future__ import annotations

from stores.editing.errors import InvalidEdit, NoMatch
from stores.editing.limits import check_length
from stores.editing.lines import (
    CRLF,
    LF,
    dominant_line_ending,
    offset_after_lines,
    with_line_ending,
)
from stores.editing.numbers import is_whole_number


def line_count(text: str) -> int:
    """The lines of `text` an insert counts: a final line ending starts no further line, and an
    empty text has none (what Python's splitlines() counts, for LF and CRLF texts)."""
    if not text:
        return 0
    return text.count(LF) + (0 if text.endswith(LF) else 1)


def insert_lines(
    text: str, insert_line: int, content: str, *, max_length: int | None = None
) -> str:
    """Insert `content` as whole lines after line `insert_line` (0: before the first line).

    `content` is written in the document's own line ending (its dominant one; LF for an empty
    text); one final line ending of `content` is optional, so "x" and "x\n" insert the same
    line, and an empty `content` inserts one empty line. As the Anthropic SDK's insert does,
    the result ends with a line ending: a text that lacked a final one gets it.
    """
    lines = line_count(text)
    if not is_whole_number(insert_line):
        raise InvalidEdit(f"insert_line must be a whole number between 0 and {lines}.")
    if not 0 <= insert_line <= lines:
        # A line the text does not have is, like a phrase it does not hold, a miss.
        raise NoMatch(
            f"insert_line {insert_line} is outside the text, which has {lines} line"
            f"{'' if lines == 1 else 's'}: it must be within [0, {lines}] (0 inserts before "
            f"the first line, {lines} after the last)."
        )
    ending = dominant_line_ending(text) if text else LF
    addition = with_line_ending(_without_final_ending(content), ending) + ending
    at = offset_after_lines(text, insert_line)
    unended = bool(text) and not text.endswith(LF)
    if unended and at == len(text):
        addition = ending + addition  # after a last line that had no line ending
    closing = ending if unended and at < len(text) else ""
    check_length(len(text) + len(addition) + len(closing), max_length)
    return text[:at] + addition + text[at:] + closing


def prepend(text: str, content: str, *, max_length: int | None = None) -> str:
    """Insert `content` as whole lines before the first line (like append, not empty)."""
    if not content.strip():
        raise InvalidEdit("content to prepend is empty.")
    return insert_lines(text, 0, content, max_length=max_length)


def _without_final_ending(content: str) -> str:
    if content.endswith(CRLF):
        return content[: -len(CRLF)]
    if content.endswith(LF):
        return content[:-1]
    return content
