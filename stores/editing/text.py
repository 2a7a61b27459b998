"""The exact-match phrase edit: `(text, old_string, new_string, replace_all)` -> new text."""

from __future__ import annotations

from dataclasses import dataclass

from stores.editing.errors import Ambiguous, InvalidEdit, NoChange, NoMatch
from stores.editing.lines import (
    CRLF,
    LF,
    NormalizedText,
    dominant_line_ending,
    with_line_ending,
)
from stores.editing.nearmiss import find_near_miss


@dataclass(frozen=True)
class PhraseEdit:
    old_string: str
    new_string: str
    replace_all: bool = False


@dataclass(frozen=True)
class EditApplied:
    text: str
    replacements: int
    lines: tuple[int, ...]


def apply_edit(
    text: str, old_string: str, new_string: str, *, replace_all: bool = False
) -> EditApplied:
    """Replace the exact phrase `old_string` in `text`.

    CRLF and LF are interchangeable when matching; the document keeps its own
    line endings, and everything outside the replaced spans stays byte for byte.
    """
    if old_string == new_string:
        raise NoChange("old_string and new_string are identical; nothing to change.")
    if old_string == "":
        if text == "":
            return EditApplied(text=new_string, replacements=1, lines=(1,))
        raise InvalidEdit(
            "old_string is empty. Quote the exact phrase to replace; an empty old_string "
            "only inserts into an empty text."
        )

    document = NormalizedText.of(text)
    needle = old_string.replace(CRLF, LF)
    replacement = new_string.replace(CRLF, LF)
    if needle == replacement:
        raise NoChange("old_string and new_string differ only in line endings.")

    starts = _occurrences(document.text, needle)
    if not starts:
        raise NoMatch(
            "old_string was not found in the current text; re-read the record and quote it "
            "exactly.",
            find_near_miss(document.text, needle),
        )
    lines = tuple(dict.fromkeys(_line_numbers(document.text, starts)))
    if len(starts) > 1 and not replace_all:
        raise Ambiguous(
            f"old_string occurs {len(starts)} times (lines {', '.join(map(str, lines))}); "
            "quote more surrounding text to make it unique, or set replace_all.",
            count=len(starts),
            lines=lines,
        )

    default_ending = dominant_line_ending(text)
    pieces: list[str] = []
    cursor = 0
    for start in starts:
        begin = document.to_original(start)
        end = document.to_original(start + len(needle))
        span = text[begin:end]
        ending = CRLF if CRLF in span else LF if LF in span else default_ending
        pieces.append(text[cursor:begin])
        pieces.append(with_line_ending(replacement, ending))
        cursor = end
    pieces.append(text[cursor:])
    return EditApplied(text="".join(pieces), replacements=len(starts), lines=lines)


def apply_edits(text: str, edits: list[PhraseEdit]) -> EditApplied:
    """Apply several phrase edits in order, all or nothing."""
    if not edits:
        raise InvalidEdit("No edits given.")
    replacements = 0
    lines: list[int] = []
    for edit in edits:
        applied = apply_edit(text, edit.old_string, edit.new_string, replace_all=edit.replace_all)
        text = applied.text
        replacements += applied.replacements
        lines.extend(applied.lines)
    return EditApplied(text=text, replacements=replacements, lines=tuple(lines))


def _occurrences(haystack: str, needle: str) -> list[int]:
    starts: list[int] = []
    index = haystack.find(needle)
    while index != -1:
        starts.append(index)
        index = haystack.find(needle, index + len(needle))
    return starts


def _line_numbers(text: str, starts: list[int]) -> list[int]:
    numbers: list[int] = []
    line = 1
    previous = 0
    for start in starts:
        line += text.count(LF, previous, start)
        numbers.append(line)
        previous = start
    return numbers


def looks_truncated(current: str, replacement: str) -> bool:
    """A replacement that is a strict prefix of the current text, or a preview cut with '…'."""
    if len(replacement) < len(current) and current.startswith(replacement):
        return True
    stem = replacement.rstrip()
    for marker in ("…", "..."):
        if stem.endswith(marker):
            stem = stem[: -len(marker)].rstrip()
            return bool(stem) and current.startswith(stem) and replacement != current
    return False
