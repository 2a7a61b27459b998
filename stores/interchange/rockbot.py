"""RockBot's on-disk agent store, read into records and written back without losing a field.

Layout of one agent's directory (RockBot's `AgentProfile__BasePath`, e.g. /data/agent):

    memory/{category}/{id}.json    one long-term MemoryEntry per file; text in `Content`
    working/{namespace}.json       one working-memory group per namespace (`session`, …):
                                   a JSON array of entries (or an object with `Entries`)
    skills/{name}.json             one skill; markdown body in `Content`
    tasks/{name}.json              one scheduled task; `Directive` (or `Description`)
    rules.md                       the behavioural rules, kept byte for byte

Nothing is read or written through a symbolic link (each one met is reported), and every
written path stays inside the target: a name is mapped to a file name that fits (see
`files.segment`), and a name the file name cannot give back exactly is kept in the file's
data (`Id`, `Category`, or `Namespace` in a working group written as an object).

Field names are accepted in PascalCase, camelCase or snake_case. How each file spelled and
formatted its fields (and fields memoryadmin does not know) is kept at import and used on
export, so a file that nobody changed comes back with the same data; a changed field is
written in the file's own spelling. Unknown fields of a memory are kept in its metadata
under `_rockbot`; those of other surfaces in the import trace (ImportedSource).
"""

from __future__ import annotations

import datetime as dt
import json
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

from django.utils import timezone

from stores.errors import ApplicationError
from stores.interchange.files import (
    PATH_MAX,
    Refused,
    Source,
    Target,
    UnsafePath,
    display,
    relative_parts,
    segment,
    unsegment,
)
from stores.models import (
    Agent,
    ImportedSource,
    Memory,
    RulesDocument,
    ScheduledTask,
    Skill,
    VersionedRecord,
    WorkingMemoryEntry,
)
from stores.services import bounded_json
from stores.services.exports import ExportedFile
from stores.services.importing.cleaning import clean_values
from stores.services.importing.entries import Incoming, Problem, Trace, Unread, file_digest
from stores.surfaces import SURFACES

FORMAT = "rockbot"
MEMORY_DIR = "memory"
WORKING_DIR = "working"
SKILLS_DIR = "skills"
TASKS_DIR = "tasks"
RULES_FILE = "rules.md"
# Where a memory keeps the top-level fields of its file that memoryadmin does not know.
UNKNOWN_FIELDS_KEY = "_rockbot"


@dataclass(frozen=True)
class FileField:
    """One field of a RockBot JSON file: its spellings (the first is written) and where it goes.

    `model` is a model field name, or `alias` (the original id) / `superseded_by` (the
    original id of the successor).
    """

    names: tuple[str, ...]
    model: str
    required: bool = False
    text: bool = False


MEMORY_FIELDS = (
    FileField(("Id",), "alias"),
    FileField(("Content",), "content", required=True, text=True),
    FileField(("Category",), "category"),
    FileField(("Tags",), "tags"),
    FileField(("CreatedAt",), "created_at"),
    FileField(("LastSeenAt",), "last_seen_at"),
    FileField(("ReinforcementCount",), "reinforcement_count"),
    FileField(("ImportanceScore", "Importance"), "importance"),
    FileField(("Metadata",), "metadata"),
    FileField(("SupersededBy",), "superseded_by"),
    FileField(("ArchivedAt",), "archived_at"),
    FileField(("UpdatedAt",), "updated_at"),
)
WORKING_FIELDS = (
    FileField(("Key",), "key", required=True),
    FileField(("Value",), "value", required=True, text=True),
    FileField(("StoredAt",), "stored_at"),
    FileField(("ExpiresAt",), "expires_at"),
    FileField(("Category",), "category"),
    FileField(("Tags",), "tags"),
)
SKILL_FIELDS = (
    FileField(("Id",), "alias"),
    FileField(("Name",), "name", required=True),
    FileField(("Summary",), "summary", text=True),
    FileField(("Content",), "content", required=True, text=True),
    FileField(("CreatedAt",), "created_at"),
    FileField(("UpdatedAt",), "updated_at"),
)
TASK_FIELDS = (
    FileField(("Id",), "alias"),
    FileField(("Name",), "name", required=True),
    FileField(("Schedule", "CronExpression", "Cron"), "schedule", required=True),
    FileField(("Directive", "Description", "Prompt"), "directive", required=True, text=True),
    FileField(("Enabled", "IsEnabled"), "enabled"),
    FileField(("CreatedAt",), "created_at"),
    FileField(("UpdatedAt",), "updated_at"),
    FileField(("LastRunAt",), "last_run_at"),
)
FIELDS = {
    "memory": MEMORY_FIELDS,
    "working": WORKING_FIELDS,
    "skill": SKILL_FIELDS,
    "task": TASK_FIELDS,
}


