"""Reading a PAM memory store: refused by its size unread, validated whole by the SDK, then
brought in through the import service."""

from __future__ import annotations

import itertools
import json
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from django.conf import settings
from django.db import transaction
from portable_ai_memory import (
    MemoryStore,
    PAMError,
    PAMValidationError,
    load_dict,
    validate_memory_store,
)
from portable_ai_memory.models.enums import RelationType
from portable_ai_memory.models.memory_store import ProvenanceBlock
from pydantic import ValidationError

from stores.errors import ApplicationError
from stores.interchange.pam.mapping import (
    EXTENSION,
    RESIDUE,
    SCHEMA,
    SCHEMA_VERSION,
    SUBJECT_FIELDS,
    Parsed,
    Refused,
    memory_fields,
    source_of,
)
from stores.models import Agent, Subject, Suggestion
from stores.services import Actor, subject_create
from stores.services.importing import ImportReport, Incoming, clean_values, import_records
from stores.services.sources import parse_source
from stores.services.suggestions import suggestion_create
from stores.surfaces import MEMORY


def max_bytes() -> int:
    return int(settings.MEMORYADMIN["MAX_IMPORT_BYTES"])


def read_json(path: Path) -> Any:
    """The JSON of a file to import, refused by its size before a byte of it is read."""
    size = path.stat().st_size
    limit = max_bytes()
    if size > limit:
        raise Refused(
            "size-limit",
            f"{path.name} is {size:,} bytes; at most {limit:,} are read "
            "(MEMORYADMIN_MAX_IMPORT_BYTES).",
        )
    with path.open("rb") as handle:
        return parse_json(handle.read(limit + 1), path.name)


def read_document(path: Path) -> dict[str, Any]:
    """A PAM file's JSON object."""
    return _object(read_json(path), path.name)


def parse_json(data: bytes, name: str) -> Any:
    if len(data) > max_bytes():
        raise Refused("size-limit", f"{name} is larger than {max_bytes():,} bytes.")
    try:
        return json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError, RecursionError) as error:
        raise Refused("json", f"{name} is not JSON text: {error}.") from None


def parse_bytes(data: bytes, name: str) -> dict[str, Any]:
    """An uploaded PAM file's JSON object."""
    return _object(parse_json(data, name), name)


def _object(document: Any, name: str) -> dict[str, Any]:
    if not isinstance(document, dict):
        raise Refused("schema", f"{name} is not a JSON object.")
    return document


def load_store(document: dict[str, Any]) -> MemoryStore:
    """The memory store, through the SDK's models and its deep validator; any error refuses
    the whole file, naming the memory and the check."""
    try:
        store = load_dict(document)
    except PAMValidationError as error:
        raise Refused("schema", _schema_message(error, document)) from None
    except PAMError as error:
        raise Refused("schema", str(error)) from None
    if not isinstance(store, MemoryStore):
        raise Refused("schema", f"not a memory store (its schema is {document.get('schema')!r}).")
    result = validate_memory_store(store)
    if not result.is_valid:
        first = result.errors[0]
        more = f" (and {len(result.errors) - 1} more)" if len(result.errors) > 1 else ""
        raise Refused(first.check, f"{first.message}{more}")
    return store


def _schema_message(error: PAMValidationError, document: dict[str, Any]) -> str:
    """The SDK's first schema error, naming the memory (by its id) it is in."""
    cause = error.pydantic_error
    if not isinstance(cause, ValidationError) or not cause.errors():
        return str(error)
    first = cause.errors()[0]
    location = list(first["loc"])
    where = ".".join(str(part) for part in location) or "the document"
    if len(location) >= 2 and location[0] == "memories" and isinstance(location[1], int):
        memories = document.get("memories") or []
        memory = memories[location[1]] if location[1] < len(memories) else None
        name = memory.get("id") if isinstance(memory, dict) else None
        inner = ".".join(str(part) for part in location[2:]) or "the memory"
        where = f"memory {name!r} (memories[{location[1]}]), {inner}"
    more = f" (and {cause.error_count() - 1} more)" if cause.error_count() > 1 else ""
    return f"{where}: {first['msg']}{more}"


@dataclass
class Reading:
    """A validated memory store as the import service takes it."""

    incoming: Iterator[Incoming]
    notes: list[str] = field(default_factory=list)


