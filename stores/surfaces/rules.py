"""The rules document: one per agent, edited a rule at a time."""

from __future__ import annotations

from stores.models import RulesDocument
from stores.surfaces.base import VERSIONED_STATE, SurfaceSpec

SURFACE = SurfaceSpec(
    key="rules",
    model=RulesDocument,
    text_fields=("content",),
    updatable_fields=(),
    state_fields=VERSIONED_STATE,
    create_fields=("content", "alias"),
    create_required=(),
    read_fields=("content",),
    natural_key=(),
    label="Rules",
    plural="Rules",
    columns=(),
    api_path="rules",
    tool_hint="rules (the rules document)",
    search_fields=("content",),
    filters=frozenset(),
    nouns=("rules document", "rules documents"),
    title="rules.md",
    text_view="rules",
    max_text_length=500_000,
)
