"""Import traces: where each record came from in a file, so that a file imported again skips what
it holds unchanged.
"""

from __future__ import annotations

from typing import Any

from stores.models import (
    Agent,
    ImportedSource,
    VersionedRecord,
)
from stores.services.importing.entries import TRACE_FIELDS, UNVERSIONED, Incoming, Trace, Unread
from stores.surfaces import SURFACES, SurfaceSpec


def trace_row(
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


def current_traces(agent: Agent, entries: list[Incoming]) -> dict[tuple[str, str], ImportedSource]:
    paths = [entry.trace.path for entry in entries if entry.trace is not None]
    if not paths or agent.pk is None:
        return {}
    rows = ImportedSource.objects.filter(agent=agent, path__in=paths)
    return {(row.source_format, row.path): row for row in rows}


def trace_update(
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
    same_record = False
    raw = trace.raw
    if current is not None and current.record_id == record.pk and current.surface == spec.key:
        same_record = True
        raw = _carry_absent(current.raw, trace.raw)
    row = trace_row(spec, agent, record, entry, raw)
    if same_record and all(getattr(current, name) == getattr(row, name) for name in TRACE_FIELDS):
        return None
    return row


def keep_trace(
    spec: SurfaceSpec,
    agent: Agent,
    record: VersionedRecord,
    entry: Incoming,
    traces: dict[tuple[str, str], ImportedSource],
) -> None:
    """Store the trace of a record just changed to match its file."""
    # The writes re-read the record: its version (and decay) are the stored ones now.
    record.refresh_from_db(fields=["version", *_unversioned(spec)])
    row = trace_update(spec, agent, record, entry, traces)
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


def unchanged_files(agent: Agent, files: list[Unread]) -> dict[tuple[str, str], str]:
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
