"""Bulk import: many records from another store, each keeping its original id as an alias.

New records are inserted in batches (`bulk_create` of the records at their version and of
their first revisions, op `import`), never one save per row. Their vectors are left
stale for the re-embedding sweep (or embedded here in batches on request). A record that
already exists (matched by its original id, or by its name/key) is left alone when the
file says what it already holds, and otherwise changed through the edit service, so each
change is a revision like any other write. Nothing here writes a partial record: an entry
is validated completely before anything of it is written, and a bad entry becomes a
problem in the report while the rest goes on.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from itertools import islice
from typing import Any

from django.db import IntegrityError, models, transaction
from django.db.models import Q

from stores.editing import text_sha256
from stores.editing.numbers import is_number
from stores.errors import ApplicationError, Invalid, SensitiveData
from stores.models import (
    EMBEDDING_DIMENSIONS,
    Agent,
    EmbeddedRecord,
    ImportedSource,
    Memory,
    Revision,
    Subject,
    VersionedRecord,
    text_fingerprint,
)
from stores.models.revisions import after_hash
from stores.ops.names import OpName
from stores.runtime.bulk import insert_rows
from stores.runtime.collector import rare_collections
from stores.selectors.revisions import recorded_versions
from stores.services import doorscan, policy, term_shares, validation, webhooks
from stores.services.actors import Actor
from stores.services.engine import (
    Change,
    check_text_size,
    first_revision,
    returns_result,
    write,
)
from stores.services.records import record_update
from stores.services.results import WriteResult
from stores.services.sources import Source
from stores.surfaces import MEMORY, SURFACES, SurfaceSpec

BATCH_SIZE = 2000
# Entries whose natural keys one query matches: well under SQLite's expression depth of 1,000.
NATURAL_KEY_CHUNK = 400

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
    has not changed since that trace was written (see `_unchanged_files`); otherwise `parse`
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
    # The door's scan parked it for review (stores.services.doorscan).
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


# --- cleaning --------------------------------------------------------------------------


def clean_values(surface_key: str, values: dict[str, Any]) -> dict[str, Any]:
    """Check and coerce imported field values by the model's own field types.

    Raises Invalid naming the field; unknown names are refused (a parser maps file
    fields to model fields and keeps the rest elsewhere, it never drops them here).
    """
    spec = SURFACES[surface_key]
    meta = spec.model._meta
    cleaned: dict[str, Any] = {}
    for name, value in values.items():
        if name in NEVER_IMPORTED:
            raise Invalid(f"{name} cannot be imported as a field.")
        try:
            model_field = meta.get_field(name)
        except Exception:
            raise Invalid(f"{spec.key} records have no field {name!r}.") from None
        cleaned[name] = _clean_field(model_field, value)
    for name in spec.text_fields:
        if name in cleaned:
            check_text_size(spec, cleaned[name])
    return cleaned


def _clean_field(model_field: Any, value: Any) -> Any:
    """A field of an imported record or revision; a subject and a vector are the parser's."""
    if model_field.name == "subject":
        if value is not None and not isinstance(value, Subject):
            raise Invalid("subject must be a known subject of this agent.")
        return value
    if model_field.name == "embedding":
        return _vector(value)
    return validation.field_value(model_field, value)


# Revision fields an import may state; agent, surface and record are always this import's.
REVISION_FIELDS = (
    "version_before",
    "version_after",
    "op",
    "field",
    "actor",
    "channel",
    "before_text",
    "after_text",
    "review",
    "reviewed_at",
    "created_at",
)
# State values that name another row; the parser resolves them within the agent.
NAMED_IN_STATE = frozenset({"subject", "superseded_by"})


