"""memoryadmin's own export format: one agent as JSON Lines, lossless and deterministic.

Line 1 is a header: `{"format": "memoryadmin-agent", "format_version": 1, "agent": {…},
"with_vectors": …, "with_revisions": …}`. Then one line per subject (by external id), then
the records of each surface in the order memory, working, skill, task, rules, each sorted
by `ref`, each followed by its revisions (oldest first) when revisions are exported.

A record is named by `ref`: its alias (the id it had in the store it came from) or, if it
never had one, its id here. An import keeps `ref` as the alias of a record it creates, so
exporting the imported agent writes the same refs and the same lines: ids of this database
never appear. `superseded_by` names the successor's ref, `subject` the subject's external
id; revision states name them the same way.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

from django.contrib.auth import get_user_model
from django.db import models

from stores.editing.numbers import is_whole_number
from stores.engine import validation
from stores.errors import ApplicationError, Invalid
from stores.interchange import rockbot
from stores.interchange.files import UnsafePath, relative_parts
from stores.models import Agent, ImportedSource, Memory, Revision, Subject, VersionedRecord
from stores.selectors.revisions import record_histories
from stores.services import bounded_json
from stores.services.exports import VECTOR_FIELDS
from stores.services.importing.cleaning import REVISION_FIELDS, clean_revision, clean_values
from stores.services.importing.entries import Incoming, Problem, Trace
from stores.surfaces import MEMORY, SURFACES, SurfaceSpec

FORMAT = "memoryadmin-agent"
FORMAT_VERSION = 1
AGENT_FIELDS = ("name", "display_name", "description", "self_editing_enabled", "review_mode")
SUBJECT_FIELDS = ("external_id", "display_name", "aliases", "privacy_level", "kind")
# Written by the line itself (ref, version) or derived (text_hash), never as a field.
NOT_FIELDS = frozenset({"id", "agent", "alias", "version", "text_hash", *VECTOR_FIELDS})
HEADER_FIELDS = ("format", "format_version", "agent", "with_vectors", "with_revisions")


class FormatError(Exception):
    """The file is not a memoryadmin export this version can read."""


def record_fields(spec: SurfaceSpec) -> list[models.Field]:
    return [field for field in spec.model._meta.concrete_fields if field.name not in NOT_FIELDS]


def _json(value: Any) -> Any:
    if hasattr(value, "isoformat"):
        return value.isoformat()
    return value


def _line(doc: dict[str, Any]) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, sort_keys=False) + "\n").encode("utf-8")


def ref_of(record: VersionedRecord) -> str:
    return record.alias or str(record.pk)


def _ref_order(ref: str) -> tuple[int, int, str]:
    return (0, int(ref), "") if ref.isdecimal() else (1, 0, ref)


# --- writing ---------------------------------------------------------------------------


def count_records(agent: Agent) -> int:
    return sum(spec.model.objects.filter(agent=agent).count() for spec in SURFACES.values())


def write_agent(
    agent: Agent,
    output: IO[bytes],
    *,
    with_vectors: bool = False,
    with_revisions: bool = False,
    on_record: Callable[[int], None] | None = None,
) -> dict[str, int]:
    """Write the whole agent to `output`; returns how many lines of each type were written."""
    counts: dict[str, int] = {}
    header = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "agent": {name: getattr(agent, name) for name in AGENT_FIELDS},
        "with_vectors": with_vectors,
        "with_revisions": with_revisions,
    }
    output.write(_line(header))
    for subject in Subject.objects.filter(agent=agent).order_by("external_id"):
        output.write(_line({"type": "subject", **{n: getattr(subject, n) for n in SUBJECT_FIELDS}}))
        counts["subject"] = counts.get("subject", 0) + 1
    subjects = dict(Subject.objects.filter(agent=agent).values_list("pk", "external_id"))
    memory_refs = {
        pk: alias or str(pk)
        for pk, alias in Memory.objects.filter(agent=agent).values_list("pk", "alias")
    }
    users = dict(get_user_model().objects.values_list("pk", "username"))
    for spec in SURFACES.values():
        ids = sorted(
            spec.model.objects.filter(agent=agent).values_list("pk", "alias"),
            key=lambda row: _ref_order(row[1] or str(row[0])),
        )
        for start in range(0, len(ids), 1000):
            chunk_ids = [pk for pk, _ in ids[start : start + 1000]]
            records = spec.model.objects.in_bulk(chunk_ids)
            history = record_histories(agent, spec.key, chunk_ids) if with_revisions else {}
            sources = _sources(agent, spec.key, chunk_ids)
            for pk in chunk_ids:
                record = records[pk]
                doc = _record_doc(spec, record, subjects, memory_refs, with_vectors)
                if pk in sources:
                    doc["source"] = sources[pk]
                output.write(_line(doc))
                for revision in history.get(pk, []):
                    output.write(_line(_revision_doc(revision, subjects, memory_refs, users)))
                    counts["revision"] = counts.get("revision", 0) + 1
            counts[spec.key] = counts.get(spec.key, 0) + len(chunk_ids)
            if on_record:
                on_record(len(chunk_ids))
    files = ImportedSource.objects.filter(agent=agent, record_id__isnull=True).order_by(
        "source_format", "path"
    )
    for row in files:
        output.write(_line({"type": "source", **_source_doc(row)}))
        counts["source"] = counts.get("source", 0) + 1
    return counts


def _source_doc(row: ImportedSource) -> dict[str, Any]:
    return {"format": row.source_format, "path": row.path, "position": row.position, "raw": row.raw}


def _sources(agent: Agent, surface_key: str, record_ids: list[int]) -> dict[int, dict[str, Any]]:
    """How each record was written in the store it was imported from (one format each)."""
    rows = ImportedSource.objects.filter(
        agent=agent, surface=surface_key, record_id__in=record_ids
    ).order_by("source_format", "path")
    return {row.record_id: _source_doc(row) for row in rows}


def _record_doc(
    spec: SurfaceSpec,
    record: VersionedRecord,
    subjects: dict[int, str],
    memory_refs: dict[int, str],
    with_vectors: bool,
) -> dict[str, Any]:
    doc: dict[str, Any] = {"type": spec.key, "ref": ref_of(record), "version": record.version}
    for field in record_fields(spec):
        value = getattr(record, field.attname)
        if field.name == "subject":
            value = subjects.get(value) if value is not None else None
        elif field.name == "superseded_by":
            value = memory_refs.get(value, str(value)) if value is not None else None
        doc[field.name] = _json(value)
    if with_vectors and spec.embedded:
        vector = record.embedding
        doc["embedding"] = None if vector is None else [float(x) for x in vector]
        doc["embedding_model"] = record.embedding_model
        doc["embedding_hash"] = record.embedding_hash
    return doc


def _revision_doc(
    revision: Revision,
    subjects: dict[int, str],
    memory_refs: dict[int, str],
    users: dict[int, str],
) -> dict[str, Any]:
    doc: dict[str, Any] = {"type": "revision"}
    for name in REVISION_FIELDS:
        doc[name] = _json(getattr(revision, name))
    doc["actor_user"] = users.get(revision.actor_user_id)
    doc["reviewed_by"] = users.get(revision.reviewed_by_id)
    doc["before_state"] = _state_out(revision.before_state, subjects, memory_refs)
    doc["after_state"] = _state_out(revision.after_state, subjects, memory_refs)
    return doc


def _state_out(
    state: dict[str, Any], subjects: dict[int, str], memory_refs: dict[int, str]
) -> dict[str, Any]:
    state = dict(state)
    if isinstance(state.get("subject"), int):
        state["subject"] = subjects.get(state["subject"])
    if isinstance(state.get("superseded_by"), int):
        state["superseded_by"] = memory_refs.get(
            state["superseded_by"], str(state["superseded_by"])
        )
    return state


# --- reading ---------------------------------------------------------------------------


def read_header(path: Path) -> dict[str, Any]:
    with path.open("rb") as handle:
        first = handle.readline()
    try:
        header = bounded_json.loads(first.decode("utf-8"), "line 1")
    except (UnicodeDecodeError, json.JSONDecodeError, bounded_json.JsonTooDeep) as error:
        raise FormatError(f"{path}: line 1 is not a JSON header ({error}).") from None
    if not isinstance(header, dict) or header.get("format") != FORMAT:
        raise FormatError(f"{path}: not a memoryadmin agent export (no {FORMAT!r} header).")
    if header.get("format_version") != FORMAT_VERSION:
        raise FormatError(
            f"{path}: format version {header.get('format_version')!r}; this memoryadmin reads "
            f"version {FORMAT_VERSION}."
        )
    if not isinstance(header.get("agent"), dict) or not header["agent"].get("name"):
        raise FormatError(f"{path}: the header names no agent.")
    unknown = [key for key in header if key not in HEADER_FIELDS]
    if unknown:
        raise FormatError(
            f"{path}: the header holds {', '.join(map(repr, unknown))}, which format version "
            f"{FORMAT_VERSION} does not have; its keys are {', '.join(HEADER_FIELDS)}."
        )
    unknown = [key for key in header["agent"] if key not in AGENT_FIELDS]
    if unknown:
        raise FormatError(
            f"{path}: the header's agent holds {', '.join(map(repr, unknown))}, which is not an "
            f"agent setting; the settings are {', '.join(AGENT_FIELDS)}."
        )
    try:
        _check_agent_settings(header["agent"])
    except ApplicationError as error:
        raise FormatError(f"{path}: the header's agent: {error.message}") from None
    return header


def _check_agent_settings(settings: dict[str, Any]) -> None:
    validation.text(settings["name"], "name")
    for name in ("display_name", "description"):
        if name in settings:
            validation.text(settings[name], name)
    limit = Agent._meta.get_field("display_name").max_length
    if len(settings.get("display_name", "")) > limit:
        raise Invalid(f"display_name is longer than {limit} characters.")
    if "self_editing_enabled" in settings:
        validation.flag(settings["self_editing_enabled"], "self_editing_enabled")
    if "review_mode" in settings and settings["review_mode"] not in Agent.ReviewMode.values:
        raise Invalid(
            f"review_mode must be one of {', '.join(Agent.ReviewMode.values)}, "
            f"not {settings['review_mode']!r}."
        )


def count_lines(path: Path) -> int:
    with path.open("rb") as handle:
        return max(0, sum(1 for _ in handle) - 1)


def read_subjects(path: Path) -> Iterator[dict[str, Any] | Problem]:
    for where, doc in _lines(path):
        if isinstance(doc, Problem):
            continue
        if doc.get("type") == "subject":
            missing = [name for name in SUBJECT_FIELDS if name not in doc]
            if missing:
                yield Problem(where, f"subject line lacks {', '.join(missing)}.")
            else:
                yield {name: doc[name] for name in SUBJECT_FIELDS}


def _lines(path: Path) -> Iterator[tuple[str, dict[str, Any] | Problem]]:
    with path.open("rb") as handle:
        next(handle, None)
        for number, raw in enumerate(handle, start=2):
            where = f"{path.name}:{number}"
            if not raw.strip():
                continue
            try:
                doc = bounded_json.loads(raw.decode("utf-8"), "The line")
            except UnicodeDecodeError as error:
                yield where, Problem(where, f"is not UTF-8 text ({error.reason}).")
                continue
            except json.JSONDecodeError as error:
                yield (
                    where,
                    Problem(where, f"is not valid JSON: {error.msg} (column {error.colno})."),
                )
                continue
            except bounded_json.JsonTooDeep as refusal:
                yield where, Problem(where, f"{refusal.reason}.")
                continue
            if not isinstance(doc, dict) or not isinstance(doc.get("type"), str):
                yield where, Problem(where, "is not a JSON object with a `type`.")
                continue
            yield where, doc


def _trace(doc: Any) -> Trace:
    if (
        not isinstance(doc, dict)
        or not isinstance(doc.get("format"), str)
        or not isinstance(doc.get("path"), str)
        or not isinstance(doc.get("raw"), dict)
        or not isinstance(doc.get("position", 0), int)
    ):
        raise ValueError("source needs format, path, position and raw")
    for key, column in (("format", "source_format"), ("path", "path")):
        limit = ImportedSource._meta.get_field(column).max_length
        if len(doc[key]) > limit:
            raise ValueError(f"source {key} is longer than {limit} characters")
    # An export writes files at these paths; one that could leave its folder is refused here
    # (an entry of a group file adds `#key`, which names no file).
    try:
        relative_parts(doc["path"].split("#", 1)[0])
    except UnsafePath as error:
        raise ValueError(f"source path {doc['path']!r} {error}") from None
    if doc["format"] == rockbot.FORMAT:
        rockbot.check_raw(doc["raw"])
    return Trace(doc["format"], doc["path"], doc.get("position", 0), doc["raw"])


def read_records(
    path: Path,
    *,
    subjects: dict[str, Subject],
    on_line: Callable[[], None] | None = None,
) -> Iterator[Incoming | Problem | Trace]:
    """The records of an export, each with the revisions that follow its line."""
    users = {user.username: user for user in get_user_model().objects.all()}
    pending: Incoming | None = None
    claimed: set[int] = set()  # the versions the pending record's revisions reach
    skipping = False  # revisions of a record line that could not be read are skipped too
    for where, doc in _lines(path):
        if on_line:
            on_line()
        if isinstance(doc, Problem):
            yield doc
            continue
        kind = doc["type"]
        if kind == "subject":
            continue
        if kind == "revision":
            if skipping:
                continue
            if pending is None:
                yield Problem(where, "a revision line must follow the line of its record.")
                continue
            try:
                revision = _revision_values(SURFACES[pending.surface], doc, subjects, users)
                _check_place_in_history(pending, revision, claimed)
            except ApplicationError as error:
                # A record and its history are one entry: a history with a hole in it, or a
                # row a revert could turn against the record, is not imported at all.
                yield Problem(
                    where,
                    f"revision of {pending.surface} {pending.ref!r} ({pending.source}) is not "
                    f"valid: {error.message} The record is not imported.",
                )
                pending = None
                skipping = True
                continue
            if pending.history is None:
                pending.history = []
            pending.history.append(revision)
            continue
        if pending is not None:
            yield pending
            pending = None
        if kind == "source":
            try:
                yield _trace(doc)
            except ValueError as error:
                yield Problem(where, f"{error}.")
            continue
        if kind not in SURFACES:
            yield Problem(where, f"unknown line type {kind!r}.")
            skipping = True
            continue
        try:
            pending = _incoming(SURFACES[kind], doc, where, subjects)
            claimed = set()
            skipping = False
        except ApplicationError as error:
            yield Problem(where, error.message)
            skipping = True
    if pending is not None:
        yield pending


def _incoming(
    spec: SurfaceSpec, doc: dict[str, Any], where: str, subjects: dict[str, Subject]
) -> Incoming:
    ref = doc.get("ref")
    if not isinstance(ref, str) or not ref:
        raise Invalid("ref is missing or not a string.")
    version = doc.get("version")
    if not is_whole_number(version) or version < 1:
        raise Invalid("version must be a whole number of at least 1.")
    values: dict[str, Any] = {}
    successor = None
    for field in record_fields(spec):
        if field.name not in doc:
            continue
        value = doc[field.name]
        if field.name == "superseded_by":
            successor = None if value is None else str(value)
            continue
        if field.name == "subject" and value is not None:
            if value not in subjects:
                raise Invalid(f"subject {value!r} has no subject line in this file.")
            value = subjects[value]
        values[field.name] = value
    for name in VECTOR_FIELDS:
        if name in doc and spec.embedded:
            values[name] = doc[name]
    values = clean_values(spec.key, values)
    missing = [name for name in spec.text_fields if name not in values]
    if missing:
        raise Invalid(f"{', '.join(missing)} is missing.")
    created_at = values.get("created_at")
    try:
        trace = _trace(doc["source"]) if "source" in doc else None
    except ValueError as error:
        raise Invalid(f"{error}.") from None
    return Incoming(
        trace=trace,
        surface=spec.key,
        ref=ref,
        values=values,
        source=where,
        version=version,
        superseded_by=successor,
        successor_stated=spec is MEMORY,
        same_record_if=(int(ref), created_at) if ref.isdecimal() and created_at else None,
    )


def _revision_values(
    spec: SurfaceSpec, doc: dict[str, Any], subjects: dict[str, Subject], users: dict[str, Any]
) -> dict[str, Any]:
    """Revision fields of a revision line, checked against the record's surface.

    Agent, surface and record come from the record line it follows, never from the line.
    """
    names = (*REVISION_FIELDS, "before_state", "after_state")
    missing = [name for name in names if name not in doc]
    if missing:
        raise Invalid(f"it lacks {', '.join(missing)}.")
    values = clean_revision(spec, {name: doc[name] for name in names})
    for name in ("actor_user", "reviewed_by"):
        username = doc.get(name)
        if username is not None and not isinstance(username, str):
            raise Invalid(f"{name} must be a user name or null.")
        values[name] = users.get(username) if username else None
    for side in ("before_state", "after_state"):
        state = values[side]
        if state.get("subject") is not None:
            subject = subjects.get(state["subject"])
            state["subject"] = subject.pk if subject else None
    return values


def _check_place_in_history(record: Incoming, revision: dict[str, Any], claimed: set[int]) -> None:
    """A revision fits the record's chain: not past its version, no version claimed twice."""
    version = revision["version_after"]
    if version > record.version:
        raise Invalid(
            f"version_after {version} is later than the record's own version {record.version}."
        )
    if version in claimed:
        raise Invalid(f"version_after {version} is claimed by an earlier revision of the record.")
    claimed.add(version)
