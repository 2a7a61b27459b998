"""A record that exists already: left alone when the file says what it holds, else changed through
the edit engine, each change a revision like any other write.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from django.db import IntegrityError, models, transaction

from stores.editing import text_sha256
from stores.engine.actors import Actor
from stores.engine.commit import Change, write
from stores.engine.results import WriteResult, returns_result
from stores.errors import ApplicationError
from stores.models import (
    Agent,
    ImportedSource,
    VersionedRecord,
)
from stores.opnames import OpName
from stores.services import record_update
from stores.services.importing.entries import NOT_SYNCED, ChangeNote, ImportReport, Incoming
from stores.services.importing.inserting import add_missing_history
from stores.services.importing.traces import keep_trace, trace_update
from stores.surfaces import SurfaceSpec


def _differences(spec: SurfaceSpec, record: VersionedRecord, values: dict[str, Any]) -> dict:
    changed: dict[str, Any] = {}
    for name, value in values.items():
        if name in NOT_SYNCED:
            continue
        model_field = spec.model._meta.get_field(name)
        assert isinstance(model_field, models.Field)  # a field an entry sets, not a relation
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


def sync_existing(
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
            row = trace_update(spec, agent, record, entry, traces)
            if row is not None:
                kept.append(row)
            add_missing_history(spec, agent, record, entry, actor)
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
            keep_trace(spec, agent, record, entry, traces)
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
        assert isinstance(model_field, models.Field)  # a field an entry sets, not a relation
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
