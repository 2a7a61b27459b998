"""What a surface is: its spec, declared once in its own module (`stores/surfaces/<key>.py`).

A spec holds everything that differs between surfaces and is plain data: the model, the text
fields (bounded by the size limit under the surface's key), the natural key, the fields a
create sets and a read returns, the strings a person or a URL names it by, and how its list
is searched, filtered, sorted and titled. The services, the selectors, the tools and the
doors read these attributes and loop over `SURFACES` rather than compare surface keys. What a
door draws from the data (the web door's titles and text views) it interprets itself: the
domain imports no door.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from django.db import models

from stores.models import EmbeddedRecord, VersionedRecord


@dataclass(frozen=True)
class Column:
    """One column of a surface's record list: the field it shows, under which heading."""

    field: str
    heading: str


# Ranked by hybrid recall (lexical + vector); the default sort of a search where it is offered.
RELEVANCE = "relevance"

COMMON_SORTS: dict[str, tuple[str, ...]] = {
    "-updated": ("-updated_at", "-id"),
    "updated": ("updated_at", "id"),
    "-created": ("-created_at", "-id"),
    "created": ("created_at", "id"),
    "id": ("id",),
    "-id": ("-id",),
}

# Every record keeps these for a restore, beside its surface's own state.
VERSIONED_STATE = ("alias", "created_at")


# Each spec is one object for the process: compared and hashed as itself.
@dataclass(frozen=True, eq=False)
class SurfaceSpec:
    key: str
    model: type[VersionedRecord]
    # Editable text fields; the first is the one an op edits unless told otherwise, and the
    # one a record may never be emptied to (an empty one would erase what the record says).
    text_fields: tuple[str, ...]
    # Fields a field update (PATCH) may set, beside the text fields.
    updatable_fields: tuple[str, ...]
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
    # Records carry a store and a subject that the policy weighs (long-term memory).
    store_policy: bool = False
    # Records may expire (`expires_at`); an expired one reads as gone (working memory).
    expires: bool = False
    select_related: tuple[str, ...] = ()
    # Fields a revert restores on a live record beside the updatable ones: what other ops
    # set (a memory's supersession, invalidation and archiving).
    restored_fields: tuple[str, ...] = ()
    # Where else a full read is offered, beside read_record and the REST record ("{id}": the
    # record's id), for a refusal that sends the caller to read it.
    resource: str = ""
    # The list: what its search looks in, which filters it offers, its sorts (name → order).
    search_fields: tuple[str, ...] = ()
    filters: frozenset[str] = frozenset({"stale"})
    sorts: dict[str, tuple[str, ...]] = field(default_factory=lambda: dict(COMMON_SORTS))
    default_sort: str = "-updated"
    # How a count of records reads: "1 memory", "3 entries".
    nouns: tuple[str, str] = ("record", "records")
    # A record's title: a format of its fields ("{namespace}/{key}"); "" for the first words
    # of its text.
    title: str = ""
    # How the record page shows the text beside itself: "" plain, "markdown" rendered with
    # its outline, "rules" as the list of rules.
    text_view: str = ""
    # The largest text a record may hold, in characters, unless the environment says
    # otherwise (MEMORYADMIN_MAX_<KEY>_LENGTH, read by `memoryadmin.settings`).
    max_text_length: int = 100_000
    # Why a record, with the values a write gives it, cannot stand among its agent's others
    # (None: it can), beyond what the database's unique constraints refuse; None: no such rule.
    placement: Callable[[Any, Mapping[str, Any]], str | None] | None = None

    @property
    def primary_text_field(self) -> str:
        return self.text_fields[0]

    @property
    def revertable_fields(self) -> tuple[str, ...]:
        """Fields a revert restores on a live record."""
        return (*self.updatable_fields, *self.restored_fields)

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
            model_field = self.model._meta.get_field(name)
            assert isinstance(model_field, models.Field)  # a state field is the record's own
            value = getattr(record, model_field.attname)
            state[name] = value.isoformat() if isinstance(value, dt.datetime) else value
        return state