# What an import trace's `raw` may hold (see read_document and _read_working). An export reads
# it back, so a trace that did not come from this module is checked first (check_raw).
_RAW_TYPES: dict[str, type] = {
    "case": str,
    "keys": list,
    "values": dict,
    "absent": dict,
    "located": dict,
    "extra": dict,
    "shape": str,
    "namespace": str,
    "entries_key": str,
    "other": dict,
}
_JSON_KIND = {str: "string", list: "array", dict: "object"}


def check_raw(raw: dict[str, Any]) -> None:
    """ValueError naming what is wrong when `raw` is not shaped like a trace of this format."""
    for key, value in raw.items():
        kind = _RAW_TYPES.get(key)
        if kind is None:
            raise ValueError(f"source raw holds {key!r}, which a {FORMAT} trace does not")
        if not isinstance(value, kind):
            raise ValueError(f"source raw {key} must be a JSON {_JSON_KIND[kind]}")
    if not all(isinstance(key, str) for key in raw.get("keys", [])):
        raise ValueError("source raw keys must be strings")
    if raw.get("shape", "array") not in ("array", "object"):
        raise ValueError("source raw shape must be 'array' or 'object'")
    if raw.get("shape") == "object" and "entries_key" not in raw:
        raise ValueError("source raw of an object-shaped group must name its entries_key")


class FileProblem(Exception):
    """What is wrong with one file or entry; it is reported with the path and skipped."""


def _norm(name: str) -> str:
    return name.replace("_", "").replace("-", "").lower()


# Each surface's fields with their spellings normalized once, not once per file read.
_NORMED = {
    surface_key: tuple((spec, tuple(_norm(name) for name in spec.names)) for spec in fields)
    for surface_key, fields in FIELDS.items()
}


def _spell(canonical: str, case: str) -> str:
    return canonical[:1].lower() + canonical[1:] if case == "camel" else canonical


# --- from file values to model values, and back ----------------------------------------


def model_value(surface_key: str, spec: FileField, value: Any) -> Any:
    """The model value a file value means; FileProblem naming the field when it is wrong."""
    if spec.model in ("alias", "superseded_by"):
        if value is None and spec.model == "superseded_by":
            return None
        if isinstance(value, bool) or not isinstance(value, str | int) or str(value) == "":
            raise FileProblem(f"{spec.names[0]} must be a non-empty string or number.")
        return str(value)
    if value is None and spec.model == "tags":
        return []
    if value is None and spec.model == "metadata":
        return {}
    try:
        return clean_values(surface_key, {spec.model: value})[spec.model]
    except ApplicationError as error:
        raise FileProblem(f"{spec.names[0]}: {error.message}") from None


def file_value(value: Any) -> Any:
    if isinstance(value, dt.datetime):
        return value.isoformat()
    return value


# --- reading ---------------------------------------------------------------------------