def clean_revision(spec: SurfaceSpec, values: dict[str, Any]) -> dict[str, Any]:
    """Check a revision carried by an import against its surface, before anything is stored.

    A revert or restore writes a revision's `field` and states back into the record, so
    `field` must be one of the surface's text fields and each state may hold only the
    surface's state fields, each of its field's type. Raises Invalid naming what is wrong.
    `values` holds exactly REVISION_FIELDS plus `before_state` and `after_state`.
    """
    meta = Revision._meta
    cleaned: dict[str, Any] = {}
    for name in REVISION_FIELDS:
        model_field = meta.get_field(name)
        if name == "created_at" and values[name] is None:
            cleaned[name] = None  # stored with the time of the import
            continue
        cleaned[name] = _clean_field(model_field, values[name])
    if cleaned["version_after"] <= cleaned["version_before"]:
        raise Invalid("version_after must be greater than version_before.")
    if cleaned["field"] not in spec.text_fields:
        raise Invalid(
            f"field {cleaned['field']!r} is not a text field of a {spec.key} record "
            f"(those are {', '.join(spec.text_fields)})."
        )
    for name in ("before_text", "after_text"):
        check_text_size(spec, cleaned[name])
    for name in ("before_state", "after_state"):
        cleaned[name] = clean_state(spec, values[name], name)
    return cleaned


def clean_state(spec: SurfaceSpec, state: Any, name: str) -> dict[str, Any]:
    """A revision's state as an import may store it: the surface's state fields only.

    Values are checked by their field's type and kept as `SurfaceSpec.snapshot` writes them
    (times as ISO 8601 text). `subject` and `superseded_by` stay names (an external id, a
    ref) for the caller to resolve within the agent: an id would point into any agent.
    """
    if not isinstance(state, dict):
        raise Invalid(f"{name} must be a JSON object.")
    unknown = [key for key in state if key not in spec.state_fields]
    if unknown:
        raise Invalid(
            f"{name} holds {', '.join(map(repr, unknown))}, which is not part of a {spec.key} "
            f"record's state (that is {', '.join(spec.state_fields)})."
        )
    meta = spec.model._meta
    cleaned: dict[str, Any] = {}
    for key, value in state.items():
        if key in NAMED_IN_STATE:
            if value is not None and (not isinstance(value, str) or not value):
                raise Invalid(f"{name}: {key} must name its row (text) or be null, not {value!r}.")
            cleaned[key] = value
            continue
        try:
            value = _clean_field(meta.get_field(key), value)
            if key in spec.text_fields:
                check_text_size(spec, value)
        except Invalid as error:
            raise Invalid(f"{name}: {error.message}") from None
        cleaned[key] = value.isoformat() if isinstance(value, dt.datetime) else value
    return cleaned


def _vector(value: Any) -> list[float] | None:
    if value is None:
        return None
    if (
        not isinstance(value, list)
        or len(value) != EMBEDDING_DIMENSIONS
        or not all(is_number(x) for x in value)
    ):
        raise Invalid(f"embedding must be a list of {EMBEDDING_DIMENSIONS} numbers.")
    return [float(x) for x in value]


# --- importing -------------------------------------------------------------------------


@dataclass
class _Link:
    record_id: int
    target_ref: str | None
    source: str
    existing: bool


def import_records(
    *,
    agent: Agent,
    items: Iterable[Incoming | Problem | Trace | Unread],
    actor: Actor,
    dry_run: bool = False,
    progress: Callable[[int], None] | None = None,
    report: ImportReport | None = None,
) -> ImportReport:
    """Create, change or leave alone each incoming record; problems are reported, not raised.

    `items` may interleave Problems (entries a parser could not read), Traces (the shape
    of a file that holds several records) and Unread files (parsed only if they or their
    record changed since the last import) with records; it is consumed in batches, so an
    import of any size holds one batch in memory at a time.
    """
    policy.check_agent(agent, actor=actor, op=OpName.IMPORT)
    report = report or ImportReport()
    report.dry_run = dry_run
    with rare_collections():
        _import_all(agent, items, actor, dry_run, progress, report)
    memories = report.tallies.get(MEMORY.key)
    if not dry_run and memories and memories.created >= term_shares.common_term_memories():
        # Recall would count the new common words at every query until the hourly pass.
        term_shares.term_shares_refresh_agent(agent)
    return report


