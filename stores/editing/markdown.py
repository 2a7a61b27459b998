"""Line structure of a markdown document: ATX headings outside fenced code, HTML comments."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import NamedTuple

_HEADING = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class Line(NamedTuple):
    # A named tuple, not a frozen dataclass: a rules document of 125,000 lines makes as many,
    # and a named tuple is made in half the time.
    number: int  # 1-based
    start: int  # offset of the first character
    end: int  # offset after the line ending
    content: str  # without its line ending
    kind: str  # "heading" | "code" | "comment" | "blank" | "text"
    heading_level: int = 0
    heading_title: str = ""


def scan(text: str) -> Iterator[Line]:
    fence: str | None = None
    in_comment = False
    offset = 0
    for number, raw in enumerate(text.splitlines(keepends=True), start=1):
        content = raw.rstrip("\r\n")
        start, offset = offset, offset + len(raw)
        if fence is not None:
            if content.strip().startswith(fence):
                fence = None
            yield Line(number, start, offset, content, "code")
            continue
        if in_comment:
            in_comment = "-->" not in content
            yield Line(number, start, offset, content, "comment")
            continue
        stripped = content.strip()
        # Only a line whose first character opens a fence, or a heading, can be one.
        lead = stripped[:1]
        fence_match = _FENCE.match(content) if lead in ("`", "~") else None
        if fence_match:
            fence = fence_match.group(1)[:3]
            yield Line(number, start, offset, content, "code")
        elif stripped.startswith("<!--"):
            in_comment = "-->" not in stripped[4:]
            yield Line(number, start, offset, content, "comment")
        elif not stripped:
            yield Line(number, start, offset, content, "blank")
        elif lead == "#" and (heading := _HEADING.match(content)):
            yield Line(
                number,
                start,
                offset,
                content,
                "heading",
                heading_level=len(heading.group(1)),
                heading_title=normalize_title(heading.group(2) or ""),
            )
        else:
            yield Line(number, start, offset, content, "text")


def normalize_title(title: str) -> str:
    return " ".join(title.strip().lstrip("#").split())
