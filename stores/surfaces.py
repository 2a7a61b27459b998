"""What the edit service knows about each surface: its model, text fields and state."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from stores.models import (
    EmbeddedRecord,
    Memory,
    RulesDocument,
    ScheduledTask,
    Skill,
    VersionedRecord,
    WorkingMemoryEntry,
)


@dataclass(frozen=True)
class SurfaceSpec:
    key: str
    model: type[VersionedRecord]
    # Editable text fields; the first is the one an op edits unless told otherwise.
    text_fields: tuple[str, ...]
    # Fields a field update (PATCH) may set, beside the text fields.
    updatable_fields: tuple[str, ...]
    # Fields a revert restores on a live record.
    revertable_fields: tuple[str, ...]
    # Everything needed to bring a forgotten record back.
    state_fields: tuple[str, ...]
    select_related: tuple[str, ...] = ()

    @property
    def primary_text_field(self) -> str:
        return self.text_fields[0]

    @property
    def embedded(self) -> bool:
        return issubclass(self.model, EmbeddedRecord)

    def snapshot(self, record: VersionedRecord) -> dict[str, Any]:
        state: dict[str, Any] = {}
        for name in self.state_fields:
            field = self.model._meta.get_field(name)
            value = getattr(record, field.attname)
            state[name] = value.isoformat() if isinstance(value, dt.datetime) else value
        return state


_VERSIONED = ("alias", "created_at")

MEMORY = SurfaceSpec(
    key="memory",
    model=Memory,
    text_fields=("content",),
    updatable_fields=("category", "tags", "metadata", "importance", "importance_floor", "pinned"),
    revertable_fields=(
        "category",
        "tags",
        "metadata",
        "importance",
        "importance_floor",
        "pinned",
        "superseded_by",
        "invalidated_at",
        "archived_at",
    ),
    state_fields=(
        *_VERSIONED,
        "subject",
        "store",
        "category",
        "tags",
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
    ),
    select_related=("subject",),
)
WORKING = SurfaceSpec(
    key="working",
    model=WorkingMemoryEntry,
    text_fields=("value",),
    updatable_fields=("category", "tags"),
    revertable_fields=("category", "tags"),
    state_fields=(*_VERSIONED, "namespace", "key", "stored_at", "expires_at", "category", "tags"),
)
SKILL = SurfaceSpec(
    key="skill",
    model=Skill,
    text_fields=("content", "summary"),
    updatable_fields=("name",),
    revertable_fields=("name",),
    state_fields=(*_VERSIONED, "name", "summary"),
)
TASK = SurfaceSpec(
    key="task",
    model=ScheduledTask,
    text_fields=("directive",),
    updatable_fields=("name", "schedule", "enabled"),
    revertable_fields=("name", "schedule", "enabled"),
    state_fields=(*_VERSIONED, "name", "schedule", "enabled", "last_run_at"),
)
RULES = SurfaceSpec(
    key="rules",
    model=RulesDocument,
    text_fields=("content",),
    updatable_fields=(),
    revertable_fields=(),
    state_fields=_VERSIONED,
)

SURFACES: dict[str, SurfaceSpec] = {
    spec.key: spec for spec in (MEMORY, WORKING, SKILL, TASK, RULES)
}


def surface(key: str) -> SurfaceSpec:
    try:
        return SURFACES[key]
    except KeyError:
        raise KeyError(f"Unknown surface {key!r}; one of {', '.join(SURFACES)}.") from None
