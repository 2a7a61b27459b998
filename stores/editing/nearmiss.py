"""Finding the text closest to an old_string that did not match, and saying why."""

from __future__ import annotations

import re
from collections.abc import Callable
from difflib import SequenceMatcher

from stores.editing.errors import NearMiss

_CURLY_QUOTES = str.maketrans(
    {
        "\u2018": "'",
        "\u2019": "'",
        "\u201a": "'",
        "\u201b": "'",
        "\u201c": '"',
        "\u201d": '"',
        "\u201e": '"',
        "\u201f": '"',
    }
)
_NBSP = str.maketrans({"\u00a0": " ", "\u202f": " ", "\u2007": " "})
_SPACE_RUN = re.compile(r"[ \t]+")
_TRAILING_SPACE = re.compile(r"[ \t]+$", re.MULTILINE)

# Whole-text transforms that keep the number of lines, so a hit maps back to a line.
_INVISIBLE: tuple[tuple[str, Callable[[str], str]], ...] = (
    ("a non-breaking space differs from a plain space", lambda s: s.translate(_NBSP)),
    ("curly and straight quotes differ", lambda s: s.translate(_CURLY_QUOTES)),
    ("tabs and spaces (or runs of spaces) differ", lambda s: _SPACE_RUN.sub(" ", s)),
    ("trailing whitespace at the end of a line differs", lambda s: _TRAILING_SPACE.sub("", s)),
    ("only letter case differs", str.casefold),
)

SIMILARITY_FLOOR = 0.5
_MAX_WINDOWS = 4000
_HINT_CHARS = 200


def find_near_miss(text: str, needle: str) -> NearMiss | None:
    """The best candidate for `needle` in `text` (both with LF line endings), or None."""
    if not text or not needle:
        return None
    return _invisible_difference(text, needle) or _most_similar(text, needle)


def _invisible_difference(text: str, needle: str) -> NearMiss | None:
    for explanation, transform in _INVISIBLE:
        hit = _find_transformed(text, needle, transform)
        if hit is not None:
            return NearMiss(
                line=hit, text=_line_text(text, hit), similarity=1.0, explanation=explanation
            )

    def everything(s: str) -> str:
        for _, transform in _INVISIBLE:
            s = transform(s)
        return s

    hit = _find_transformed(text, needle, everything)
    if hit is None:
        return None
    return NearMiss(
        line=hit,
        text=_line_text(text, hit),
        similarity=1.0,
        explanation="only invisible characters (whitespace, quotes, case) differ",
    )


def _find_transformed(text: str, needle: str, transform: Callable[[str], str]) -> int | None:
    transformed_needle = transform(needle)
    if not transformed_needle.strip():
        return None
    transformed_text = transform(text)
    index = transformed_text.find(transformed_needle)
    if index == -1:
        return None
    return transformed_text.count("\n", 0, index) + 1


def _line_text(text: str, line: int) -> str:
    lines = text.split("\n")
    return _clip(lines[line - 1] if 0 < line <= len(lines) else "")


def _clip(snippet: str) -> str:
    return snippet if len(snippet) <= _HINT_CHARS else snippet[:_HINT_CHARS] + "…"


def _most_similar(text: str, needle: str) -> NearMiss | None:
    lines = text.split("\n")
    needle_lines = needle.split("\n")
    span = len(needle_lines)
    best: tuple[float, int, str] | None = None
    matcher = SequenceMatcher(autojunk=False)
    matcher.set_seq2(needle)

    def consider(candidate: str, line: int) -> None:
        nonlocal best
        matcher.set_seq1(candidate)
        floor = best[0] if best else SIMILARITY_FLOOR
        if matcher.real_quick_ratio() < floor or matcher.quick_ratio() < floor:
            return
        ratio = matcher.ratio()
        if ratio >= floor and (best is None or ratio > best[0]):
            best = (ratio, line, candidate)

    if span > 1:
        step = max(1, (len(lines) - span + 1) // _MAX_WINDOWS)
        for first in range(0, max(1, len(lines) - span + 1), step):
            consider("\n".join(lines[first : first + span]), first + 1)
    else:
        width = len(needle)
        budget = _MAX_WINDOWS
        for number, line in enumerate(lines, start=1):
            if budget <= 0:
                break
            if len(line) <= width * 2:
                consider(line, number)
                budget -= 1
                continue
            step = max(1, width // 2, len(line) // budget)
            for start in range(0, len(line) - width + 1, step):
                consider(line[start : start + width], number)
                budget -= 1
    if best is None:
        return None
    ratio, line, candidate = best
    return NearMiss(line=line, text=_clip(candidate), similarity=round(ratio, 3))