def read_document(
    surface_key: str, doc: Any, *, defaults: dict[str, Any]
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """Model values, the raw spelling record (for export), and the unknown fields of `doc`.

    `defaults` fill fields the file lacks; the raw record notes what they were, so an
    export leaves out a field the file never had unless its value changed since.
    """
    if not isinstance(doc, dict):
        kind = type(doc).__name__.replace("dict", "object").replace("list", "array")
        raise FileProblem(f"expected a JSON object, found a JSON {kind}.")
    keys = {_norm(key): key for key in doc}
    values: dict[str, Any] = {}
    raw_values: dict[str, Any] = {}
    absent: dict[str, Any] = {}
    known: set[str] = set()
    for spec, names in _NORMED[surface_key]:
        key = next((keys[name] for name in names if name in keys), None)
        if key is None:
            if spec.required:
                raise FileProblem(f"{spec.names[0]} is missing.")
            if spec.model in defaults:
                values[spec.model] = defaults[spec.model]
                absent[spec.names[0]] = _jsonable(defaults[spec.model])
            continue
        known.add(key)
        values[spec.model] = model_value(surface_key, spec, doc[key])
        if not spec.text:
            raw_values[key] = doc[key]
    first = next(iter(doc), "")
    raw = {
        "case": "camel" if first[:1].islower() else "pascal",
        "keys": list(doc),
        "values": raw_values,
        "absent": absent,
    }
    unknown = {key: value for key, value in doc.items() if key not in known}
    return values, raw, unknown


def _jsonable(value: Any) -> Any:
    return file_value(value)


def _load_json(data: bytes) -> Any:
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise FileProblem(f"is not UTF-8 text ({error.reason} at byte {error.start}).") from None
    try:
        return bounded_json.loads(text, "The file")
    except json.JSONDecodeError as error:
        raise FileProblem(
            f"is not valid JSON: {error.msg} (line {error.lineno}, column {error.colno})."
        ) from None
    except bounded_json.JsonTooDeep as refusal:
        raise FileProblem(f"{refusal.reason} (MEMORYADMIN_MAX_JSON_DEPTH).") from None


FOLDERS = (MEMORY_DIR, WORKING_DIR, SKILLS_DIR, TASKS_DIR)


def count_files(root: Path) -> int:
    """How many files (and refused links) `read_store` will go through."""
    with Source(root) as tree:
        total = sum(len(tree.files(folder, ".json")) for folder in FOLDERS)
        return total + int(tree.is_file(RULES_FILE))


def read_store(
    root: Path, *, on_file: Callable[[], None] | None = None
) -> Iterator[Incoming | Problem | Trace | Unread]:
    """Every record of the RockBot directory `root`, or a Problem for what cannot be read.

    A memory file comes as Unread (its bytes and their digest): the import parses it only
    if it or its memory changed since it was last imported.

    A symbolic link (to a file or a folder) is reported and not followed: an agent can write
    into its own directory, and a link would bring in any file this process can read.
    """
    now = timezone.now()
    readers = (
        (WORKING_DIR, _read_working),
        (SKILLS_DIR, _read_skill),
        (TASKS_DIR, _read_task),
    )
    with Source(root) as tree:
        for item in tree.files(MEMORY_DIR, ".json"):
            if isinstance(item, Refused):
                yield Problem(item.path, f"{item.reason}.")
            else:
                yield _memory_file(tree, item, now)
            if on_file:
                on_file()
        for folder, reader in readers:
            for item in tree.files(folder, ".json"):
                if isinstance(item, Refused):
                    yield Problem(item.path, f"{item.reason}.")
                else:
                    try:
                        yield from reader(item, _load_json(tree.read(item)), now)
                    except FileProblem as problem:
                        yield Problem(item, str(problem))
                    except UnsafePath as error:  # it became a link after it was listed
                        yield Problem(item, f"{error}.")
                if on_file:
                    on_file()
        if tree.is_file(RULES_FILE):
            yield _read_rules(tree)
            if on_file:
                on_file()


def _memory_file(tree: Source, relative: str, now: dt.datetime) -> Unread | Problem:
    try:
        data = tree.read(relative)
    except UnsafePath as error:  # it became a link after it was listed
        return Problem(relative, f"{error}.")
    digest = file_digest(data)

    def parse() -> list[Incoming | Problem]:
        try:
            return list(_read_memory(relative, _load_json(data), now, digest))
        except FileProblem as problem:
            return [Problem(relative, str(problem))]

    return Unread("memory", FORMAT, relative, digest, parse)


def _read_rules(tree: Source) -> Incoming | Problem:
    try:
        content = tree.read(RULES_FILE).decode("utf-8")
    except UnsafePath as error:
        return Problem(RULES_FILE, f"{error}.")
    except UnicodeDecodeError as error:
        return Problem(RULES_FILE, f"is not UTF-8 text ({error.reason} at byte {error.start}).")
    return Incoming(
        surface="rules",
        ref=RULES_FILE,
        values={"content": content},
        source=RULES_FILE,
        trace=Trace(FORMAT, RULES_FILE),
    )


def _timestamp_defaults(surface_key: str, now: dt.datetime) -> dict[str, Any]:
    model = SURFACES[surface_key].model
    defaults: dict[str, Any] = {}
    for spec in FIELDS[surface_key]:
        if spec.model in ("alias", "superseded_by"):
            continue
        default = model._meta.get_field(spec.model).get_default()
        defaults[spec.model] = now if isinstance(default, dt.datetime) else default
    return defaults


def memory_location(relative: str) -> tuple[str, str]:
    """The category and original id that the path of a memory file stands for."""
    path = PurePosixPath(relative)
    folder = path.parent.relative_to(MEMORY_DIR).parts
    return "/".join(unsegment(part) for part in folder) or "general", unsegment(path.stem)


def working_namespace(relative: str) -> str:
    """The namespace that the path of a working-memory group file stands for."""
    parts = PurePosixPath(relative).relative_to(WORKING_DIR).with_suffix("").parts
    return "/".join(unsegment(part) for part in parts)


def _read_memory(relative: str, doc: Any, now: dt.datetime, digest: str = "") -> Iterator[Incoming]:
    category, alias = memory_location(relative)
    defaults = {**_timestamp_defaults("memory", now), "category": category, "alias": alias}
    values, raw, unknown = read_document("memory", doc, defaults=defaults)
    ref = values.pop("alias")
    stated: set[str] = set()
    successor = values.pop("superseded_by", None)
    if unknown:
        values["metadata"] = {**values.get("metadata", {}), UNKNOWN_FIELDS_KEY: unknown}
        stated.add("metadata")
    if successor and "invalidated_at" not in values:
        # A superseded entry is invalidated; RockBot has no such field, so it is not written.
        values["invalidated_at"] = values.get("updated_at") or values.get("created_at") or now
    raw["located"] = {"category": values["category"], "id": ref}
    successor_stated = any(_norm(key) == "supersededby" for key in raw["keys"])
    if not successor_stated:
        # Left out unless a successor is set later, as the other fields the file lacks.
        raw["absent"]["SupersededBy"] = None
    incoming = _incoming("memory", ref, values, relative, raw, stated=stated, digest=digest)
    incoming.superseded_by = successor
    incoming.successor_stated = successor_stated
    yield incoming


def _incoming(
    surface_key: str,
    ref: str,
    values: dict[str, Any],
    relative: str,
    raw: dict[str, Any],
    *,
    position: int = 0,
    trace_path: str | None = None,
    stated: set[str] = frozenset(),
    digest: str = "",
) -> Incoming:
    """Split values the file states from defaults that apply only to a new record."""
    absent = {spec.model for spec in FIELDS[surface_key] if spec.names[0] in raw["absent"]} - set(
        stated
    )
    return Incoming(
        surface=surface_key,
        ref=ref,
        values={name: value for name, value in values.items() if name not in absent},
        defaults={name: values[name] for name in absent if name in values},
        source=relative,
        trace=Trace(FORMAT, trace_path or relative, position, raw, digest),
    )


def _read_working(
    relative: str, doc: Any, now: dt.datetime
) -> Iterator[Incoming | Problem | Trace]:
    namespace = working_namespace(relative)
    shape: dict[str, Any] = {"shape": "array", "namespace": namespace}
    if isinstance(doc, dict):
        entries_key = next((key for key in doc if _norm(key) == "entries"), None)
        if entries_key is None or not isinstance(doc[entries_key], list):
            raise FileProblem("expected a JSON array of entries (or an object with Entries).")
        # A namespace too long for a file name is written into the group (see write_store).
        stated = next((doc[key] for key in doc if _norm(key) == "namespace"), None)
        if isinstance(stated, str) and stated:
            namespace = stated
        shape = {
            "shape": "object",
            "namespace": namespace,
            "entries_key": entries_key,
            "keys": list(doc),
            "other": {key: value for key, value in doc.items() if key != entries_key},
        }
        entries = doc[entries_key]
    elif isinstance(doc, list):
        entries = doc
    else:
        raise FileProblem("expected a JSON array of working-memory entries.")
    # The group file itself is remembered so its shape comes back on export.
    yield Trace(FORMAT, relative, 0, shape)
    defaults = _timestamp_defaults("working", now)
    for position, entry in enumerate(entries):
        where = f"{relative} entry {position + 1}"
        try:
            values, raw, unknown = read_document("working", entry, defaults=defaults)
        except FileProblem as problem:
            yield Problem(where, str(problem))
            continue
        values["namespace"] = namespace
        raw["extra"] = unknown
        ref = f"{namespace}/{values['key']}"
        trace_path = f"{relative}#{values['key']}"
        if len(trace_path) > PATH_MAX:
            yield Problem(where, f"path and key are longer than {PATH_MAX} characters together.")
            continue
        yield _incoming(
            "working", ref, values, where, raw, position=position, trace_path=trace_path
        )


def _read_skill(relative: str, doc: Any, now: dt.datetime) -> Iterator[Incoming]:
    yield _read_named("skill", relative, doc, now)


def _read_task(relative: str, doc: Any, now: dt.datetime) -> Iterator[Incoming]:
    yield _read_named("task", relative, doc, now)


def _read_named(surface_key: str, relative: str, doc: Any, now: dt.datetime) -> Incoming:
    defaults = _timestamp_defaults(surface_key, now)
    values, raw, unknown = read_document(surface_key, doc, defaults=defaults)
    raw["extra"] = unknown
    ref = values.pop("alias", None)
    if ref is None:
        # RockBot names skills and tasks by their name; that is the id they are known by.
        ref = values["name"]
        raw["absent"]["Id"] = ref
    raw["located"] = {"name": values["name"]}
    return _incoming(surface_key, ref, values, relative, raw)


# --- writing ---------------------------------------------------------------------------


@dataclass
class ExportTally:
    written: int = 0
    unchanged: int = 0
    removed: int = 0
    skipped: int = 0


@dataclass
class ExportReport:
    tallies: dict[str, ExportTally]
    # Records (or stale files) that were not written (or not removed), with the path and why.
    problems: list[Problem] = field(default_factory=list)
    # Records written somewhere else than their import trace said, and why.
    notes: list[Problem] = field(default_factory=list)
    # Every file the directory holds of the agent now, written or already as it was.
    files: list[ExportedFile] = field(default_factory=list)

    def tally(self, surface_key: str) -> ExportTally:
        return self.tallies.setdefault(surface_key, ExportTally())


def count_records(agent: Agent) -> int:
    return sum(
        model.objects.filter(agent=agent).count()
        for model in (Memory, WorkingMemoryEntry, Skill, ScheduledTask, RulesDocument)
    )


# Where each surface's files live; a trace path elsewhere is not used or removed.
_FOLDER_OF = {
    "memory": MEMORY_DIR,
    "working": WORKING_DIR,
    "": WORKING_DIR,  # the trace of a working-memory group file
    "skill": SKILLS_DIR,
    "task": TASKS_DIR,
}


@dataclass
class _Writer:
    """Every file of one export goes through `emit`: inside the target, once, never via a link."""

    target: Target
    report: ExportReport
    on_record: Callable[[int], None] | None
    claimed: set[str] = field(default_factory=set)
    # Trace paths not used because they leave their folder: reported once, never removed.
    refused: set[str] = field(default_factory=set)

    def emit(
        self,
        surface_key: str,
        relative: str,
        data: bytes,
        records: int = 1,
        *,
        previous: str | None = None,
        record_id: int | None = None,
    ) -> None:
        """Write one file (of the record `record_id`, if of one); `previous` is where the
        record's file was, kept if this one fails."""
        tally = self.report.tally(surface_key)
        reason = None
        if relative in self.claimed:
            reason = "is the file of another record of this export"
        else:
            self.claimed.add(relative)
            try:
                changed = self.target.write(relative, data)
            except UnsafePath as error:
                reason = str(error)
            except OSError as error:
                reason = f"could not be written ({error.strerror})"
            else:
                self.report.files.append(
                    ExportedFile(relative, surface_key if record_id else "", record_id)
                )
                if changed:
                    tally.written += 1
                else:
                    tally.unchanged += 1
        if reason is not None:
            tally.skipped += records
            self.report.problems.append(Problem(display(relative), f"{reason}; not written."))
            if previous:
                self.claimed.add(previous)  # the record's old file is all the target has of it
        if self.on_record:
            self.on_record(records)

    def traced(self, surface_key: str, trace_path: str, generated: str) -> str:
        """The trace's path if it is a file of this surface's folder, else `generated`."""
        reason = _outside_folder(surface_key, trace_path)
        if reason is None:
            return trace_path
        self.refused.add(trace_path)
        self.report.notes.append(
            Problem(
                display(trace_path),
                f"{reason}: the import trace of this record is not used; it is written to "
                f"{generated} instead.",
            )
        )
        return generated


def _outside_folder(surface_key: str, path: str) -> str | None:
    """Why `path` is not a .json file in the folder of `surface_key` (None if it is one)."""
    try:
        parts = relative_parts(path)
    except UnsafePath as error:
        return str(error)
    folder = _FOLDER_OF.get(surface_key)
    if folder is None:
        return f"is not a file of a {surface_key} record"
    if len(parts) < 2 or parts[0] != folder or not parts[-1].endswith(".json"):
        return f"is not a .json file in {folder}/"
    return None


def write_store(
    agent: Agent, root: Path, *, on_record: Callable[[int], None] | None = None
) -> ExportReport:
    """Write every record of `agent` into the RockBot directory `root`, each file atomically.

    Files this agent's import traced that no record claims any more (a forgotten memory, a
    memory whose category changed) are removed; other files in `root` are left alone. A
    path that would leave `root` or pass through a link is never written: the record is
    written at its generated path instead, or skipped and reported (`report.problems`).
    """
    report = ExportReport(tallies={})
    with Target(root) as target:
        writer = _Writer(target, report, on_record)
        _write_memories(agent, writer)
        _write_working(agent, writer)
        for surface_key, model, folder in (
            ("skill", Skill, SKILLS_DIR),
            ("task", ScheduledTask, TASKS_DIR),
        ):
            _write_named(agent, surface_key, model, folder, writer)
        rules = RulesDocument.objects.filter(agent=agent).first()
        if rules is not None:
            writer.emit("rules", RULES_FILE, rules.content.encode("utf-8"))
        _remove_unclaimed(agent, target, writer.claimed | writer.refused, report)
    return report


def _dump(doc: Any) -> bytes:
    return (json.dumps(doc, ensure_ascii=False, indent=2) + "\n").encode("utf-8")


def _traces(agent: Agent, surface_key: str, record_ids: list[int]) -> dict[int, ImportedSource]:
    rows = ImportedSource.objects.filter(
        agent=agent, source_format=FORMAT, surface=surface_key, record_id__in=record_ids
    )
    return {row.record_id: row for row in rows}


def render(
    surface_key: str,
    current: dict[str, Any],
    raw: dict[str, Any] | None,
    extra: dict[str, Any],
) -> dict[str, Any]:
    """The file object for a record: the file's own spelling and values where still true."""
    raw = raw or {}
    keys = raw.get("keys", [])
    raw_values = raw.get("values", {})
    absent = raw.get("absent", {})
    case = raw.get("case", "pascal")
    by_norm = {_norm(key): key for key in keys}
    doc: dict[str, Any] = {}
    for spec in FIELDS[surface_key]:
        value = current[spec.model]
        written = file_value(value)
        key = next((by_norm[_norm(n)] for n in spec.names if _norm(n) in by_norm), None)
        if key is None:
            if spec.names[0] in absent and absent[spec.names[0]] == written:
                continue
            doc[_spell(spec.names[0], case)] = written
            continue
        if key in raw_values and _means(surface_key, spec, raw_values[key], value):
            written = raw_values[key]
        doc[key] = written
    for key, value in extra.items():
        doc.setdefault(key, value)
    ordered = {key: doc[key] for key in keys if key in doc}
    ordered.update((key, value) for key, value in doc.items() if key not in ordered)
    return ordered


def _means(surface_key: str, spec: FileField, raw_value: Any, value: Any) -> bool:
    try:
        return model_value(surface_key, spec, raw_value) == value
    except FileProblem:
        return False


def _write_memories(agent: Agent, writer: _Writer) -> None:
    memories = Memory.objects.filter(agent=agent).order_by("pk")
    last = 0
    while chunk := list(memories.filter(pk__gt=last)[:2000]):
        last = chunk[-1].pk
        traces = _traces(agent, "memory", [m.pk for m in chunk])
        successors = dict(
            Memory.objects.filter(
                pk__in={m.superseded_by_id for m in chunk if m.superseded_by_id}
            ).values_list("pk", "alias")
        )
        for memory in chunk:
            trace = traces.get(memory.pk)
            raw = trace.raw if trace else None
            ref = memory.alias or str(memory.pk)
            metadata = dict(memory.metadata)
            extra = metadata.pop(UNKNOWN_FIELDS_KEY, {})
            successor = None
            if memory.superseded_by_id:
                successor = successors.get(memory.superseded_by_id) or str(memory.superseded_by_id)
            elif raw:
                # A successor the import could not find stays as the file named it.
                successor = _unresolved_successor(raw)
            current = {
                "alias": ref,
                "content": memory.content,
                "category": memory.category,
                "tags": memory.tags,
                "created_at": memory.created_at,
                "last_seen_at": memory.last_seen_at,
                "reinforcement_count": memory.reinforcement_count,
                "importance": memory.importance,
                "metadata": metadata,
                "superseded_by": successor,
                "archived_at": memory.archived_at,
                "updated_at": memory.updated_at,
            }
            relative = f"{MEMORY_DIR}/{segment(memory.category)}/{segment(ref)}.json"
            if trace is not None and raw.get("located") == {"category": memory.category, "id": ref}:
                relative = writer.traced("memory", trace.path, relative)
            located = memory_location(relative)
            if raw and located != (memory.category, ref):
                # The file name cannot say it (too long a name, or another file's name): the
                # file states it, so an import gives the same category and id back.
                absent = dict(raw.get("absent", {}))
                if located[0] != memory.category:
                    absent.pop("Category", None)
                if located[1] != ref:
                    absent.pop("Id", None)
                raw = {**raw, "absent": absent}
            doc = render("memory", current, raw, extra if isinstance(extra, dict) else {})
            writer.emit(
                "memory",
                relative,
                _dump(doc),
                previous=trace.path if trace else None,
                record_id=memory.pk,
            )


def _unresolved_successor(raw: dict[str, Any]) -> str | None:
    for key, value in raw.get("values", {}).items():
        if _norm(key) == "supersededby" and value not in (None, ""):
            return str(value)
    return None


def _write_working(agent: Agent, writer: _Writer) -> None:
    entries = list(WorkingMemoryEntry.objects.filter(agent=agent).order_by("namespace", "key"))
    traces = _traces(agent, "working", [entry.pk for entry in entries])
    shapes = {
        row.raw.get("namespace"): row
        for row in ImportedSource.objects.filter(
            agent=agent, source_format=FORMAT, surface="", path__startswith=f"{WORKING_DIR}/"
        )
    }
    groups: dict[str, list[WorkingMemoryEntry]] = {}
    for entry in entries:
        groups.setdefault(entry.namespace, []).append(entry)
    for namespace, members in groups.items():
        members.sort(
            key=lambda e: (traces[e.pk].position if e.pk in traces else len(members), e.key)
        )
        docs = []
        for entry in members:
            trace = traces.get(entry.pk)
            raw = trace.raw if trace else None
            current = {
                "key": entry.key,
                "value": entry.value,
                "stored_at": entry.stored_at,
                "expires_at": entry.expires_at,
                "category": entry.category,
                "tags": entry.tags,
            }
            docs.append(render("working", current, raw, (raw or {}).get("extra", {})))
        shape_row = shapes.get(namespace)
        shape = shape_row.raw if shape_row else {"shape": "array"}
        relative = f"{WORKING_DIR}/{segment(namespace)}.json"
        if shape_row is not None:
            relative = writer.traced("", shape_row.path, relative)
        if shape.get("shape") == "object":
            body = {**shape.get("other", {}), shape["entries_key"]: docs}
            doc: Any = {key: body[key] for key in shape.get("keys", []) if key in body}
            doc.update((key, value) for key, value in body.items() if key not in doc)
        else:
            doc = docs
        if working_namespace(relative) != namespace and not (
            isinstance(doc, dict) and any(_norm(key) == "namespace" for key in doc)
        ):
            # The file name cannot say it (too long a namespace): the group states it.
            doc = {"Namespace": namespace, **(doc if isinstance(doc, dict) else {"Entries": doc})}
        writer.emit(
            "working",
            relative,
            _dump(doc),
            records=len(members),
            previous=shape_row.path if shape_row else None,
        )


def _write_named(
    agent: Agent,
    surface_key: str,
    model: type[VersionedRecord],
    folder: str,
    writer: _Writer,
) -> None:
    records = list(model.objects.filter(agent=agent).order_by("name"))
    traces = _traces(agent, surface_key, [record.pk for record in records])
    for record in records:
        trace = traces.get(record.pk)
        raw = trace.raw if trace else None
        current = {
            spec.model: (record.alias or record.name)
            if spec.model == "alias"
            else getattr(record, spec.model)
            for spec in FIELDS[surface_key]
        }
        doc = render(surface_key, current, raw, (raw or {}).get("extra", {}))
        relative = f"{folder}/{segment(record.name)}.json"
        if trace is not None and raw.get("located") == {"name": record.name}:
            relative = writer.traced(surface_key, trace.path, relative)
        writer.emit(
            surface_key,
            relative,
            _dump(doc),
            previous=trace.path if trace else None,
            record_id=record.pk,
        )


def _remove_unclaimed(
    agent: Agent, target: Target, claimed: set[str], report: ExportReport
) -> None:
    paths = ImportedSource.objects.filter(agent=agent, source_format=FORMAT).values_list(
        "path", "surface"
    )
    for path, surface_key in paths:
        if "#" in path or path in claimed:
            continue
        rules = (path, surface_key) == (RULES_FILE, "rules")
        reason = None if rules else _outside_folder(surface_key, path)
        removed = False
        if reason is None:
            try:
                removed = target.remove(path)
            except UnsafePath as error:
                reason = str(error)
            except OSError as error:
                message = f"could not be removed ({error.strerror})."
                report.problems.append(Problem(display(path), message))
                continue
        if reason is not None:
            report.notes.append(Problem(display(path), f"{reason}; the stale file is not removed."))
        elif removed:
            report.tally(surface_key or "working").removed += 1
