"""Turning untrusted text into something safe to show: diffs and sanitised markdown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from stores.editing import DiffBudget, word_diff
from stores.editing.diff import CELLS_PER_DIFF, CHARS_PER_DIFF

# Long unchanged stretches are shortened to this much context on each side in history views.
CONTEXT_CHARS = 160
# The diffs of one page (history, review queue) share this much engine work; once it is spent,
# the page's further diffs show their two texts whole.
PAGE_DIFF_CELLS = 4 * CELLS_PER_DIFF
PAGE_DIFF_CHARS = 2 * CHARS_PER_DIFF


@dataclass(frozen=True)
class DiffPiece:
    kind: str  # "equal", "insert", "delete" or "gap"
    text: str


@dataclass(frozen=True)
class ShownDiff:
    """What the diff partial shows: the pieces, or, when the texts were too large to compare,
    both texts whole."""

    pieces: list[DiffPiece]
    too_large: bool
    before: str
    after: str


def page_budget() -> DiffBudget:
    return DiffBudget(cells=PAGE_DIFF_CELLS, chars=PAGE_DIFF_CHARS)


def diff_pieces(
    before: str, after: str, *, collapse: bool = False, budget: DiffBudget | None = None
) -> ShownDiff:
    """A word-level diff; with `collapse`, unchanged stretches keep only some context."""
    diff = word_diff(before, after, budget=budget)
    if diff.too_large:
        return ShownDiff([], too_large=True, before=before, after=after)
    chunks = diff.chunks
    pieces: list[DiffPiece] = []
    last = len(chunks) - 1
    for index, chunk in enumerate(chunks):
        text = chunk.text
        if not (collapse and chunk.kind == "equal" and len(text) > 3 * CONTEXT_CHARS):
            pieces.append(DiffPiece(chunk.kind, text))
            continue
        if index > 0:
            pieces.append(DiffPiece("equal", text[:CONTEXT_CHARS]))
        pieces.append(DiffPiece("gap", f"… {len(text) - 2 * CONTEXT_CHARS} unchanged characters …"))
        if index < last:
            pieces.append(DiffPiece("equal", text[-CONTEXT_CHARS:]))
    return ShownDiff(pieces, too_large=False, before=before, after=after)


def state_changes(before: dict[str, Any], after: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """Fields whose value differs between two snapshots of a record."""
    names = sorted(set(before) | set(after))
    return [
        (name, before.get(name), after.get(name))
        for name in names
        if before.get(name) != after.get(name) and name not in ("created_at",)
    ]


# Raw HTML in markdown is shown as text (html=False) and the output passes an allow-list, so
# neither a <script>, an event handler, a javascript: link nor a tracking image survives.
_markdown = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "li", "ol", "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


def render_markdown(source: str) -> SafeString:
    html = _markdown.render(source)
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)
