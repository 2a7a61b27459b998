"""Turning untrusted text into something safe to show: diffs and sanitised markdown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from stores.editing import word_diff

# Long unchanged stretches are shortened to this much context on each side in history views.
CONTEXT_CHARS = 160


@dataclass(frozen=True)
class DiffPiece:
    kind: str  # "equal", "insert", "delete" or "gap"
    text: str


def diff_pieces(before: str, after: str, *, collapse: bool = False) -> list[DiffPiece]:
    """A word-level diff; with `collapse`, unchanged stretches keep only some context."""
    chunks = word_diff(before, after)
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
    return pieces


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
