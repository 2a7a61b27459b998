"""A numbered view of a text, line by line, as Anthropic's memory tool shows a file.

The reference implementation in the Anthropic SDK splits the text on LF, so a final line ending
is followed by one more (empty) numbered line, and writes each line as its number right-aligned
to six places, a tab and the line; it reads files in text mode, so a CRLF shows as a plain line
break, as here. The range is 1-based and inclusive, and an end of -1 means the last line.
"""

from __future__ import annotations

from dataclasses import dataclass

from stores.editing.errors import InvalidEdit, NoMatch
from stores.editing.lines import LF, offset_after_lines
from stores.editing.numbers import is_whole_number

CR = "\r"

# Wide enough for 999,999 lines: the SDK's limit, and beyond what any surface's limit allows.
NUMBER_WIDTH = 6


@dataclass(frozen=True)
class NumberedView:
    """Lines `first` to `last` of a text of `total` lines, each numbered, joined by LF."""

    text: str
    first: int
    last: int
    total: int


def view_lines(text: str, start: int = 1, end: int | None = None) -> NumberedView:
    """Lines `start` to `end` of `text`, numbered.

    `end` None or -1 reads to the last line, and an end past it stops there (as the SDK's
    slicing does); a start outside the text, or an end before the start, is refused naming the
    range the text has.
    """
    total = text.count(LF) + 1
    last = total if end is None or end == -1 else end
    for name, value in (("start", start), ("end", last)):
        if not is_whole_number(value):
            raise InvalidEdit(f"The view's {name} must be a whole number.")
    # Lines the text does not have are, like a phrase it does not hold, a miss.
    if not 1 <= start <= total:
        raise NoMatch(
            f"The view starts at line {start}, but the text has {total} line"
            f"{'' if total == 1 else 's'}: start within [1, {total}]."
        )
    if last < start:
        raise NoMatch(
            f"The view ends at line {last}, before its start {start}: give an end of at least "
            f"{start}, or -1 for the last line ({total})."
        )
    last = min(last, total)
    # Only the lines shown are split out: a short range of a long text stays cheap.
    begin = offset_after_lines(text, start - 1)
    stop = offset_after_lines(text, last)
    shown = text[begin:stop].split(LF)
    if last < total:
        shown.pop()  # the empty piece after the last shown line's own LF
    numbered = [
        f"{number:>{NUMBER_WIDTH}}\t{_shown(line, followed=number < total)}"
        for number, line in enumerate(shown, start=start)
    ]
    return NumberedView(text=LF.join(numbered), first=start, last=last, total=total)


def _shown(line: str, *, followed: bool) -> str:
    """A line followed by LF may end in the CR of a CRLF, which a text-mode read never shows."""
    return line[:-1] if followed and line.endswith(CR) else line
