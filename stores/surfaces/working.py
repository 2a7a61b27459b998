"""Working memory: entries by namespace and key that expire."""

from __future__ import annotations

from stores.models import WorkingMemoryEntry
from stores.surfaces.base import COMMON_SORTS, VERSIONED_STATE, Column, SurfaceSpec

SURFACE = SurfaceSpec(
    key="working",
    model=WorkingMemoryEntry,
    text_fields=("value",),
    updatable_fields=("category", "tags"),
    state_fields=(
        *VERSIONED_STATE,
        "namespace",
        "key",
        "stored_at",
        "expires_at",
        "category",
        "tags",
    ),
    create_fields=("namespace", "key", "value", "expires_at", "ttl", "category", "tags", "alias"),
    create_required=("key", "value"),
    read_fields=("namespace", "key", "value", "stored_at", "expires_at", "category", "tags"),
    natural_key=("namespace", "key"),
    label="Working-memory entry",
    plural="Working memory",
    columns=(
        Column("key", "Key"),
        Column("value", "Value"),
        Column("category", "Category · tags"),
        Column("expires_at", "Expires"),
    ),
    api_path="working-memory",
    tool_hint="working (working memory)",
    expires=True,
    search_fields=("value", "key", "namespace", "category", "alias"),
    filters=frozenset({"category", "tag", "namespace", "stale"}),
    sorts={**COMMON_SORTS, "key": ("namespace", "key"), "expires": ("expires_at", "id")},
    nouns=("entry", "entries"),
    title="{namespace}/{key}",
)
