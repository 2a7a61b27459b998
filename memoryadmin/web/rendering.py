"""Turning untrusted text into something safe to show: diffs and sanitised markdown."""

from __future__ import annotations

import datetime as dt
import json
import re
import unicodedata
from dataclasses import dataclass
from typing import Any

import nh3
from django.utils import timezone
from django.utils.html import escape
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from stores.editing import DiffBudget, word_diff
from stores.editing.diff import CELLS_PER_DIFF, CHARS_PER_DIFF
from stores.models import Revision
from stores.opnames import OpName

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


# What may not stand raw in a single-quoted attribute or next to markup; JSON reads each back.
_ATTRIBUTE_ESCAPES = {
    ord("<"): "\\u003c",
    ord(">"): "\\u003e",
    ord("&"): "\\u0026",
    ord("'"): "\\u0027",
}


def hx_vals(values: dict[str, Any]) -> SafeString:
    """`values` as JSON for a single-quoted hx-vals attribute, whatever text they hold."""
    return mark_safe(json.dumps(values).translate(_ATTRIBUTE_ESCAPES))


def fields_changed(revision: Revision) -> list[tuple[str, Any, Any]]:
    """The fields a write changed (path, title, tags, ...), each with its value before and
    after; none for a create or a delete, whose text says it all."""
    if revision.op in (OpName.CREATE, OpName.FORGET):
        return []
    before, after = revision.before_state, revision.after_state
    names = sorted(set(before) | set(after))
    return [
        (name, before.get(name), after.get(name))
        for name in names
        if before.get(name) != after.get(name) and name not in ("created_at",)
    ]


# A snapshot's timestamps are ISO strings: a date first, a time after T or a space.
_ISO_MOMENT = re.compile(r"\d{4}-\d\d-\d\d(?:[T ]\d\d:\d\d)?")


def field_value(value: Any) -> str:
    """A field's value from a revision's snapshot as a person reads it: numbers to two
    places, moments in the site's time zone to the minute, lists joined, none as a dash."""
    if value is None or value == "" or value == []:
        return "—"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return f"{value:.2f}"
    if isinstance(value, list):
        return ", ".join(field_value(item) for item in value)
    if isinstance(value, dict):
        return json.dumps(value, ensure_ascii=False, sort_keys=True)
    if isinstance(value, str) and _ISO_MOMENT.fullmatch(value[:16]):
        try:
            moment = dt.datetime.fromisoformat(value)
        except ValueError:
            return value
        if moment.tzinfo is None:
            return moment.strftime("%Y-%m-%d %H:%M" if len(value) > 10 else "%Y-%m-%d")
        local = timezone.localtime(moment)
        return f"{local:%Y-%m-%d %H:%M} {local.tzname()}"
    return str(value)


# Raw HTML in markdown is shown as text (html=False) and the output passes an allow-list, so
# neither a <script>, an event handler, a javascript: link nor a tracking image survives.
_markdown = MarkdownIt("commonmark", {"html": False}).enable(["table", "strikethrough"])
ALLOWED_TAGS = {
    "a", "blockquote", "br", "code", "del", "em", "h1", "h2", "h3", "h4", "h5", "h6", "hr",
    "li", "ol", "p", "pre", "strong", "table", "tbody", "td", "th", "thead", "tr", "ul",
}  # fmt: skip
ALLOWED_ATTRIBUTES = {"a": {"href", "title"}, "ol": {"start"}}


# Unicode's explicit direction controls: embeddings and overrides (U+202A-U+202E) and
# isolates (U+2066-U+2069). Shown raw, they reorder the text around them, so a reviewer
# reads something other than what an agent stored (CVE-2021-42574, "Trojan Source").
BIDI_CONTROLS = re.compile("[\u202a-\u202e\u2066-\u2069]")


def _code_point(char: str) -> str:
    return f"U+{ord(char):04X}"


def _marker(match: re.Match[str]) -> str:
    char = match.group()
    return (
        f'<span class="bidi" title="{_code_point(char)} {unicodedata.name(char)}" '
        f'data-char="&#x{ord(char):x};">⟨{_code_point(char)}⟩</span>'
    )


