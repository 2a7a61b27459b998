"""New records inserted in batches with their first revisions (op `import`), and the history a file
carries for them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db import transaction

from stores.engine import aftercommit
from stores.engine.actors import Actor
from stores.engine.revisions import first_revision
from stores.models import (
    Agent,
    EmbeddedRecord,
    ImportedSource,
    Memory,
    Revision,
    VersionedRecord,
    text_fingerprint,
)
from stores.models.revisions import after_hash
from stores.opnames import OpName
from stores.runtime.bulk import insert_rows
from stores.selectors.revisions import recorded_versions
from stores.services.importing.entries import TRACE_FIELDS, Incoming, alias_limit
from stores.services.importing.traces import trace_row
from stores.surfaces import SurfaceSpec


def create_batch(
    spec: SurfaceSpec, agent: Agent, entries: list[Incoming], actor: Actor
) -> list[tuple[Incoming, VersionedRecord]]:
    """Insert records with their first revisions and their traces, all or nothing."""
    records = []
    for entry in entries:
        values = {**entry.defaults, **entry.values}
        alias = entry.ref if len(entry.ref) <= alias_limit() else None  # see _too_long_a_ref
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
        aftercommit.after_commit(agent.pk)
        _restore_revision_times(carried)
        insert_rows(
            ImportedSource,
            [
                trace_row(spec, agent, record, entry, entry.trace.raw)
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
    resolved = resolve_memory_refs(agent, refs) if refs else {}
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


def add_missing_history(
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
        aftercommit.after_commit(agent.pk)
        _restore_revision_times(rows)


def resolve_memory_refs(agent: Agent, refs: set[str]) -> dict[str, int]:
    # An alias matched is not null.
    found = Memory.objects.filter(agent=agent, alias__in=refs).values_list("alias", "pk")
    resolved = {alias: pk for alias, pk in found if alias is not None}
    ids = [int(ref) for ref in refs - set(resolved) if ref.isdecimal()]
    for pk in Memory.objects.filter(agent=agent, pk__in=ids).values_list("pk", flat=True):
        resolved[str(pk)] = pk
    return resolved
