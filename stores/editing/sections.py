"""Section operations on a markdown body: outline, append, replace_section, delete_section, and
inserting lines just before or just after a heading."""

from __future__ import annotations

from dataclasses import dataclass

from stores.editing.errors import (
    Ambiguous,
    InvalidEdit,
    NoChange,
    NoMatch,
    Occurrence,
    first_listed,
)
from stores.editing.limits import check_length
from stores.editing.lines import LF, dominant_line_ending, with_line_ending
from stores.editing.markdown import normalize_title, scan
from stores.editing.nearmiss import closest_line
from stores.editing.outcome import Edited
from stores.editing.quotes import clip


@dataclass(frozen=True)
class Section:
    title: str
    level: int
    line: int
    start: int  # offset of the heading line
    body_start: int  # offset after the heading line
    end: int  # offset where the next heading of the same or a higher level starts


def outline(text: str) -> list[Section]:
    headings = [line for line in scan(text) if line.kind == "heading"]
    ends = [len(text)] * len(headings)
    # The headings whose section is still open, their levels rising: a heading closes every
    # open section of its level or deeper, so each heading is passed over once (looking
    # ahead from each one for the next was quadratic: 2 s for 45,000 sections).
    open_sections: list[int] = []
    for index, heading in enumerate(headings):
        while open_sections and headings[open_sections[-1]].heading_level >= heading.heading_level:
            ends[open_sections.pop()] = heading.start
        open_sections.append(index)
    return [
        Section(
            heading.heading_title,
            heading.heading_level,
            heading.number,
            heading.start,
            heading.end,
            end,
        )
        for heading, end in zip(headings, ends, strict=True)
    ]


def find_section(text: str, heading: str) -> Section:
    wanted = normalize_title(heading)
    if not wanted:
        raise InvalidEdit("heading is empty; name the section by its heading text.")
    sections = outline(text)
    found = [section for section in sections if section.title == wanted]
    if not found:
        found = [section for section in sections if section.title.casefold() == wanted.casefold()]
    if len(found) == 1:
        return found[0]
    if len(found) > 1:
        occurrences = (
            Occurrence(
                section.line, 1, clip(text[section.start : section.body_start].rstrip("\r\n"))
            )
            for section in found
        )
        lines = [section.line for section in found]
        raise Ambiguous.at(
            f"{len(found)} sections are headed {wanted!r} (lines "
            f"{first_listed(lines)}); rename one before editing it "
            "by heading.",
            lines,
            occurrences,
        )
    near_miss = closest_line(wanted, [(section.line, section.title) for section in sections])
    known = first_listed([repr(section.title) for section in sections]) or "none"
    raise NoMatch(f"No section is headed {wanted!r}. Headings: {known}.", near_miss)


def replace_section(
    text: str,
    heading: str,
    content: str,
    *,
    keep_subsections: bool = False,
    max_length: int | None = None,
) -> Edited:
    """Replace what stands under `heading`, keeping the heading line.

    The subsections go too, unless `keep_subsections`: then only the section's own text, up
    to its first subheading, is replaced. Content that opens with the section's own heading
    (models restate it) keeps one heading: that first line is dropped, and the result says so.
    """
    section = find_section(text, heading)
    body, dropped = _without_restated_heading(content, section.title)
    end = _own_end(text, section) if keep_subsections else section.end
    old_body = text[section.body_start : end]
    trailing = old_body[len(old_body.rstrip("\r\n")) :]
    if not trailing and end < len(text):
        trailing = dominant_line_ending(text)
    new_body = with_line_ending(body, _ending(text)).rstrip("\r\n")
    if new_body:
        new_body += trailing or ""
    else:
        new_body = trailing
    line_break = _ensure_line_break(text, section)
    check_length(
        len(text) - (end - section.body_start) + len(line_break) + len(new_body), max_length
    )
    result = text[: section.body_start] + line_break + new_body + text[end:]
    result = _changed(text, result)
    if dropped is None:
        return Edited(result)
    return Edited(
        result,
        message=f"The new content began with the section's own heading ({dropped!r}); that "
        "line was dropped so the section keeps one heading.",
        details={"dropped_heading": dropped},
    )


def _without_restated_heading(body: str, title: str) -> tuple[str, str | None]:
    """`body` without a first heading (at any level, in any letter case) that reads `title`,
    and that heading line; blank lines before it go with it."""
    for line in scan(body):
        if line.kind == "blank":
            continue
        if line.kind == "heading" and line.heading_title.casefold() == title.casefold():
            return body[line.end :], line.content.strip()
        break
    return body, None


def insert_before_section(
    text: str, heading: str, content: str, *, max_length: int | None = None
) -> str:
    """Insert `content` as a block of its own just before the heading line of `heading`: a
    blank line sets it apart from a paragraph above it."""
    section = find_section(text, heading)
    addition = _as_block(text, section.start, _lines_of(text, content))
    check_length(len(text) + len(addition), max_length)
    return text[: section.start] + addition + text[section.start :]


