"""Skills: named markdown documents with a summary, edited section by section too."""

from __future__ import annotations

from stores.models import Skill
from stores.surfaces.base import COMMON_SORTS, VERSIONED_STATE, Column, SurfaceSpec

SURFACE = SurfaceSpec(
    key="skill",
    model=Skill,
    text_fields=("content", "summary"),
    updatable_fields=("name",),
    state_fields=(*VERSIONED_STATE, "name", "summary"),
    create_fields=("name", "summary", "content", "alias"),
    create_required=("name",),
    read_fields=("name", "summary", "content"),
    natural_key=("name",),
    label="Skill",
    plural="Skills",
    columns=(Column("name", "Name"), Column("summary", "Summary")),
    api_path="skills",
    tool_hint="skill",
    search_fields=("name", "summary", "content", "alias"),
    sorts={**COMMON_SORTS, "name": ("name",)},
    nouns=("skill", "skills"),
    title="{name}",
    text_view="markdown",
    max_text_length=500_000,
)