def subjects_in(store: MemoryStore) -> dict[str, dict[str, Any]]:
    """The subjects the memories' extensions name, by external id (the first spelling wins)."""
    found: dict[str, dict[str, Any]] = {}
    for memory in store.memories:
        extension = (memory.metadata.model_extra or {}).get(EXTENSION) if memory.metadata else None
        subject = extension.get("subject") if isinstance(extension, dict) else None
        if not isinstance(subject, dict):
            continue
        external_id = subject.get("external_id")
        if not isinstance(external_id, str) or not external_id:
            raise Refused("subject", f"memory {memory.id!r}: its subject has no external_id.")
        found.setdefault(external_id, {k: subject[k] for k in SUBJECT_FIELDS if k in subject})
    return found


# The times a memory is given when its file states none: they apply to a new memory only.
INVENTED_TIMES = ("created_at", "updated_at", "last_seen_at")


def read_store(
    store: MemoryStore, *, subjects: dict[str, Subject], times_stated: bool = True
) -> Reading:
    """Every memory of a validated store as an Incoming record, made as the import consumes
    them (one batch at a time); making one raises Refused when memoryadmin cannot hold it, and
    the import, in one transaction, then writes nothing."""
    relations_from: dict[str, list[dict[str, Any]]] = {}
    successor_of: dict[str, str] = {}
    for relation in store.relations:
        doc = relation.model_dump(mode="json", by_alias=True, exclude_none=True)
        if relation.type == RelationType.SUPERSEDES:
            successor_of.setdefault(relation.to, relation.from_)
        relations_from.setdefault(relation.from_, []).append(doc)
    index = {
        entry.id: entry.model_dump(mode="json", by_alias=True, exclude_none=True)
        for entry in store.conversations_index
    }
    successors = {
        memory.id: memory.temporal.superseded_by or successor_of.get(memory.id)
        for memory in store.memories
    }

    def incoming() -> Iterator[Incoming]:
        for memory in store.memories:
            parsed = memory_fields(memory)
            if parsed.superseded_by is None and memory.id in successor_of:
                parsed.superseded_by = successor_of[memory.id]
                if parsed.values["invalidated_at"] is None:
                    parsed.values["invalidated_at"] = (
                        memory.temporal.valid_until or parsed.values["updated_at"]
                    )
            residue = parsed.values["metadata"].get(RESIDUE, {})
            kept = [
                relation
                for relation in relations_from.get(memory.id, [])
                if not _derived_relation(relation, successors)
            ]
            if kept:
                residue["relations"] = kept
            conversation_ref = memory.provenance.conversation_ref
            if conversation_ref in index:
                residue["conversation"] = {
                    key: value
                    for key, value in index[conversation_ref].items()
                    if key != "derived_memories"
                }
            if residue:
                parsed.values["metadata"][RESIDUE] = residue
            yield _incoming(parsed, subjects, times_stated, memory.provenance)

    reading = Reading(incoming=incoming())
    named = sum(1 for memory in store.memories if memory.embedding_ref)
    if named:
        reading.notes.append(
            f"{named} memor{'y names' if named == 1 else 'ies name'} an embedding; vectors are "
            "computed here from the text (the embeddings file is not read)."
        )
    attached = {memory.provenance.conversation_ref for memory in store.memories}
    for ref in sorted(set(index) - attached):
        reading.notes.append(
            f"conversation {ref!r}: no memory of the file was derived from it; its index entry "
            "is not kept."
        )
    return reading


def _derived_relation(relation: dict[str, Any], successors: dict[str, str | None]) -> bool:
    """Whether an export writes this relation by itself (the supersedes link it states)."""
    return (
        relation["type"] == RelationType.SUPERSEDES
        and relation["id"] == f"supersedes:{relation['to']}"
        and successors.get(relation["to"]) == relation["from"]
    )


def _incoming(
    parsed: Parsed,
    subjects: dict[str, Subject],
    times_stated: bool,
    provenance: ProvenanceBlock,
) -> Incoming:
    values = dict(parsed.values)
    where = f"memory {parsed.ref!r}"
    try:
        written_from = parse_source(source_of(provenance), field="provenance")
    except ApplicationError as error:
        raise Refused("memoryadmin", f"{where}: {error.message}") from None
    if parsed.subject is not None:
        external_id = parsed.subject.get("external_id")
        if external_id not in subjects:
            raise Refused("subject", f"{where}: its subject {external_id!r} is not known.")
        values["subject"] = subjects[external_id]
    try:
        values = clean_values(MEMORY.key, values)
    except ApplicationError as error:
        raise Refused("memoryadmin", f"{where}: {error.message}") from None
    created_at = values["created_at"]
    defaults = {}
    if not times_stated:
        defaults = {name: values.pop(name) for name in INVENTED_TIMES}
    return Incoming(
        surface=MEMORY.key,
        ref=parsed.ref,
        values=values,
        defaults=defaults,
        source=where,
        superseded_by=parsed.superseded_by,
        successor_stated=True,
        same_record_if=(int(parsed.ref), created_at) if parsed.ref.isdecimal() else None,
        provenance=written_from or None,
    )


