"""How each surface shows in the browser: search, filters, sorts and titles.

Labels, plurals and which surfaces are listed come from the registry (stores.surfaces); this
module adds what only the browser needs, the callables among it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from django.http import Http404

from memoryadmin.web.rendering import render_markdown
from stores.editing import outline, parse_rules
from stores.models import VersionedRecord
from stores.surfaces import SURFACES, Column, SurfaceSpec


@dataclass(frozen=True)
class SurfaceUI:
    key: str
    search_fields: tuple[str, ...]
    filters: frozenset[str]
    sorts: dict[str, tuple[str, ...]]
    title: Callable[[VersionedRecord], str]
    # How a count of records reads: "1 memory", "3 entries".
    nouns: tuple[str, str] = ("record", "records")
    select_related: tuple[str, ...] = ()
    default_sort: str = "-updated"
    # What the record page shows beside the text itself (a skill's rendering, the rules).
    text_context: Callable[[str], dict[str, Any]] = lambda text: {}

    @property
    def spec(self) -> SurfaceSpec:
        return SURFACES[self.key]

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
    def listed(self) -> bool:
        # The one record an agent has of a surface is shown on its own page, not in a list.
        return not self.spec.one_per_agent


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


def _skill_text(text: str) -> dict[str, Any]:
    return {"rendered": render_markdown(text), "sections": outline(text)}


def _rules_text(text: str) -> dict[str, Any]:
    return {"rules": parse_rules(text), "sections": outline(text)}


# Ranked by hybrid recall (lexical + vector); the default sort of a memory search.
RELEVANCE = "relevance"

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

_COMMON_SORTS = {
    "-updated": ("-updated_at", "-id"),
    "updated": ("updated_at", "id"),
    "-created": ("-created_at", "-id"),
    "created": ("created_at", "id"),
    "id": ("id",),
    "-id": ("-id",),
}

SURFACE_UI: dict[str, SurfaceUI] = {
    ui.key: ui
    for ui in (
        SurfaceUI(
            key="memory",
            search_fields=("content", "category", "alias"),
            filters=frozenset(
                {"category", "store", "tag", "subject", "importance", "invalidated", "stale"}
            ),
            sorts={
                RELEVANCE: (),
                **_COMMON_SORTS,
                "-importance": ("-importance", "-id"),
                "importance": ("importance", "id"),
            },
            title=lambda record: first_words(record.content, f"Memory {record.pk}"),
            nouns=("memory", "memories"),
            select_related=("subject",),
        ),
        SurfaceUI(
            key="working",
            search_fields=("value", "key", "namespace", "category", "alias"),
            filters=frozenset({"category", "tag", "namespace", "stale"}),
            sorts={
                **_COMMON_SORTS,
                "key": ("namespace", "key"),
                "expires": ("expires_at", "id"),
            },
            title=lambda record: f"{record.namespace}/{record.key}",
            nouns=("entry", "entries"),
        ),
        SurfaceUI(
            key="skill",
            search_fields=("name", "summary", "content", "alias"),
            filters=frozenset({"stale"}),
            sorts={**_COMMON_SORTS, "name": ("name",)},
            title=lambda record: record.name,
            nouns=("skill", "skills"),
            text_context=_skill_text,
        ),
        SurfaceUI(
            key="task",
            search_fields=("name", "directive", "schedule", "alias"),
            filters=frozenset({"enabled", "stale"}),
            sorts={**_COMMON_SORTS, "name": ("name",)},
            title=lambda record: record.name,
            nouns=("task", "tasks"),
        ),
        SurfaceUI(
            key="rules",
            search_fields=("content",),
            filters=frozenset(),
            sorts=dict(_COMMON_SORTS),
            title=lambda record: "rules.md",
            nouns=("rules document", "rules documents"),
            text_context=_rules_text,
        ),
        SurfaceUI(
            key="file",
            search_fields=("path", "content", "alias"),
            filters=frozenset({"stale"}),
            sorts={**_COMMON_SORTS, "path": ("path",)},
            title=lambda record: record.path,
            nouns=("file", "files"),
        ),
    )
}


def surface_ui(key: str) -> SurfaceUI:
    try:
        return SURFACE_UI[key]
    except KeyError:
        raise Http404(f"No surface {key!r}.") from None
