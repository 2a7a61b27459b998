"""Reading a PAM memory store: refused by its size unread, checked whole as the SDK checks it
(its memories streamed, see `checking`), then brought in through the import service one batch
at a time, reading the memories a second time."""

from __future__ import annotations

import hashlib
import itertools
import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from django.db import transaction
from portable_ai_memory import MemoryObject
from portable_ai_memory.models.enums import RelationType
from portable_ai_memory.models.memory_store import ProvenanceBlock

from stores.engine.actors import Actor
from stores.engine.sources import parse_source
from stores.errors import ApplicationError
from stores.interchange.pam.checking import Checked, check_store
from stores.interchange.pam.document import Document, from_dict
from stores.interchange.pam.mapping import (
    RESIDUE,
    SCHEMA,
    SCHEMA_VERSION,
    Parsed,
    Refused,
    memory_fields,
    source_of,
)
from stores.models import Agent, Subject, Suggestion
from stores.runtime.collector import rare_collections
from stores.services.agents import subject_create
from stores.services.importing.cleaning import clean_values
from stores.services.importing.entries import ImportReport, Incoming, Trace, Unread
from stores.services.importing.run import import_records
from stores.services.suggestions import suggestion_create
from stores.surfaces import MEMORY

# How an imported memory's trace names where it was read: its id in a memory store.
TRACE_FORMAT = "pam"
TRACE_FILE = "memory-store.json"
# Part of every memory's digest: a change to how a memory is read here reads every file again.
READING_VERSION = 1


def check(document: Document | dict[str, Any]) -> Checked:
    """A memory store through every check of the SDK (see `checking`); raises Refused."""
    return check_store(document if isinstance(document, Document) else from_dict(document))


@dataclass
class Reading:
    """A checked memory store as the import service takes it: each memory an Unread entry,
    parsed only when its digest or its record changed since it was last imported."""

    items: Iterator[Unread]
    notes: list[str] = field(default_factory=list)


# The times a memory is given when its file states none: they apply to a new memory only.
INVENTED_TIMES = ("created_at", "updated_at", "last_seen_at")


@dataclass(frozen=True)
class _Around:
    """What of the document around a memory its reading takes in."""

    successor: str | None
    relations: list[dict[str, Any]]
    conversation: dict[str, Any] | None


def read_store(
    document: Document,
    checked: Checked,
    *,
    subjects: dict[str, Subject],
    times_stated: bool = True,
) -> Reading:
    """Every memory of a checked store as an entry of the import, read as the import consumes
    them (one batch at a time). Each carries a digest of all its reading takes in (its JSON,
    its relations, its conversation, how times are read): a re-import leaves a memory whose
    digest and record are as its trace notes without reading it further. Reading one raises
    Refused when memoryadmin cannot hold it, and the import, in one transaction, then writes
    nothing."""
    relations_from: dict[str, list[dict[str, Any]]] = {}
    successor_of: dict[str, str] = {}
    for relation in checked.relations:
        doc = relation.model_dump(mode="json", by_alias=True, exclude_none=True)
        if relation.type == RelationType.SUPERSEDES:
            successor_of.setdefault(relation.to, relation.from_)
        relations_from.setdefault(relation.from_, []).append(doc)
    index = {
        entry.id: entry.model_dump(
            mode="json", by_alias=True, exclude_none=True, exclude={"derived_memories"}
        )
        for entry in checked.conversations_index
    }
    # The memory an export takes a conversation's entry from: the first in id order.
    first_derived = {
        entry.id: min(entry.derived_memories)
        for entry in checked.conversations_index
        if entry.derived_memories
    }

    def successor(memory_id: str) -> str | None:
        return checked.stated_successors.get(memory_id) or successor_of.get(memory_id)

    def items() -> Iterator[Unread]:
        for position, raw in enumerate(document.memories()):
            memory_id = raw["id"]
            provenance = raw["provenance"]
            around = _Around(
                successor=successor_of.get(memory_id),
                relations=[
                    relation
                    for relation in relations_from.get(memory_id, [])
                    if not _derived_relation(relation, successor)
                ],
                conversation=_kept_conversation(
                    raw, index.get(provenance.get("conversation_ref") or ""), first_derived
                ),
            )
            path = f"{TRACE_FILE}#{memory_id}"
            stated = [READING_VERSION, raw, around.relations, around.conversation]
            stated += [around.successor, times_stated]
            digest = hashlib.sha256(json.dumps(stated, sort_keys=True).encode()).hexdigest()
            trace = Trace(TRACE_FORMAT, path, position, {}, digest)
            yield Unread(
                surface=MEMORY.key,
                source_format=TRACE_FORMAT,
                path=path,
                digest=digest,
                parse=partial(_read_memory, raw, around, trace, subjects, times_stated),
            )

    reading = Reading(items=items())
    named = checked.naming_an_embedding
    if named:
        reading.notes.append(
            f"{named} memor{'y names' if named == 1 else 'ies name'} an embedding; vectors are "
            "computed here from the text (the embeddings file is not read)."
        )
    for ref in sorted(set(index) - checked.conversations_named):
        reading.notes.append(
            f"conversation {ref!r}: no memory of the file was derived from it; its index entry "
            "is not kept."
        )
    return reading