def _import_all(
    agent: Agent,
    items: Iterable[Incoming | Problem | Trace | Unread],
    actor: Actor,
    dry_run: bool,
    progress: Callable[[int], None] | None,
    report: ImportReport,
) -> None:
    seen: dict[tuple[str, str], str] = {}
    seen_keys: dict[tuple[str, tuple[Any, ...]], str] = {}
    links: list[_Link] = []
    iterator = iter(items)
    while batch := list(islice(iterator, BATCH_SIZE)):
        unchanged = _unchanged_files(agent, [item for item in batch if isinstance(item, Unread)])
        records: list[Incoming] = []
        for item in batch:
            entries: Iterable[Incoming | Problem | Trace]
            if not isinstance(item, Unread):
                entries = [item]
            else:
                alias = unchanged.get((item.source_format, item.path))
                # A file whose id another file of this import already gave is parsed, so it
                # is refused as a duplicate exactly as it is today.
                if alias is not None and (item.surface, alias) not in seen:
                    seen[(item.surface, alias)] = item.path
                    report.tally(item.surface).unchanged += 1
                    continue
                entries = item.parse()
            for entry in entries:
                if isinstance(entry, Problem):
                    report.problems.append(entry)
                    continue
                if isinstance(entry, Trace):
                    if not dry_run:
                        record_file_trace(agent=agent, trace=entry)
                    continue
                refused = _too_long_a_ref(entry) or _duplicate_of(entry, seen, seen_keys)
                if refused:
                    report.problem(entry.source, refused, entry.surface)
                    continue
                records.append(entry)
        for surface_key in SURFACES:
            group = [entry for entry in records if entry.surface == surface_key]
            if group:
                _import_group(SURFACES[surface_key], agent, group, actor, dry_run, report, links)
        if progress:
            progress(len(batch))
    _link_superseded(agent, links, actor, dry_run, report)


def _alias_limit() -> int:
    return VersionedRecord._meta.get_field("alias").max_length


def _too_long_a_ref(entry: Incoming) -> str | None:
    """A ref becomes the record's alias; one that cannot be is refused, never cut.

    A record with a natural key (a working entry's namespace and key, a skill's or task's
    name) is matched by it, so it goes without an alias instead.
    """
    if len(entry.ref) <= _alias_limit() or entry.natural_key is not None:
        return None
    return f"its id is {len(entry.ref)} characters long; at most {_alias_limit()} fit."


def _duplicate_of(
    entry: Incoming,
    seen: dict[tuple[str, str], str],
    seen_keys: dict[tuple[str, tuple[Any, ...]], str],
) -> str | None:
    first = seen.get((entry.surface, entry.ref))
    if first is not None:
        return f"the id {entry.ref!r} was already read from {first}; this copy is skipped."
    key = entry.natural_key
    if key is not None:
        first = seen_keys.get((entry.surface, key))
        if first is not None:
            return f"{entry.surface} {'/'.join(map(str, key))!r} was already read from {first}."
        seen_keys[(entry.surface, key)] = entry.source
    seen[(entry.surface, entry.ref)] = entry.source
    return None


def _import_group(
    spec: SurfaceSpec,
    agent: Agent,
    entries: list[Incoming],
    actor: Actor,
    dry_run: bool,
    report: ImportReport,
    links: list[_Link],
) -> None:
    matches = _match_existing(spec, agent, entries)
    new = [entry for entry in entries if entry.ref not in matches]
    tally = report.tally(spec.key)
    traces = _current_traces(agent, [e for e in entries if e.ref in matches])
    kept: list[ImportedSource] = []
    for entry in entries:
        record = matches.get(entry.ref)
        if record is None:
            continue
        _sync_existing(spec, agent, record, entry, actor, dry_run, report, traces, kept)
        if spec is MEMORY and entry.successor_stated:
            links.append(_Link(record.pk, entry.superseded_by, entry.source, existing=True))
    if kept:
        # The traces of records left alone, in one statement: the first re-import after
        # digests were added rewrites every trace.
        with transaction.atomic():
            insert_rows(
                ImportedSource,
                kept,
                unique_fields=("agent", "source_format", "path"),
                update_fields=(*TRACE_FIELDS, "updated_at"),
            )
    new = _screened(spec, agent, new, actor, report)
    if not new:
        return
    if dry_run:
        tally.created += len(new)
        report.created_refs.setdefault(spec.key, []).extend(entry.ref for entry in new)
        return
    created = _create_batch(spec, agent, new, actor)
    tally.created += len(created)
    for entry, record in created:
        if spec is MEMORY and entry.superseded_by:
            links.append(_Link(record.pk, entry.superseded_by, entry.source, existing=False))