@dataclass
class PamImport:
    """What an import of a memory store did (or, in a dry run, would do)."""

    report: ImportReport
    notes: list[str] = field(default_factory=list)


def import_memory_store(
    *,
    agent: Agent,
    document: dict[str, Any],
    actor: Actor,
    dry_run: bool = False,
    times_stated: bool = True,
    files: list[Incoming] | None = None,
) -> PamImport:
    """Validate the whole store with the SDK, then bring its memories in through the import
    service: a memory already here and the same is left alone (no revision), a changed one is
    changed by the edit service. Raises Refused, with nothing written, when any memory fails a
    check of the SDK or of memoryadmin. `files` (memory files another tool's export held) come
    in with the memories; `times_stated` False says the store's times were made up by a
    converter, so they are given to new memories only and never compared."""
    store = load_store(document)
    # The JSON is not needed past validation: with the caller's reference gone (it passes the
    # document on), it is freed before the memories are made.
    del document
    wanted = subjects_in(store)
    known = {} if agent.pk is None else {s.external_id: s for s in agent.subjects.all()}
    missing = {ref: fields for ref, fields in wanted.items() if ref not in known}
    planned = {
        ref: Subject(agent=agent, **_subject_values(ref, fields)) for ref, fields in missing.items()
    }
    reading = read_store(store, subjects={**known, **planned}, times_stated=times_stated)
    report = ImportReport()
    if missing:
        report.tally("subject").created += len(missing)
    # One transaction: a memory refused halfway through leaves nothing of the file behind.
    with transaction.atomic():
        if not dry_run:
            for ref, subject in planned.items():
                result = subject_create(
                    actor=actor, agent=agent, **_subject_values(ref, wanted[ref])
                )
                if not result.ok:
                    raise Refused("subject", f"subject {ref!r}: {result.message}")
                subject.pk = result.record.pk
        report = import_records(
            agent=agent,
            items=itertools.chain(reading.incoming, files or []),
            actor=actor,
            dry_run=dry_run,
            report=report,
        )
        contradictions = [
            (relation.from_, relation.to)
            for relation in store.relations
            if relation.type == RelationType.CONTRADICTS
        ]
        if contradictions and not dry_run:
            opened = _conflicts_opened(agent, contradictions, actor)
            reading.notes.append(
                f"{len(contradictions)} contradicts relation(s): {opened} conflict suggestion(s) "
                "opened for a person to settle."
            )
        elif contradictions:
            reading.notes.append(
                f"{len(contradictions)} contradicts relation(s) would open conflict suggestions."
            )
    return PamImport(report=report, notes=reading.notes)


def _conflicts_opened(agent: Agent, pairs: list[tuple[str, str]], actor: Actor) -> int:
    """A `contradicts` relation is a conflict someone already saw: it waits in the agent's
    suggestions like one the pass found (the relation itself stays in the metadata, so an
    export writes it back). A pair suggested before, settled or not, is not opened again."""
    refs = {ref for pair in pairs for ref in pair}
    memories = {memory.alias: memory for memory in agent.memories.filter(alias__in=refs)}
    numbered = [ref for ref in refs if ref not in memories and ref.isdecimal()]
    memories.update({str(memory.pk): memory for memory in agent.memories.filter(pk__in=numbered)})
    opened = 0
    for first, second in pairs:
        if first not in memories or second not in memories or first == second:
            continue
        suggestion = suggestion_create(
            agent=agent,
            kind=Suggestion.Kind.CONFLICT,
            memories=[memories[first], memories[second]],
            reason=f"the imported file says {first!r} contradicts {second!r}",
            found_by=actor.label,
            channel=actor.channel,
        )
        opened += suggestion is not None
    return opened


def _subject_values(external_id: str, fields: dict[str, Any]) -> dict[str, Any]:
    values: dict[str, Any] = {
        "external_id": external_id,
        "display_name": fields.get("display_name") or external_id,
    }
    for name in ("privacy_level", "kind", "aliases"):
        if name in fields:
            values[name] = fields[name]
    return values


def empty_store() -> dict[str, Any]:
    """A memory store with no memory (what an export of memory files alone brings)."""
    return {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "owner": {"id": "import"},
        "memories": [],
    }
