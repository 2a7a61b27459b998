"""How each surface shows in the browser: labels, the text people edit, filters and sorts."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from django.http import Http404

from stores.models import VersionedRecord
from stores.services import SURFACES, SurfaceSpec


@dataclass(frozen=True)
class SurfaceUI:
    key: str
    label: str  # one record
    plural: str  # the list
    search_fields: tuple[str, ...]
    filters: frozenset[str]
    sorts: dict[str, tuple[str, ...]]
    title: Callable[[VersionedRecord], str]
    select_related: tuple[str, ...] = ()
    default_sort: str = "-updated"
    columns: tuple[str, ...] = field(default=())

    @property
    def spec(self) -> SurfaceSpec:
        return SURFACES[self.key]

    @property
    def text_field(self) -> str:
        return self.spec.primary_text_field

    @property
    def listed(self) -> bool:
        return self.key != "rules"


# Ranked by hybrid recall (lexical + vector); the default sort of a memory search.
RELEVANCE = "relevance"

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
            label="Memory",
            plural="Memories",
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
            title=lambda record: f"Memory {record.pk}",
            select_related=("subject",),
        ),
        SurfaceUI(
            key="working",
            label="Working-memory entry",
            plural="Working memory",
            search_fields=("value", "key", "namespace", "category", "alias"),
            filters=frozenset({"category", "tag", "namespace", "stale"}),
            sorts={
                **_COMMON_SORTS,
                "key": ("namespace", "key"),
                "expires": ("expires_at", "id"),
            },
            title=lambda record: f"{record.namespace}/{record.key}",
        ),
        SurfaceUI(
            key="skill",
            label="Skill",
            plural="Skills",
            search_fields=("name", "summary", "content", "alias"),
            filters=frozenset({"stale"}),
            sorts={**_COMMON_SORTS, "name": ("name",)},
            title=lambda record: record.name,
        ),
        SurfaceUI(
            key="task",
            label="Scheduled task",
            plural="Tasks",
            search_fields=("name", "directive", "schedule", "alias"),
            filters=frozenset({"enabled", "stale"}),
            sorts={**_COMMON_SORTS, "name": ("name",)},
            title=lambda record: record.name,
        ),
        SurfaceUI(
            key="rules",
            label="Rules",
            plural="Rules",
            search_fields=("content",),
            filters=frozenset(),
            sorts=dict(_COMMON_SORTS),
            title=lambda record: "rules.md",
        ),
    )
}


def surface_ui(key: str) -> SurfaceUI:
    try:
        return SURFACE_UI[key]
    except KeyError:
        raise Http404(f"No surface {key!r}.") from None
