"""The exact-match phrase edit: `(text, old_string, new_string, replace_all)` -> new text."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from stores.editing.errors import (
    LINES_LISTED,
    OCCURRENCES_SHOWN,
    Ambiguous,
    InvalidEdit,
    NoChange,
    NoMatch,
    Occurrence,
    TooLong,
)
from stores.editing.limits import check_batch_size, check_batch_work, check_length
from stores.editing.lines import (
    CRLF,
    LF,
    NormalizedText,
    dominant_line_ending,
    with_line_ending,
)
from stores.editing.nearmiss import find_near_miss
from stores.editing.numbers import is_whole_number
from stores.editing.quotes import CUT, words_after, words_before

# How far around an occurrence its context reaches (about three words each side), and how long
# a match may be before only its ends are shown.
CONTEXT_CHARS = 16
LONG_MATCH = 48


@dataclass(frozen=True)
class PhraseEdit:
    old_string: str
    new_string: str
    replace_all: bool = False
    # How many times old_string must occur; more than 1 replaces them all.
    expected_replacements: int | None = None


@dataclass(frozen=True)
class EditApplied:
    text: str
    replacements: int
    lines: tuple[int, ...]


def apply_edit(
    text: str,
    old_string: str,
    new_string: str,
    *,
    replace_all: bool = False,
    expected_replacements: int | None = None,
    max_length: int | None = None,
) -> EditApplied:
    """Replace the exact phrase `old_string` in `text`.

    CRLF and LF are interchangeable when matching; the document keeps its own
    line endings, and everything outside the replaced spans stays byte for byte.
    A result longer than `max_length` is refused (TooLong) before it is built.

    With `expected_replacements`, old_string must occur exactly that many times (a
    different count is refused as Ambiguous, naming the real one), and all of them are
    replaced; it decides alone, whatever `replace_all` says.
    """
    if expected_replacements is not None and (
        not is_whole_number(expected_replacements) or expected_replacements < 1
    ):
        raise InvalidEdit(
            "expected_replacements must be a whole number of at least 1: how many times "
            "old_string occurs in the text."
        )
    if old_string == new_string:
        raise NoChange("old_string and new_string are identical; nothing to change.")
    if old_string == "":
        if text == "":
            if expected_replacements not in (None, 1):
                raise Ambiguous(
                    f"An empty old_string fills an empty text once, not "
                    f"{expected_replacements} times; send expected_replacements 1 or none.",
                    count=1,
                    lines=(1,),
                    occurrences=(),
                )
            check_length(len(new_string), max_length)
            return EditApplied(text=new_string, replacements=1, lines=(1,))
        # A parameter the agent can correct, as the memory tools' own tests expect (RockBot,
        # OpenHands): `invalid`, not an answer about this text.
        raise InvalidEdit(
            "old_string is empty, and an empty old_string only fills an empty text. Quote "
            "the exact phrase to replace from a full read."
        )

    document = NormalizedText.of(text)
    needle = old_string.replace(CRLF, LF)
    replacement = new_string.replace(CRLF, LF)
    if needle == replacement:
        raise NoChange("old_string and new_string differ only in line endings.")

    # str.count counts the same non-overlapping matches as the find loop, without a list.
    count = document.text.count(needle)
    if not count:
        raise NoMatch(
            "old_string was not found in the current text; re-read the record and quote it "
            "exactly.",
            find_near_miss(document.text, needle),
        )
    if expected_replacements is not None and count != expected_replacements:
        located = _located(document.text, needle)
        listed = "; ".join(occurrence.describe() for occurrence in located)
        more = f"; and {count - len(located)} more" if count > len(located) else ""
        raise Ambiguous(
            f"old_string occurs {count} time{'' if count == 1 else 's'} ({listed}{more}), not "
            f"{expected_replacements} as expected_replacements says. Nothing was replaced: "
            f"re-read the text, then send expected_replacements {count} to replace every "
            "occurrence, or quote more surrounding text to pick fewer.",
            count=count,
            lines=_distinct_lines(document.text, needle),
            occurrences=located,
        )
    if count > 1 and not replace_all and expected_replacements is None:
        located = _located(document.text, needle)
        listed = "; ".join(occurrence.describe() for occurrence in located)
        more = f"; and {count - len(located)} more" if count > len(located) else ""
        raise Ambiguous(
            f"old_string occurs {count} times: {listed}{more}. Quote more of the surrounding "
            "text to make it unique, or set replace_all.",
            count=count,
            lines=_distinct_lines(document.text, needle),
            occurrences=located,
        )

    # The replacement is written in the line ending of the span it replaces, so its two
    # spellings are made once; the result's length is known before anything is joined.
    default_ending = dominant_line_ending(text)
    written = {LF: with_line_ending(replacement, LF)}
    if document.crlf_positions:
        written[CRLF] = with_line_ending(replacement, CRLF)
        length = len(text) + sum(
            len(written[ending]) - (end - begin)
            for begin, end, ending in _spans(text, document, needle, default_ending)
        )
    else:
        # Without a CRLF every span is the needle itself and every ending is LF.
        length = len(text) + count * (len(written[LF]) - len(needle))
    what = "The edit" if count == 1 else f"Replacing all {count} occurrences"
    check_length(length, max_length, what=what)

    pieces: list[str] = []
    cursor = 0
    for begin, end, ending in _spans(text, document, needle, default_ending):
        pieces.append(text[cursor:begin])
        pieces.append(written[ending])
        cursor = end
    pieces.append(text[cursor:])
    return EditApplied(
        text="".join(pieces), replacements=count, lines=_distinct_lines(document.text, needle)
    )


def apply_edits(
    text: str, edits: list[PhraseEdit], *, max_length: int | None = None
) -> EditApplied:
    """Apply several phrase edits in order, all or nothing.

    Each step is checked against `max_length` before it is built, so a batch that would grow
    past the limit stops at the step that crosses it. The batch's work is bounded too: too many
    edits, or too many for the text's length, are refused before the first step, and a batch
    whose steps grew the text, before the step that would read past the bound.
    """
    if not edits:
        raise InvalidEdit("No edits given.")
    check_batch_size(len(edits))
    replacements = 0
    work = 0
    lines: list[int] = []
    for number, edit in enumerate(edits, start=1):
        work += len(text)
        check_batch_work(work + (len(edits) - number) * len(text), len(edits))
        try:
            applied = apply_edit(
                text,
                edit.old_string,
                edit.new_string,
                replace_all=edit.replace_all,
                expected_replacements=edit.expected_replacements,
                max_length=max_length,
            )
        except TooLong as error:
            if len(edits) == 1:
                raise
            raise TooLong(
                f"Edit {number} of {len(edits)}: {error.message}",
                limit=error.limit,
                length=error.length,
            ) from None
        text = applied.text
        replacements += applied.replacements
        lines.extend(applied.lines)
    return EditApplied(text=text, replacements=replacements, lines=tuple(lines))


def _spans(
    text: str, document: NormalizedText, needle: str, default_ending: str
) -> Iterator[tuple[int, int, str]]:
    """Each match of `needle` as (begin, end, line ending) in the original text.

    The span's own line ending decides how the replacement is written; a span without a
    line break takes the document's dominant one.
    """
    for start in _occurrences(document.text, needle):
        begin = document.to_original(start)
        end = document.to_original(start + len(needle))
        if text.find(CRLF, begin, end) != -1:
            ending = CRLF
        elif text.find(LF, begin, end) != -1:
            ending = LF
        else:
            ending = default_ending
        yield begin, end, ending


def _occurrences(haystack: str, needle: str) -> Iterator[int]:
    index = haystack.find(needle)
    while index != -1:
        yield index
        index = haystack.find(needle, index + len(needle))


def _distinct_lines(text: str, needle: str) -> tuple[int, ...]:
    """The line numbers of the first LINES_LISTED lines holding a match, in order."""
    numbers: dict[int, None] = {}
    line = 1
    previous = 0
    for start in _occurrences(text, needle):
        line += text.count(LF, previous, start)
        numbers[line] = None
        if len(numbers) == LINES_LISTED:
            break
        previous = start
    return tuple(numbers)


def _located(text: str, needle: str) -> tuple[Occurrence, ...]:
    """The first OCCURRENCES_SHOWN matches, each with its line, column and the words around it."""
    found: list[Occurrence] = []
    line = 1
    line_start = previous = 0
    for start in _occurrences(text, needle):
        breaks = text.count(LF, previous, start)
        if breaks:
            line += breaks
            line_start = text.rfind(LF, previous, start) + 1
        previous = start
        end = start + len(needle)
        match = needle
        if len(match) > LONG_MATCH:
            match = (
                words_after(match, 0, CONTEXT_CHARS)
                + CUT
                + words_before(match, len(match), CONTEXT_CHARS)
            )
        context = (
            words_before(text, start, CONTEXT_CHARS) + match + words_after(text, end, CONTEXT_CHARS)
        )
        found.append(Occurrence(line=line, column=start - line_start + 1, context=context))
        if len(found) == OCCURRENCES_SHOWN:
            break
    return tuple(found)
