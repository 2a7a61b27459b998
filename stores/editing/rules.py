"""The behavioural rules document: find, add, remove and rewrite one rule in place.

The document is never re-rendered from a parse: every operation splices the one
rule's lines, so headings, comments, blank lines and bullet styles survive byte for byte.
"""

from __future__ import annotations

import re
from collections import Counter
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
from stores.editing.lines import CRLF, LF, dominant_line_ending
from stores.editing.markdown import Line, scan
from stores.editing.nearmiss import closest_line
from stores.editing.outcome import Edited
from stores.editing.quotes import clip
from stores.editing.sections import find_section

_BULLET = re.compile(
    r"^(?P<indent> {0,3})(?P<marker>[-*+]|\d{1,9}[.)])(?P<gap>[ \t]+)(?P<text>.*)$"
)
_THEMATIC_BREAK = re.compile(r"^ {0,3}([-*_=])(?:[ \t]*\1){2,}[ \t]*$")


@dataclass(slots=True)
class Rule:
    # Not frozen: a document may hold 125,000 rules, and a frozen dataclass takes three times
    # as long to make each.
    index: int  # 1-based position among the document's rules
    line: int
    start: int
    end: int
    marker: str  # "- ", "* ", "1. ", or "" for a plain line
    text: str


def parse_rules(text: str) -> list[Rule]:
    rules: list[Rule] = []
    current: list[Line] = []
    for line in scan(text):
        content = line.content
        if line.kind != "text" or _THEMATIC_BREAK.match(content):
            if current:
                rules.append(_rule(len(rules) + 1, current))
                current = []
            continue
        if current and content[:1] in (" ", "\t") and not _BULLET.match(content):
            current.append(line)  # a continuation of the rule above
            continue
        if current:
            rules.append(_rule(len(rules) + 1, current))
        current = [line]
    if current:
        rules.append(_rule(len(rules) + 1, current))
    return rules


def _rule(index: int, lines: list[Line]) -> Rule:
    """The rule written on `lines`: its first, then any continuation lines."""
    first = lines[0]
    bullet = _BULLET.match(first.content)
    # The bullet's indent, marker and gap are the line's first characters, up to its text.
    split = bullet.start("text") if bullet else 0
    head = first.content[split:].strip()
    if len(lines) == 1:
        body = head
    else:
        parts = [head, *(line.content.strip() for line in lines[1:])]
        body = "\n".join(part for part in parts if part)
    return Rule(index, first.number, first.start, lines[-1].end, first.content[:split], body)


def find_rule(text: str, rule: str) -> Rule:
    wanted = _normalize(rule)
    if not wanted:
        raise InvalidEdit("rule is empty; quote the rule's text.")
    rules = parse_rules(text)
    found = [candidate for candidate in rules if _normalize(candidate.text) == wanted]
    if len(found) == 1:
        return found[0]
    if found:
        # Located lazily: a document can hold a hundred thousand rules, a refusal shows a few.
        occurrences = (
            Occurrence(
                candidate.line,
                len(candidate.marker) + 1,
                clip(text[candidate.start : candidate.end].split("\n", 1)[0].rstrip("\r")),
            )
            for candidate in found
        )
        lines = [candidate.line for candidate in found]
        raise Ambiguous.at(
            f"{len(found)} rules read {rule!r} (lines {first_listed(lines)}).", lines, occurrences
        )
    near_miss = closest_line(
        wanted,
        [(candidate.line, candidate.text) for candidate in rules],
        compared=[_normalize(candidate.text) for candidate in rules],
    )
    raise NoMatch(f"No rule reads {rule!r}.", near_miss)