def _screened(
    spec: SurfaceSpec, agent: Agent, entries: list[Incoming], actor: Actor, report: ImportReport
) -> list[Incoming]:
    """New entries past the door's scan, masked or held as the agent's policy says; an entry
    it refuses is a problem of the report. (A record that exists is changed through the edit
    service, which scans it there.)"""
    passed = []
    for entry in entries:
        try:
            screened = doorscan.screen(
                agent=agent,
                actor=actor.with_source(entry.provenance),
                text_fields=spec.text_fields,
                values=entry.values,
            )
        except SensitiveData as refused:
            report.problem(entry.source, f"not imported: {refused.message}", spec.key)
            continue
        entry.values = screened.values
        entry.provenance = screened.actor.source
        entry.held = screened.held
        passed.append(entry)
    return passed


def _match_existing(
    spec: SurfaceSpec, agent: Agent, entries: list[Incoming]
) -> dict[str, VersionedRecord]:
    """Existing records of `agent` for these entries: by alias, then id, then name or key."""
    if agent.pk is None:  # a dry run into an agent that does not exist yet
        return {}
    records = spec.model.objects.filter(agent=agent)
    if spec.select_related:
        records = records.select_related(*spec.select_related)
    if spec.embedded:
        # Never compared (NOT_SYNCED): 384 floats a record parsed for nothing.
        records = records.defer("embedding")
    by_alias = {r.alias: r for r in records.filter(alias__in=[e.ref for e in entries])}
    matches: dict[str, VersionedRecord] = {}
    by_id: dict[int, VersionedRecord] = {}
    ids = [e.same_record_if[0] for e in entries if e.same_record_if and e.ref not in by_alias]
    if ids:
        by_id = {r.pk: r for r in records.filter(pk__in=ids, alias__isnull=True)}
    by_key = _by_natural_key(spec, records, entries)
    for entry in entries:
        record = by_alias.get(entry.ref)
        if record is None and entry.same_record_if:
            candidate = by_id.get(entry.same_record_if[0])
            if candidate is not None and candidate.created_at == entry.same_record_if[1]:
                record = candidate
        if record is None and entry.natural_key is not None:
            record = by_key.get(entry.natural_key)
        if record is not None:
            matches[entry.ref] = record
    return matches


def _by_natural_key(
    spec: SurfaceSpec, records: models.QuerySet, entries: list[Incoming]
) -> dict[tuple[Any, ...], VersionedRecord]:
    if spec.natural_key is None:
        return {}
    if spec.one_per_agent:
        document = records.first()
        return {(): document} if document is not None else {}
    found: dict[tuple[Any, ...], VersionedRecord] = {}
    # One condition per entry, OR-ed: SQLite parses the chain as a tree as deep as it is long,
    # and refuses one deeper than 1,000, so the entries are matched a chunk at a time.
    for start in range(0, len(entries), NATURAL_KEY_CHUNK):
        condition = Q()
        for entry in entries[start : start + NATURAL_KEY_CHUNK]:
            condition |= Q(**{name: entry.values.get(name) for name in spec.natural_key})
        for record in records.filter(condition):
            found[tuple(getattr(record, name) for name in spec.natural_key)] = record
    return found


def _differences(spec: SurfaceSpec, record: VersionedRecord, values: dict[str, Any]) -> dict:
    changed: dict[str, Any] = {}
    for name, value in values.items():
        if name in NOT_SYNCED:
            continue
        model_field = spec.model._meta.get_field(name)
        current = getattr(record, model_field.attname)
        wanted = value.pk if isinstance(value, models.Model) else value
        if current != wanted:
            changed[name] = value
    return changed


# How much of a value a report quotes.
_QUOTED = 60


def _what_changes(spec: SurfaceSpec, record: VersionedRecord, changed: dict[str, Any]) -> list[str]:
    """Each changed field as a person reads it: a text by its length, a mapping by the keys
    it gains, loses or changes (one level into nested mappings), anything else from → to."""
    said: list[str] = []
    for name in sorted(changed):
        current = getattr(record, getattr(spec.model._meta.get_field(name), "attname", name))
        wanted = changed[name]
        wanted = wanted.pk if isinstance(wanted, models.Model) else wanted
        if name in spec.text_fields:
            said.append(
                f"{name}: the text changes ({len(current or '')} → {len(wanted or '')} characters)"
            )
        elif isinstance(current, dict) or isinstance(wanted, dict):
            said.append(f"{name}: {'; '.join(_mapping_changes(current or {}, wanted or {}))}")
        else:
            said.append(f"{name}: {_quoted(current)} → {_quoted(wanted)}")
    return said


