"""The surface registry: each surface declared once, for every layer and door.

Everything that differs between surfaces and is plain data lives here: the model, the text
fields and which size limit applies, the natural key, the fields a create sets and a read
returns, the strings a person or a URL names it by. The services, the selectors, the tools
and the doors read these attributes and iterate `SURFACES` rather than compare surface keys;
a branch on a key is left only for an op or a page part that one surface alone has.

What stays elsewhere, on purpose: the text an embedding is computed from is
`embedding_text()` on the model (`embedded` says whether a surface has one), because it is a
function of one record's fields that the model computes without the registry; the web door's
presentation callables (titles, sorts, filters) stay in `memoryadmin/web/surfaces.py`, taking
their labels from here; the ops a surface has of its own are declared by its services.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any

from stores.models import (
    EmbeddedRecord,
    Memory,
    MemoryFile,
    RulesDocument,
    ScheduledTask,
    Skill,
    VersionedRecord,
    WorkingMemoryEntry,
)


@dataclass(frozen=True)
class Column:
    """One column of a surface's record list: the field it shows, under which heading."""

    field: str
    heading: str


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
    # Fields a create may set (the text fields among them), and those it must.
    create_fields: tuple[str, ...]
    create_required: tuple[str, ...]
    # Fields a full read returns after id, alias, version, created_at and updated_at, in order.
    # A relation reads as its id, except a subject, which reads as the subject's own data.
    read_fields: tuple[str, ...]
    # The fields that name a record among its agent's beside its id and alias, for an import
    # to find the record a file means: None when only id or alias name it, () when an agent
    # has one record of the surface at most.
    natural_key: tuple[str, ...] | None
    # One record, and the list of them, as a person reads it.
    label: str
    plural: str
    # The record list's columns between the id and the update time; () when not listed.
    columns: tuple[Column, ...]
    # The surface's path segment under /api/v1/.
    api_path: str
    # How a tool's `surface` parameter describes this value to a model.
    tool_hint: str
    # The key of settings.MEMORYADMIN["MAX_TEXT_LENGTH"] that bounds this surface's text.
    limit_key: str
    # Records carry a store and a subject that the policy weighs (long-term memory).
    store_policy: bool = False
    # Records may expire (`expires_at`); an expired one reads as gone (working memory).
    expires: bool = False
    select_related: tuple[str, ...] = ()

    @property
    def primary_text_field(self) -> str:
        return self.text_fields[0]

    @property
    def one_per_agent(self) -> bool:
        """An agent has one record of this surface at most (the rules document)."""
        return self.natural_key == ()

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
    read_fields=(
        "bank",
        "subject",
        "store",
        "category",
        "tags",
        "content",
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
    tool_hint="memory (long-term memories, in the stores working (editable), episodic or fact)",
    limit_key="memory",
    store_policy=True,
    select_related=("subject",),
)
WORKING = SurfaceSpec(
    key="working",
    model=WorkingMemoryEntry,
    text_fields=("value",),
    updatable_fields=("category", "tags"),
    revertable_fields=("category", "tags"),
    state_fields=(*_VERSIONED, "namespace", "key", "stored_at", "expires_at", "category", "tags"),
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
    limit_key="working",
    expires=True,
)
SKILL = SurfaceSpec(
    key="skill",
    model=Skill,
    text_fields=("content", "summary"),
    updatable_fields=("name",),
    revertable_fields=("name",),
    state_fields=(*_VERSIONED, "name", "summary"),
    create_fields=("name", "summary", "content", "alias"),
    create_required=("name",),
    read_fields=("name", "summary", "content"),
    natural_key=("name",),
    label="Skill",
    plural="Skills",
    columns=(Column("name", "Name"), Column("summary", "Summary")),
    api_path="skills",
    tool_hint="skill",
    limit_key="skill",
)
TASK = SurfaceSpec(
    key="task",
    model=ScheduledTask,
    text_fields=("directive",),
    updatable_fields=("name", "schedule", "enabled"),
    revertable_fields=("name", "schedule", "enabled"),
    state_fields=(*_VERSIONED, "name", "schedule", "enabled", "last_run_at"),
    create_fields=("name", "schedule", "directive", "enabled", "alias"),
    create_required=("name", "schedule", "directive"),
    read_fields=("name", "schedule", "directive", "enabled", "last_run_at"),
    natural_key=("name",),
    label="Scheduled task",
    plural="Tasks",
    columns=(
        Column("name", "Name"),
        Column("directive", "Directive"),
        Column("schedule", "Schedule"),
        Column("enabled", "Enabled"),
    ),
    api_path="tasks",
    tool_hint="task (scheduled-task directive)",
    limit_key="task",
)
RULES = SurfaceSpec(
    key="rules",
    model=RulesDocument,
    text_fields=("content",),
    updatable_fields=(),
    revertable_fields=(),
    state_fields=_VERSIONED,
    create_fields=("content", "alias"),
    create_required=(),
    read_fields=("content",),
    natural_key=(),
    label="Rules",
    plural="Rules",
    columns=(),
    api_path="rules",
    tool_hint="rules (the rules document)",
    limit_key="rules",
)
FILE = SurfaceSpec(
    key="file",
    model=MemoryFile,
    text_fields=("content",),
    updatable_fields=("path",),
    revertable_fields=("path",),
    state_fields=(*_VERSIONED, "path"),
    create_fields=("path", "content", "alias"),
    create_required=("path",),
    read_fields=("path", "content"),
    natural_key=("path",),
    label="Memory file",
    plural="Memory files",
    columns=(Column("path", "Path"), Column("content", "Content")),
    api_path="files",
    tool_hint="file (memory files, each named by its path under /memories)",
    limit_key="file",
)

SURFACES: dict[str, SurfaceSpec] = {
    spec.key: spec for spec in (MEMORY, WORKING, SKILL, TASK, RULES, FILE)
}


def surface(key: str) -> SurfaceSpec:
    try:
        return SURFACES[key]
    except KeyError:
        raise KeyError(f"Unknown surface {key!r}; one of {', '.join(SURFACES)}.") from None


_BY_MODEL: dict[type[VersionedRecord], SurfaceSpec] = {
    spec.model: spec for spec in SURFACES.values()
}


def surface_of(record: VersionedRecord) -> SurfaceSpec:
    """The surface a record belongs to (a proxy model's record: its concrete model's)."""
    return _BY_MODEL[record._meta.concrete_model]
