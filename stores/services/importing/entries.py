"""What an import reads and what it reports: an entry as it came, a file it left unread, and the
report of the whole run (counts, changes, problems).
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any

from django.db import models

from stores.engine.sources import Source
from stores.models import (
    VersionedRecord,
)
from stores.surfaces import SURFACES

# Never compared on re-import: identity and consequences of writes, not content.
NOT_SYNCED = frozenset(
    {"created_at", "updated_at", "embedding", "embedding_model", "embedding_hash"}
)


# Fields no import may set: the service owns them.
NEVER_IMPORTED = frozenset({"id", "agent", "alias", "version", "text_hash", "superseded_by"})


# A field a set-based pass changes without a new version (decay lowers a memory's importance
# and notes when): an import trace notes it beside the version, so that change is synced too.
UNVERSIONED = "decayed_at"


# What an import trace holds beside its path (see ImportedSource).
TRACE_FIELDS = (
    "surface",
    "record_id",
    "position",
    "raw",
    "digest",
    "record_version",
    "record_decayed_at",
)


@dataclass(frozen=True)
class Trace:
    """How the entry was written in its source files (see ImportedSource)."""

    source_format: str
    path: str
    position: int = 0
    raw: dict[str, Any] = field(default_factory=dict)
    # Of the bytes of a file that holds this one record (see `Unread`), else empty.
    digest: str = ""


@dataclass(frozen=True)
class Unread:
    """A file that holds one record, read but not parsed yet.

    The import leaves it unparsed when its bytes are those its trace notes and its record
    has not changed since that trace was written (see `unchanged_files`); otherwise `parse`
    gives what the file holds, exactly as the parser reads it (traces carrying `digest`).
    """

    surface: str
    source_format: str
    path: str
    digest: str
    parse: Callable[[], Iterable[Incoming | Problem]]


def file_digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Incoming:
    """One record as read from a file, its values already cleaned by `clean_values`."""

    surface: str
    ref: str
    values: dict[str, Any]
    source: str
    version: int = 1
    # Values the file does not state: they apply to a new record only, and a re-import
    # does not compare them.
    defaults: dict[str, Any] = field(default_factory=dict)
    # The original id of the successor of a superseded memory; compared on re-import only
    # when the file states it.
    superseded_by: str | None = None
    successor_stated: bool = False
    trace: Trace | None = None
    # Revisions carried by a native export (dicts of Revision fields, each checked by
    # `clean_revision`), oldest first.
    history: list[dict[str, Any]] | None = None
    # A native export of a record without alias names it by its id; it is the same record
    # only if id and creation time both match (ids of another database mean nothing here).
    same_record_if: tuple[int, dt.datetime] | None = None
    # Where the record was first written, as the file says (a conversation, a message): the
    # source of its first revision here.
    provenance: Source | None = None
    # The door's scan parked it for review (stores.engine.doorscan).
    held: bool = False

    @property
    def natural_key(self) -> tuple[Any, ...] | None:
        fields = SURFACES[self.surface].natural_key
        if fields is None:
            return None
        return tuple(self.values.get(name) for name in fields)


@dataclass(frozen=True)
class Problem:
    """Why one file or entry was not imported (or not changed)."""

    path: str
    message: str


@dataclass
class Tally:
    created: int = 0
    changed: int = 0
    unchanged: int = 0
    failed: int = 0


@dataclass
class ChangeNote:
    surface: str
    ref: str
    fields: list[str]
    # What would change, field by field, in words a person checks the file by.
    what: list[str] = field(default_factory=list)


@dataclass
class ImportReport:
    dry_run: bool = False
    tallies: dict[str, Tally] = field(default_factory=dict)
    problems: list[Problem] = field(default_factory=list)
    changes: list[ChangeNote] = field(default_factory=list)
    created_refs: dict[str, list[str]] = field(default_factory=dict)

    def tally(self, surface_key: str) -> Tally:
        return self.tallies.setdefault(surface_key, Tally())

    def problem(self, path: str, message: str, surface_key: str | None = None) -> None:
        self.problems.append(Problem(path, message))
        if surface_key:
            self.tally(surface_key).failed += 1

    @property
    def ok(self) -> bool:
        return not self.problems


def alias_limit() -> int:
    """The longest original id a record keeps as its alias."""
    alias = VersionedRecord._meta.get_field("alias")
    assert isinstance(alias, models.CharField) and alias.max_length is not None
    return alias.max_length