def _mapping_changes(
    current: dict[str, Any], wanted: dict[str, Any], prefix: str = ""
) -> list[str]:
    said: list[str] = []
    for key in sorted(set(current) | set(wanted), key=str):
        path = f"{prefix}{key}"
        if key not in current:
            said.append(f"{path} added")
        elif key not in wanted:
            said.append(f"{path} removed")
        elif current[key] != wanted[key]:
            if isinstance(current[key], dict) and isinstance(wanted[key], dict) and not prefix:
                said += _mapping_changes(current[key], wanted[key], f"{path}.")
            else:
                said.append(f"{path} {_quoted(current[key])} → {_quoted(wanted[key])}")
    return said


def _quoted(value: Any) -> str:
    shown = repr(value.isoformat() if hasattr(value, "isoformat") else value)
    return shown if len(shown) <= _QUOTED else shown[: _QUOTED - 1] + "…"


def _sync_existing(
    spec: SurfaceSpec,
    agent: Agent,
    record: VersionedRecord,
    entry: Incoming,
    actor: Actor,
    dry_run: bool,
    report: ImportReport,
    traces: dict[tuple[str, str], ImportedSource],
    kept: list[ImportedSource],
) -> None:
    """Compare one file with its record; the trace of a record left alone goes to `kept`."""
    tally = report.tally(spec.key)
    changed = _differences(spec, record, entry.values)
    if not changed:
        tally.unchanged += 1
        if not dry_run:
            row = _trace_update(spec, agent, record, entry, traces)
            if row is not None:
                kept.append(row)
            _add_missing_history(spec, agent, record, entry, actor)
        return
    report.changes.append(
        ChangeNote(spec.key, entry.ref, sorted(changed), _what_changes(spec, record, changed))
    )
    if dry_run:
        tally.changed += 1
        return
    try:
        with transaction.atomic():
            for result in _apply_changes(spec, agent, record, changed, actor):
                if not result.ok:
                    raise ApplicationError(f"{result.status}: {result.message}")
            _keep_trace(spec, agent, record, entry, traces)
    except (ApplicationError, IntegrityError) as error:
        message = error.message if isinstance(error, ApplicationError) else str(error)
        report.problem(entry.source, f"not changed ({message})", spec.key)
        report.changes.pop()
        return
    tally.changed += 1


def _apply_changes(
    spec: SurfaceSpec,
    agent: Agent,
    record: VersionedRecord,
    changed: dict[str, Any],
    actor: Actor,
) -> Iterator[WriteResult]:
    """Text and everyday fields through record_update; the rest as one `import` write."""
    editable = set(spec.text_fields) | set(spec.updatable_fields)
    everyday = {name: value for name, value in changed.items() if name in editable}
    bookkeeping = {name: value for name, value in changed.items() if name not in editable}
    version = record.version
    if everyday:
        result = record_update(
            surface_key=spec.key,
            agent=agent,
            ref=record.pk,
            actor=actor,
            changes=everyday,
            expected_version=version,
            # The file's text is whole, never a preview: the import read the current text.
            expected_sha256={
                name: text_sha256(getattr(record, name) or "") for name in spec.text_fields
            },
        )
        yield result
        version = result.version or version
    if bookkeeping:
        yield import_sync(
            spec=spec,
            agent=agent,
            record_id=record.pk,
            actor=actor,
            values=bookkeeping,
            expected_version=version,
        )