def _read_memory(
    raw: dict[str, Any],
    around: _Around,
    trace: Trace,
    subjects: dict[str, Subject],
    times_stated: bool,
) -> Iterable[Incoming]:
    """One memory (checked already) as the import service's entry."""
    memory = MemoryObject.model_validate(raw)
    parsed = memory_fields(memory)
    if parsed.superseded_by is None and around.successor is not None:
        parsed.superseded_by = around.successor
        if parsed.values["invalidated_at"] is None:
            parsed.values["invalidated_at"] = (
                memory.temporal.valid_until or parsed.values["updated_at"]
            )
    residue = parsed.values["metadata"].get(RESIDUE, {})
    if around.relations:
        residue["relations"] = around.relations
    if around.conversation is not None:
        residue["conversation"] = around.conversation
    if residue:
        parsed.values["metadata"][RESIDUE] = residue
    return [_incoming(parsed, subjects, times_stated, memory.provenance, trace)]


def _kept_conversation(
    raw: dict[str, Any], entry: dict[str, Any] | None, first_derived: dict[str, str]
) -> dict[str, Any] | None:
    """The conversation index entry a memory keeps, or None when an export writes it by
    itself: an export takes each conversation's entry from its first memory in id order,
    from what that memory kept, else derived from its provenance and creation time."""
    if entry is None:
        return None
    # The SDK's model gives an entry its empty defaults (no tags): an export writes none.
    stated = {name: value for name, value in entry.items() if value != []}
    derived = {
        "id": entry["id"],
        "platform": raw["provenance"].get("platform"),
        "temporal": {"created_at": raw["temporal"].get("created_at")},
    }
    first = first_derived.get(entry["id"])
    if stated == derived or (first is not None and first != raw["id"] and _shape_of(stated)):
        return None
    return entry


def _shape_of(entry: dict[str, Any]) -> bool:
    """An entry an export derives: an id, a platform and when it began, nothing else (the
    memory it is derived from keeps it when it differs)."""
    return set(entry) == {"id", "platform", "temporal"} and set(entry["temporal"]) == {"created_at"}


def _derived_relation(relation: dict[str, Any], successor: Callable[[str], str | None]) -> bool:
    """Whether an export writes this relation by itself (the supersedes link it states)."""
    return (
        relation["type"] == RelationType.SUPERSEDES
        and relation["id"] == f"supersedes:{relation['to']}"
        and successor(relation["to"]) == relation["from"]
    )


def _incoming(
    parsed: Parsed,
    subjects: dict[str, Subject],
    times_stated: bool,
    provenance: ProvenanceBlock,
    trace: Trace,
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
        trace=trace,
    )


@dataclass
class PamImport:
    """What an import of a memory store did (or, in a dry run, would do)."""

    report: ImportReport
    notes: list[str] = field(default_factory=list)


def import_memory_store(
    *,
    agent: Agent,
    document: Document | dict[str, Any],
    actor: Actor,
    dry_run: bool = False,
    times_stated: bool = True,
    files: list[Incoming] | None = None,
) -> PamImport:
    """Check the whole store as the SDK does, then bring its memories in through the import
    service: a memory already here and the same is left alone (no revision), a changed one is
    changed by the edit service. Raises Refused, with nothing written, when any memory fails a
    check of the SDK or of memoryadmin. `files` (memory files another tool's export held) come
    in with the memories; `times_stated` False says the store's times were made up by a
    converter, so they are given to new memories only and never compared.

    A file or an upload is read twice as a stream (checked, then imported), so its memories
    are never all in memory at once."""
    if not isinstance(document, Document):
        document = from_dict(document)
    with rare_collections():
        return _import_checked(agent, document, actor, dry_run, times_stated, files)


def _import_checked(
    agent: Agent,
    document: Document,
    actor: Actor,
    dry_run: bool,
    times_stated: bool,
    files: list[Incoming] | None,
) -> PamImport:
    checked = check_store(document)
    wanted = checked.subjects
    known = {} if agent.pk is None else {s.external_id: s for s in agent.subjects.all()}
    missing = {ref: fields for ref, fields in wanted.items() if ref not in known}
    planned = {
        ref: Subject(agent=agent, **_subject_values(ref, fields)) for ref, fields in missing.items()
    }
    reading = read_store(
        document, checked, subjects={**known, **planned}, times_stated=times_stated
    )
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
            items=itertools.chain(reading.items, files or []),
            actor=actor,
            dry_run=dry_run,
            report=report,
        )
        contradictions = [
            (relation.from_, relation.to)
            for relation in checked.relations
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
