"""Line-ending bookkeeping: match on LF, write back in the document's own endings."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from itertools import islice

CRLF = "\r\n"
LF = "\n"

_NEWLINE = re.compile(LF)


@dataclass(frozen=True)
class NormalizedText:
    """A text with CRLF folded to LF, able to map offsets back to the original."""

    original: str
    text: str
    crlf_positions: tuple[int, ...]  # offsets in `text` of each LF that was a CRLF

    @classmethod
    def of(cls, original: str) -> NormalizedText:
        if CRLF not in original:
            return cls(original, original, ())
        positions: list[int] = []
        removed = 0
        start = original.find(CRLF)
        while start != -1:
            positions.append(start - removed)
            removed += 1
            start = original.find(CRLF, start + 2)
        return cls(original, original.replace(CRLF, LF), tuple(positions))

    def to_original(self, offset: int) -> int:
        return offset + bisect.bisect_left(self.crlf_positions, offset)


def dominant_line_ending(text: str) -> str:
    crlf = text.count(CRLF)
    return CRLF if crlf and crlf * 2 >= text.count(LF) else LF


def with_line_ending(text: str, ending: str) -> str:
    folded = text.replace(CRLF, LF)
    return folded if ending == LF else folded.replace(LF, CRLF)


def offset_after_lines(text: str, number: int) -> int:
    """The offset where the line after the first `number` lines begins (the end of the text
    when it has no more)."""
    if number <= 0:
        return 0
    # islice walks the matches in C: a text of 100,000 lines costs no Python loop.
    found = next(islice(_NEWLINE.finditer(text), number - 1, None), None)
    return len(text) if found is None else found.end()