@returns_result
def import_sync(
    *,
    spec: SurfaceSpec,
    agent: Agent,
    record_id: int,
    actor: Actor,
    values: dict[str, Any],
    expected_version: int,
) -> WriteResult:
    """Bring fields no everyday op sets (reinforcement, expiry, archive times, …) in line with
    the imported file, as one revision with op `import`."""
    model_values = {}
    for name, value in values.items():
        model_field = spec.model._meta.get_field(name)
        model_values[model_field.attname] = value.pk if isinstance(value, models.Model) else value

    def build(record: VersionedRecord) -> Change:
        return Change(op=OpName.IMPORT, values=model_values, details={"fields": sorted(values)})

    return write(
        spec,
        agent=agent,
        ref=record_id,
        actor=actor,
        op=OpName.IMPORT,
        expected_version=expected_version,
        build=build,
    )


def _create_batch(
    spec: SurfaceSpec, agent: Agent, entries: list[Incoming], actor: Actor
) -> list[tuple[Incoming, VersionedRecord]]:
    """Insert records with their first revisions and their traces, all or nothing."""
    records = []
    for entry in entries:
        values = {**entry.defaults, **entry.values}
        alias = entry.ref if len(entry.ref) <= _alias_limit() else None  # see _too_long_a_ref
        record = spec.model(agent=agent, alias=alias, version=entry.version, **values)
        if isinstance(record, EmbeddedRecord):
            record.text_hash = text_fingerprint(record.embedding_text())
        records.append(record)
    with transaction.atomic():
        insert_rows(spec.model, records)
        revisions: list[Revision] = []
        carried: list[tuple[Revision, Any]] = []
        for entry, record in zip(entries, records, strict=True):
            if entry.history:
                for revision, created_at in _history_rows(spec, agent, record, entry.history):
                    revisions.append(revision)
                    carried.append((revision, created_at))
                continue
            revisions.append(
                first_revision(
                    spec,
                    record,
                    actor=actor.with_source(entry.provenance),
                    op=OpName.IMPORT,
                    held=entry.held,
                )
            )
        insert_rows(Revision, revisions)
        webhooks.after_commit(agent.pk)
        _restore_revision_times(carried)
        insert_rows(
            ImportedSource,
            [
                _trace_row(spec, agent, record, entry, entry.trace.raw)
                for entry, record in zip(entries, records, strict=True)
                if entry.trace is not None
            ],
            unique_fields=("agent", "source_format", "path"),
            update_fields=(*TRACE_FIELDS, "updated_at"),
        )
    return list(zip(entries, records, strict=True))


def _history_rows(
    spec: SurfaceSpec, agent: Agent, record: VersionedRecord, history: list[dict[str, Any]]
) -> Iterator[tuple[Revision, Any]]:
    """Revisions carried by an export; states naming a successor by ref get its id here."""
    refs = {
        state["superseded_by"]
        for row in history
        for state in (row.get("before_state") or {}, row.get("after_state") or {})
        if isinstance(state.get("superseded_by"), str)
    }
    resolved = _resolve_memory_refs(agent, refs) if refs else {}
    for row in history:
        values = dict(row)
        created_at = values.pop("created_at", None)
        for side in ("before_state", "after_state"):
            state = values.get(side) or {}
            if isinstance(state.get("superseded_by"), str):
                values[side] = {**state, "superseded_by": resolved.get(state["superseded_by"])}
        values["after_hash"] = after_hash(values.get("op", ""), values.get("after_text", ""))
        yield Revision(agent=agent, surface=spec.key, record_id=record.pk, **values), created_at


def _restore_revision_times(carried: list[tuple[Revision, Any]]) -> None:
    """Revision.created_at is set on insert; history carried by an export keeps its own time."""
    for revision, created_at in carried:
        if created_at is not None:
            Revision.objects.filter(pk=revision.pk).update(created_at=created_at)


def _add_missing_history(
    spec: SurfaceSpec, agent: Agent, record: VersionedRecord, entry: Incoming, actor: Actor
) -> None:
    """A re-import of an export with history adds the revisions this record lacks."""
    if not entry.history:
        return
    present = recorded_versions(spec.key, record.pk)
    # A revision past the record's own version would take the number of its next write.
    missing = [
        row
        for row in entry.history
        if row["version_after"] not in present and row["version_after"] <= record.version
    ]
    if not missing:
        return
    with transaction.atomic():
        rows = list(_history_rows(spec, agent, record, missing))
        Revision.objects.bulk_create([revision for revision, _ in rows])
        webhooks.after_commit(agent.pk)
        _restore_revision_times(rows)