def add_rule(
    text: str, rule: str, *, section: str | None = None, max_length: int | None = None
) -> Edited:
    """Add a rule after the last rule (of `section`, if named) in the document's bullet style.

    As RockBot does: the last rule is the last bullet when there is one, so prose that follows
    the list (a note, a later section) stays below it; a rule already there, in any letter
    case, is not added twice (NoChange). The result says where the rule went.
    """
    rule = rule.strip()
    if not rule:
        raise InvalidEdit("rule is empty.")
    ending = dominant_line_ending(text) if text else LF
    rules = parse_rules(text)
    found = None
    if section is not None:
        found = find_section(text, section)
        rules = [r for r in rules if found.body_start <= r.start < found.end]
    wanted = _normalize(rule).casefold()
    existing = next((r for r in rules if _normalize(r.text).casefold() == wanted), None)
    if existing is not None:
        raise NoChange(_already_there(rule, existing), {"existing_rule": _at(existing)})
    # Plain lines are rules only in a document that has no bullets: elsewhere they are prose.
    rules = [r for r in rules if r.marker] or rules
    marker = _next_marker(rules)
    fallback = found.body_start if found is not None else len(text)
    insert_at = rules[-1].end if rules else fallback
    before = text[:insert_at]
    if before and not before.endswith("\n"):
        before += ending
    if not rules and section is None and before.strip():
        before += "" if before.endswith(ending * 2) else ending
    # The document's marker may be long (any run of spaces after a bullet), and every line
    # break of the rule repeats its width: the length is counted before the rule is built.
    continuation = ending + " " * len(marker)
    check_length(
        len(before)
        + len(marker)
        + _indented_length(rule, continuation)
        + len(ending)
        + len(text)
        - insert_at,
        max_length,
    )
    new_line = marker + _indented(rule, continuation) + ending
    line = before.count("\n") + 1
    if rules:
        placed, where = "after_last_rule", f"after the last rule (line {rules[-1].line})"
    elif found is not None:
        placed, where = "first_in_section", "as the first rule"
    else:
        placed, where = "first_in_document", "as the first rule of the document"
    if found is not None:
        where += f" under {found.title!r}"
    return Edited(
        before + new_line + text[insert_at:],
        message=f"Added the rule at line {line}, {where}.",
        details={"lines": [line], "placed": placed},
    )


def _already_there(rule: str, existing: Rule) -> str:
    if existing.text == rule or _normalize(existing.text) == _normalize(rule):
        return f"The rule {rule!r} is already there (line {existing.line}); nothing was added."
    return (
        f"The rule {rule!r} is already there as {existing.text!r} (line {existing.line}), "
        "differing only in letter case or spacing; nothing was added."
    )


def _at(rule: Rule) -> dict[str, object]:
    return {"line": rule.line, "text": rule.text}


def remove_rule(text: str, rule: str) -> str:
    found = find_rule(text, rule)
    return text[: found.start] + text[found.end :]


def replace_rule(text: str, rule: str, new_rule: str, *, max_length: int | None = None) -> str:
    found = find_rule(text, rule)
    new_rule = new_rule.strip()
    if not new_rule:
        raise InvalidEdit("new rule is empty; use remove_rule to delete a rule.")
    if _normalize(new_rule) == _normalize(found.text):
        raise NoChange("The rule already reads that way.")
    span = text[found.start : found.end]
    ending = "\r\n" if span.endswith("\r\n") else "\n" if span.endswith("\n") else ""
    continuation = (ending or "\n") + " " * len(found.marker)
    check_length(
        len(text)
        - (found.end - found.start)
        + len(found.marker)
        + _indented_length(new_rule, continuation)
        + len(ending),
        max_length,
    )
    body = _indented(new_rule, continuation)
    return text[: found.start] + found.marker + body + ending + text[found.end :]


def _indented(rule: str, continuation: str) -> str:
    """The rule with each line break written as `continuation` (line ending and indent)."""
    return rule.replace(CRLF, LF).replace(LF, continuation)


def _indented_length(rule: str, continuation: str) -> int:
    """len(_indented(rule, continuation)), without building it."""
    breaks = rule.count(LF)
    return len(rule) - rule.count(CRLF) + breaks * (len(continuation) - 1)


def _next_marker(rules: list[Rule]) -> str:
    """After a numbered rule, the next number; else the document's most used bullet.

    A plain-line rule is followed by a plain line when the document has no bullets.
    """
    if not rules:
        return "- "
    numbered = re.match(r"^( *)(\d+)([.)])(\s+)$", rules[-1].marker)
    if numbered:
        indent, number, close, gap = numbered.groups()
        return f"{indent}{int(number) + 1}{close}{gap}"
    bullets = [r.marker for r in rules if r.marker and not r.marker.strip()[0].isdigit()]
    return Counter(bullets).most_common(1)[0][0] if bullets else rules[-1].marker


def _normalize(rule: str) -> str:
    return " ".join(rule.split())
