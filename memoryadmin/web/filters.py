"""Template filters for untrusted memory text and the surface list, built into every template.

(settings TEMPLATES `builtins`)
"""

from __future__ import annotations

import datetime as dt
from typing import Any

from django import template
from django.utils import timezone
from django.utils.safestring import SafeData, SafeString
from django.utils.timesince import timesince

from memoryadmin.web.rendering import (
    field_value,
    highlight,
    name_controls,
    show_controls,
    show_invisibles,
)
from memoryadmin.web.surfaces import SURFACE_UI, SurfaceUI
from memoryadmin.web.wording import REASON_SHOWN, sentence
from stores.editing import line_count as count_lines
from stores.editing import text_sha256
from stores.models import Agent, Memory
from stores.selectors.suggestions import count_open

register = template.Library()


@register.filter(needs_autoescape=True)
def visible_controls(value: Any, mode: str = "html", autoescape: bool = True) -> str | SafeString:
    """Escape `value` and make its direction controls visible (see rendering.BIDI_CONTROLS).

    `visible_controls:"text"` writes them out without markup, for text-only places (the page
    title, an option). Already safe HTML gets the same: markup must not land in an attribute.
    """
    text = "" if value is None else str(value)
    if mode == "text" or isinstance(value, SafeData) or not autoescape:
        named = name_controls(text)
        return SafeString(named) if isinstance(value, SafeData) else named
    return show_controls(text)


@register.filter
def visible_invisibles(value: Any) -> SafeString:
    """`value` escaped with its direction controls, invisible characters and look-alike
    spaces drawn as marked signs (⍽ for a no-break space): for text quoted back to a person."""
    return show_invisibles("" if value is None else str(value))


@register.filter
def line_count(text: str) -> int:
    """How many lines an insert counts in `text` (the engine's count, so 'after line N'
    offers exactly the range the op takes)."""
    return count_lines(text or "")


@register.filter
def shown_value(value: Any) -> str:
    """A field's value from a revision's snapshot as a person reads it (rendering.field_value)."""
    return field_value(value)


@register.filter
def ui_sentence(status: str) -> str:
    """The page's own sentence for a status (web.wording), not the agent's message."""
    return sentence(status)


@register.filter
def reason_shown(status: str) -> bool:
    """Whether the service's message carries the reason the person needs (web.wording)."""
    return status in REASON_SHOWN


@register.filter(name="highlight")
def highlight_matches(value: Any, query: str) -> SafeString:
    """`value` escaped with its direction controls visible, as `visible_controls` shows it,
    and each match of the list's search `query` marked."""
    return highlight("" if value is None else str(value), query or "")


@register.filter
def full_read_sha256(text: str) -> str:
    """The SHA-256 a full read gives of `text`: a page that shows the whole text carries it
    with a form that replaces it, as an agent sends it back after reading all of it."""
    return text_sha256(text)


@register.filter
def field_text(record: Any, field: str) -> str:
    """A record's field as text, for a list column no cell of its own shows."""
    value = getattr(record, field, None)
    return "" if value is None else str(value)


@register.filter
def counted(number: int, ui: SurfaceUI) -> str:
    """`number` with the surface's noun, singular or plural: "1 memory", "3 entries"."""
    singular, plural = ui.nouns
    return f"{number} {singular if number == 1 else plural}"


@register.filter
def ago(moment: dt.datetime | None) -> str:
    """How long ago, in words: "just now" under a minute (timesince said "0 minutes")."""
    if moment is None:
        return ""
    if timezone.now() - moment < dt.timedelta(minutes=1):
        return "just now"
    return f"{timesince(moment)} ago"


@register.filter
def store_word(value: str) -> str:
    """A memory store as one plain word, from its label: "editable" for `working`, whose
    value reads like the separate working-memory surface."""
    try:
        return Memory.Store(value).label.split(" (", 1)[0].lower()
    except ValueError:
        return value


@register.filter
def store_note(value: str) -> str:
    """What a memory store's label says in parentheses: "long-term" for `working`."""
    try:
        return Memory.Store(value).label.partition(" (")[2].rstrip(")")
    except ValueError:
        return ""


@register.simple_tag
def surface_uis() -> list[SurfaceUI]:
    """Every surface in registry order, for the navigation: `{% surface_uis as surfaces %}`."""
    return list(SURFACE_UI.values())


@register.simple_tag
def open_suggestions(agent: Agent) -> int:
    """How many suggestions about the agent's memories wait to be settled, for the nav."""
    return count_open(agent)


@register.filter
def get(mapping: dict[str, Any], key: str) -> Any:
    """`mapping[key]`, or None: a template's lookup by a name it holds in a variable."""
    return mapping.get(key)


@register.filter
def link_url(value: Any) -> str:
    """`value` if it is an http or https URL a page may link to, else "" (a source's URL is
    checked when written; a page links to nothing else, whatever a row holds)."""
    text = "" if value is None else str(value)
    scheme = text.split(":", 1)[0].lower() if ":" in text else ""
    return text if scheme in ("http", "https") and text[len(scheme) :].startswith("://") else ""