def _trace_row(
    spec: SurfaceSpec,
    agent: Agent,
    record: VersionedRecord,
    entry: Incoming,
    raw: dict[str, Any],
) -> ImportedSource:
    """The trace of `entry` as it now matches `record` (whose version and decay are current)."""
    trace = entry.trace
    assert trace is not None
    # A file naming a successor is always parsed: whether its link can be set depends on
    # other files (the successor may come in a later import).
    digest = "" if entry.superseded_by else trace.digest
    return ImportedSource(
        agent=agent,
        source_format=trace.source_format,
        path=trace.path,
        surface=spec.key,
        record_id=record.pk,
        position=trace.position,
        raw=raw,
        digest=digest,
        record_version=record.version if digest else None,
        record_decayed_at=getattr(record, UNVERSIONED, None) if digest else None,
    )


def _current_traces(agent: Agent, entries: list[Incoming]) -> dict[tuple[str, str], ImportedSource]:
    paths = [entry.trace.path for entry in entries if entry.trace is not None]
    if not paths or agent.pk is None:
        return {}
    rows = ImportedSource.objects.filter(agent=agent, path__in=paths)
    return {(row.source_format, row.path): row for row in rows}


def _trace_update(
    spec: SurfaceSpec,
    agent: Agent,
    record: VersionedRecord,
    entry: Incoming,
    traces: dict[tuple[str, str], ImportedSource],
) -> ImportedSource | None:
    """The trace `entry` leaves for `record`, or None when the one stored already says it."""
    trace = entry.trace
    if trace is None:
        return None
    current = traces.get((trace.source_format, trace.path))
    same_record = (
        current is not None and current.record_id == record.pk and current.surface == spec.key
    )
    raw = _carry_absent(current.raw, trace.raw) if same_record else trace.raw
    row = _trace_row(spec, agent, record, entry, raw)
    if same_record and all(getattr(current, name) == getattr(row, name) for name in TRACE_FIELDS):
        return None
    return row


def _keep_trace(
    spec: SurfaceSpec,
    agent: Agent,
    record: VersionedRecord,
    entry: Incoming,
    traces: dict[tuple[str, str], ImportedSource],
) -> None:
    """Store the trace of a record just changed to match its file."""
    # The writes re-read the record: its version (and decay) are the stored ones now.
    record.refresh_from_db(fields=["version", *_unversioned(spec)])
    row = _trace_update(spec, agent, record, entry, traces)
    if row is None:
        return
    ImportedSource.objects.update_or_create(
        agent=agent,
        source_format=row.source_format,
        path=row.path,
        defaults={name: getattr(row, name) for name in TRACE_FIELDS},
    )


def _unversioned(spec: SurfaceSpec) -> list[str]:
    return [UNVERSIONED] if hasattr(spec.model, UNVERSIONED) else []


def _unchanged_files(agent: Agent, files: list[Unread]) -> dict[tuple[str, str], str]:
    """The files whose bytes and whose record are as their trace notes, with the record's
    alias (its ref): an import counts them unchanged without parsing them.

    Only for surfaces matched by alias alone (a file of a record found by its name or key
    says its ref only when parsed).
    """
    if not files or agent.pk is None:
        return {}
    wanted = {(item.source_format, item.path): item for item in files}
    rows: list[tuple[Any, ...]] = []
    for source_format in {item.source_format for item in files}:
        # By the whole of the unique index (agent, format, path): without the format, every
        # trace of the agent would be read for each batch.
        rows.extend(
            ImportedSource.objects.filter(
                agent=agent,
                source_format=source_format,
                path__in=[path for fmt, path in wanted if fmt == source_format],
            )
            .exclude(digest="")
            .values_list(
                "source_format",
                "path",
                "surface",
                "record_id",
                "digest",
                "record_version",
                "record_decayed_at",
            )
        )
    noted: dict[str, dict[int, tuple[tuple[str, str], int | None, Any]]] = {}
    for source_format, path, surface, record_id, digest, version, decayed_at in rows:
        item = wanted.get((source_format, path))
        if item is None or item.digest != digest or item.surface != surface:
            continue
        if record_id is None or SURFACES[surface].natural_key is not None:
            continue
        noted.setdefault(surface, {})[record_id] = ((source_format, path), version, decayed_at)
    unchanged: dict[tuple[str, str], str] = {}
    for surface, by_record in noted.items():
        spec = SURFACES[surface]
        current = spec.model.objects.filter(agent=agent, pk__in=list(by_record)).values_list(
            "pk", "alias", "version", *_unversioned(spec)
        )
        for pk, alias, version, *decayed in current:
            key, noted_version, noted_decayed_at = by_record[pk]
            if (
                alias is not None
                and version == noted_version
                and (decayed[0] if decayed else None) == noted_decayed_at
            ):
                unchanged[key] = alias
    return unchanged