# Characters a reader cannot see or cannot tell from a plain space, drawn as a marked sign
# when text is quoted back to a person (a near miss, an occurrence): the phrase differs from
# what was typed exactly there. Each marker keeps the character, as the direction markers do.
INVISIBLES = re.compile("[\u00a0\u2000-\u200d\u202f\u205f\u2060\u3000\ufeff\t]")
_INVISIBLE_SIGNS = {
    "\t": "⇥",
    "\u200b": "∅",
    "\u200c": "∅",
    "\u200d": "∅",
    "\u2060": "∅",
    "\ufeff": "∅",
}


def _invisible_marker(match: re.Match[str]) -> str:
    char = match.group()
    sign = _INVISIBLE_SIGNS.get(char, "⍽")
    name = "TAB" if char == "\t" else unicodedata.name(char, "")
    return (
        f'<span class="invisible" title="{_code_point(char)} {name}" '
        f'data-char="&#x{ord(char):x};">{sign}</span>'
    )


def show_invisibles(text: str) -> SafeString:
    """`text` as `show_controls` shows it, with invisible and look-alike spaces marked too."""
    shown = show_controls(text)
    return mark_safe(INVISIBLES.sub(_invisible_marker, shown))


def show_controls(text: str) -> SafeString:
    """`text` escaped, each direction control replaced by a visible marker, as code review
    tools show them; the marker keeps the character for a phrase copied from the text."""
    return mark_safe(BIDI_CONTROLS.sub(_marker, escape(text)))


def name_controls(text: str) -> str:
    """`text` with each direction control written out as ⟨U+202E⟩: for places that hold
    text only, such as a page title or an option, and for markdown before it is rendered."""
    return BIDI_CONTROLS.sub(lambda match: f"⟨{_code_point(match.group())}⟩", text)


def render_markdown(source: str) -> SafeString:
    # Named in the source, not marked up in the HTML: a control inside a link's title
    # would otherwise put markup into an attribute.
    html = _markdown.render(name_controls(source))
    clean = nh3.clean(
        html,
        tags=ALLOWED_TAGS,
        attributes=ALLOWED_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(clean)


# --- search matches in list cells ---------------------------------------------------------

# Words too common to mark in a search's results; the whole query is marked wherever it
# occurs, stopwords and all.
COMMON_WORDS = frozenset(
    {
        "a", "an", "and", "are", "as", "at", "be", "by", "did", "do", "does", "for", "from",
        "has", "have", "he", "her", "his", "how", "in", "is", "it", "its", "of", "on", "or",
        "she", "that", "the", "their", "them", "they", "this", "to", "was", "were", "what",
        "when", "where", "which", "who", "why", "with", "you", "your",
    }
)  # fmt: skip
MIN_MARKED_WORD = 3
MAX_MARKED_TERMS = 12


def marked_terms(query: str) -> list[str]:
    """What a list marks for a search: the query itself and its uncommon words, longest
    first (so the regex prefers the whole phrase), at most MAX_MARKED_TERMS."""
    query = " ".join(query.split())
    words = [
        word
        for word in re.findall(r"\w+", query)
        if len(word) >= MIN_MARKED_WORD and word.lower() not in COMMON_WORDS
    ]
    terms = list(dict.fromkeys(term.lower() for term in [query, *words] if term))
    return sorted(terms, key=len, reverse=True)[:MAX_MARKED_TERMS]


def highlight(text: str, query: str) -> SafeString:
    """`text` shown as `show_controls` shows it, each match of the search in a <mark>."""
    terms = marked_terms(query)
    if not terms:
        return show_controls(text)
    pattern = re.compile("|".join(re.escape(term) for term in terms), re.IGNORECASE)
    pieces: list[str] = []
    last = 0
    for match in pattern.finditer(text):
        pieces.append(show_controls(text[last : match.start()]))
        pieces.append(f"<mark>{show_controls(match.group())}</mark>")
        last = match.end()
    pieces.append(show_controls(text[last:]))
    return mark_safe("".join(pieces))
