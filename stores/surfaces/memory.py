"""Long-term memories: the one surface with stores and subjects the policy weighs."""

from __future__ import annotations

from stores.models import Memory
from stores.surfaces.base import COMMON_SORTS, RELEVANCE, VERSIONED_STATE, Column, SurfaceSpec

# Where a memory is filed, and what it keeps beside its text, as a read and a restore see them.
_FILED = ("subject", "store", "category", "tags")
_KEPT = (
    "importance",
    "importance_floor",
    "pinned",
    "last_seen_at",
    "reinforcement_count",
    "metadata",
    "superseded_by",
    "invalidated_at",
    "archived_at",
    "decayed_at",
)
_FIELDS = ("category", "tags", "metadata", "importance", "importance_floor", "pinned")

SURFACE = SurfaceSpec(
    key="memory",
    model=Memory,
    text_fields=("content",),
    updatable_fields=_FIELDS,
    state_fields=(*VERSIONED_STATE, *_FILED, *_KEPT),
    create_fields=(
        "content",
        "store",
        "category",
        "tags",
        "importance",
        "importance_floor",
        "pinned",
        "metadata",
        "subject",
        "alias",
    ),
    create_required=("content",),
    read_fields=("bank", *_FILED, "content", *_KEPT),
    natural_key=None,
    label="Memory",
    plural="Memories",
    columns=(
        Column("content", "Content"),
        Column("store", "Store"),
        Column("category", "Category · tags"),
        Column("subject", "Bank"),
        Column("importance", "Importance"),
    ),
    api_path="memories",
    tool_hint="memory (long-term memories, in the stores editable (value 'working'), episodic "
    "or fact)",
    store_policy=True,
    select_related=("subject",),
    restored_fields=("superseded_by", "invalidated_at", "archived_at"),
    resource="the MCP resource memory://{id}",
    search_fields=("content", "category", "alias"),
    filters=frozenset(
        {"category", "store", "tag", "subject", "importance", "invalidated", "stale"}
    ),
    sorts={
        RELEVANCE: (),
        **COMMON_SORTS,
        "-importance": ("-importance", "-id"),
        "importance": ("importance", "id"),
    },
    nouns=("memory", "memories"),
)