def insert_after_section(
    text: str, heading: str, content: str, *, max_length: int | None = None
) -> str:
    """Insert `content` as a block of its own just after the heading line of `heading`, before
    the section's own text: a blank line sets it apart from the paragraph below it, so markdown
    does not read the two as one (Basic Memory's section inserts keep that blank line too)."""
    section = find_section(text, heading)
    addition = _as_block(text, section.body_start, _lines_of(text, content))
    if _ensure_line_break(text, section):
        # The heading is the last line and has no line ending: the break goes before the new
        # lines, which then end the text without one, as the heading did.
        ending = _ending(text)
        addition = ending + addition.removesuffix(ending)
    check_length(len(text) + len(addition), max_length)
    return text[: section.body_start] + addition + text[section.body_start :]


def delete_section(text: str, heading: str) -> str:
    """Remove the heading and everything under it, subsections included.

    The blank lines that set the section apart go with it: its own trailing ones always, and,
    when it was the last section, those that separated it from the text above, so the
    document reads as if the section had never been written.
    """
    section = find_section(text, heading)
    before, after = text[: section.start], text[section.end :]
    if not after.strip():
        before = _without_trailing_blank_lines(before)
        after = ""
    return _changed(text, before + after)


def _without_trailing_blank_lines(text: str) -> str:
    """`text` without the blank (or whitespace-only) lines it ends with; the last line that
    has text keeps its line ending."""
    kept = len(text.rstrip(" \t\r\n"))
    if kept == 0:
        return ""
    # Spaces after the last word stay: only whole blank lines go.
    breaks = [at for at in (text.find("\n", kept), text.find("\r", kept)) if at != -1]
    if not breaks:
        return text
    line_end = min(breaks)
    return text[: line_end + (2 if text.startswith("\r\n", line_end) else 1)]


def append(
    text: str, content: str, heading: str | None = None, *, max_length: int | None = None
) -> str:
    """Add content at the end of the body, or at the end of the section under `heading`."""
    if not content.strip():
        raise InvalidEdit("content to append is empty.")
    ending = _ending(text)
    addition = with_line_ending(content, ending).rstrip("\r\n") + ending
    if heading is None:
        separator = ending if text and not text.endswith(("\n", "\r")) else ""
        check_length(len(text) + len(separator) + len(addition), max_length)
        return text + separator + addition
    section = find_section(text, heading)
    body = text[section.body_start : section.end]
    insert_at = section.body_start + len(body.rstrip("\r\n \t"))
    if insert_at == section.body_start:
        insert_at = section.body_start
        prefix = _ensure_line_break(text, section)
    else:
        line_end = text.find("\n", insert_at)
        insert_at = len(text) if line_end == -1 else line_end + 1
        prefix = "" if text[:insert_at].endswith("\n") else ending
    check_length(len(text) + len(prefix) + len(addition), max_length)
    return text[:insert_at] + prefix + addition + text[insert_at:]


def _own_end(text: str, section: Section) -> int:
    """Where the section's own text ends: at its first subheading, if it has one."""
    for other in outline(text):
        if other.start >= section.body_start:
            return min(other.start, section.end)
    return section.end


def _lines_of(text: str, content: str) -> str:
    """`content` as whole lines in the text's line ending; its one final line ending optional."""
    if not content.strip():
        raise InvalidEdit("content to insert is empty.")
    ending = _ending(text)
    return with_line_ending(content, ending).removesuffix(ending) + ending


def _as_block(text: str, at: int, addition: str) -> str:
    """`addition` (whole lines going in at the line start `at`) with a blank line on each side
    where paragraph text would otherwise run into it; a heading, a blank line (its own or the
    text's) or the text's edge already sets it apart."""
    ending = _ending(text)
    headings = {section.start for section in outline(text)}
    lines = addition.split("\n")  # the last item is "" (the addition ends with a line ending)
    previous = text.rfind("\n", 0, max(at - 1, 0)) + 1
    if at and text[previous:at].strip() and previous not in headings and lines[0].strip():
        addition = ending + addition
    following = text[at:].split("\n", 1)[0]
    if following.strip() and at not in headings and lines[-2].strip():
        addition += ending
    return addition


def _ending(text: str) -> str:
    return dominant_line_ending(text) if text else LF


def _ensure_line_break(text: str, section: Section) -> str:
    """A heading on the last line without a line ending needs one before a body follows."""
    heading_line = text[section.start : section.body_start]
    return "" if heading_line.endswith("\n") else _ending(text)


def _changed(before: str, after: str) -> str:
    if before == after:
        raise NoChange("The section already reads that way; nothing to change.")
    return after
