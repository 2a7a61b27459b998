"""How each surface shows in the browser: the registry's data, as the web door reads it.

Everything about a surface is its module in `stores.surfaces`; this module only interprets
what the page needs callables for (a title from its format, the text's view by its word) and
words the sorts for people.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import Http404

from memoryadmin.web.rendering import render_markdown
from stores.editing import outline, parse_rules
from stores.models import VersionedRecord
from stores.surfaces import RELEVANCE, SURFACES, Column, SurfaceSpec


class _Fields(dict[str, Any]):
    """A record's fields by name, for a title's format."""

    def __init__(self, record: VersionedRecord) -> None:
        super().__init__()
        self.record = record

    def __missing__(self, name: str) -> Any:
        return getattr(self.record, name)


@dataclass(frozen=True)
class SurfaceUI:
    spec: SurfaceSpec

    @property
    def key(self) -> str:
        return self.spec.key

    @property
    def label(self) -> str:  # one record
        return self.spec.label

    @property
    def plural(self) -> str:  # the list
        return self.spec.plural

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.spec.columns

    @property
    def text_field(self) -> str:
        return self.spec.primary_text_field

    @property
    def search_fields(self) -> tuple[str, ...]:
        return self.spec.search_fields

    @property
    def filters(self) -> frozenset[str]:
        return self.spec.filters

    @property
    def sorts(self) -> dict[str, tuple[str, ...]]:
        return self.spec.sorts

    @property
    def default_sort(self) -> str:
        return self.spec.default_sort

    @property
    def nouns(self) -> tuple[str, str]:
        return self.spec.nouns

    @property
    def select_related(self) -> tuple[str, ...]:
        return self.spec.select_related

    def title(self, record: VersionedRecord) -> str:
        if self.spec.title:
            return self.spec.title.format_map(_Fields(record))
        return first_words(getattr(record, self.text_field), f"{self.label} {record.pk}")

    def text_context(self, text: str) -> dict[str, Any]:
        """What the record page shows beside the text itself (a skill's rendering, the rules)."""
        view = TEXT_VIEWS.get(self.spec.text_view)
        return view(text) if view is not None else {}

    @property
    def sort_choices(self) -> list[tuple[str, str]]:
        """The list's sorts as (value, what a person reads), in the order they are offered;
        first the default ("" when none is asked for), which for memories depends on
        whether there is a search: the select is not redrawn as the person types."""
        usual = SORT_LABELS[self.default_sort]
        if RELEVANCE in self.sorts:
            default = f"{SORT_LABELS[RELEVANCE]} (without a search: {usual.lower()})"
        else:
            default = f"{usual} (default)"
        return [("", default), *((key, SORT_LABELS[key]) for key in self.sorts)]

    @property
    def parts(self) -> dict[str, list[str]]:
        """The templates of the record page's parts for this surface, found by convention:
        `web/surfaces/<key>_<part>.html` where the surface has its own, else the generic one."""
        return {
            part: [f"web/surfaces/{self.key}_{part}.html", f"web/surfaces/_{part}.html"]
            for part in PAGE_PARTS
        }

    @property
    def listed(self) -> bool:
        # The one record an agent has of a surface is shown on its own page, not in a list.
        return not self.spec.one_per_agent


# The parts of the record page a surface may draw its own way.
PAGE_PARTS = ("badges", "text", "properties")

# A title made of a text's first words: a heading to read, short enough for a tab.
TITLE_WORDS = 8
TITLE_CHARS = 60


def first_words(text: str, fallback: str) -> str:
    """The first words of `text` as a title ("Ana prefers short answers in French."),
    cut at a word with an ellipsis; `fallback` for a text with no words."""
    words = text.split()
    if not words:
        return fallback
    title = ""
    for word in words[:TITLE_WORDS]:
        longer = f"{title} {word}".lstrip()
        if len(longer) > TITLE_CHARS:
            break
        title = longer
    # A first word longer than a title is cut inside it.
    title = title or words[0][:TITLE_CHARS]
    return title if title == " ".join(words) else f"{title}…"


def _markdown_text(text: str) -> dict[str, Any]:
    return {"rendered": render_markdown(text), "sections": outline(text)}


def _rules_text(text: str) -> dict[str, Any]:
    return {"rules": parse_rules(text), "sections": outline(text)}


TEXT_VIEWS: dict[str, Callable[[str], dict[str, Any]]] = {
    "markdown": _markdown_text,
    "rules": _rules_text,
}

SORT_LABELS = {
    RELEVANCE: "Best match",
    "-updated": "Recently updated",
    "updated": "Least recently updated",
    "-created": "Newest",
    "created": "Oldest",
    "id": "Id, lowest first",
    "-id": "Id, highest first",
    "-importance": "Most important",
    "importance": "Least important",
    "key": "Key, A to Z",
    "expires": "Expiring soonest",
    "name": "Name, A to Z",
    "path": "Path, A to Z",
}

SURFACE_UI: dict[str, SurfaceUI] = {key: SurfaceUI(spec) for key, spec in SURFACES.items()}


def surface_ui(key: str) -> SurfaceUI:
    try:
        return SURFACE_UI[key]
    except KeyError:
        raise Http404(f"No surface {key!r}.") from None