def _carry_absent(before: dict[str, Any], raw: dict[str, Any]) -> dict[str, Any]:
    """`raw`, with the values its `absent` notes for fields the file still does not state
    taken from the trace it replaces.

    A trace's `absent` (a convention of the file formats) maps the fields a file leaves out
    to the value the record was given in their place, so that an export leaves out a field
    whose value is still that one. Defaults apply to a new record only: on a re-import the
    reader's defaults (a timestamp of "now") are not the record's, and noting them made the
    next export add UpdatedAt, LastSeenAt, StoredAt to files that never had them.
    """
    earlier, absent = before.get("absent"), raw.get("absent")
    if not isinstance(earlier, dict) or not isinstance(absent, dict):
        return raw
    return {**raw, "absent": {name: earlier.get(name, value) for name, value in absent.items()}}


def record_file_trace(*, agent: Agent, trace: Trace) -> None:
    """Remember the shape of a file that is not one record (e.g. a working-memory group)."""
    ImportedSource.objects.update_or_create(
        agent=agent,
        source_format=trace.source_format,
        path=trace.path,
        defaults={"surface": "", "record_id": None, "position": trace.position, "raw": trace.raw},
    )


def _link_superseded(
    agent: Agent, links: list[_Link], actor: Actor, dry_run: bool, report: ImportReport
) -> None:
    """Point superseded memories at their successors once every memory is in place."""
    if not links or dry_run:
        return
    targets = {link.target_ref for link in links if link.target_ref}
    resolved = _resolve_memory_refs(agent, targets)
    existing_ids = [link.record_id for link in links if link.existing]
    current: dict[int, tuple[int | None, int]] = {}
    for start in range(0, len(existing_ids), BATCH_SIZE):
        rows = Memory.objects.filter(pk__in=existing_ids[start : start + BATCH_SIZE])
        current.update(
            (pk, (successor, version))
            for pk, successor, version in rows.values_list("pk", "superseded_by", "version")
        )
    new_links: list[Memory] = []
    for link in links:
        target_id = resolved.get(link.target_ref) if link.target_ref else None
        if link.target_ref and target_id is None:
            report.problem(
                link.source,
                f"SupersededBy {link.target_ref!r} names no memory of this agent; the link "
                "is kept in the file fields and not set.",
            )
            continue
        if not link.existing:
            new_links.append(Memory(pk=link.record_id, superseded_by_id=target_id))
            continue
        if link.record_id not in current or current[link.record_id][0] == target_id:
            continue
        result = import_sync(
            spec=MEMORY,
            agent=agent,
            record_id=link.record_id,
            actor=actor,
            values={"superseded_by": target_id},
            expected_version=current[link.record_id][1],
        )
        if not result.ok:
            report.problem(link.source, f"SupersededBy not changed ({result.message})")
    if new_links:
        with transaction.atomic():
            # Part of creating these records: their successor may have been inserted later
            # in the same import, so the link can only be set once both exist.
            Memory.objects.bulk_update(new_links, ["superseded_by"], batch_size=500)


def _resolve_memory_refs(agent: Agent, refs: set[str]) -> dict[str, int]:
    resolved: dict[str, int] = {}
    found = Memory.objects.filter(agent=agent, alias__in=refs).values_list("alias", "pk")
    resolved.update(dict(found))
    ids = [int(ref) for ref in refs - set(resolved) if ref.isdecimal()]
    for pk in Memory.objects.filter(agent=agent, pk__in=ids).values_list("pk", flat=True):
        resolved[str(pk)] = pk
    return resolved
