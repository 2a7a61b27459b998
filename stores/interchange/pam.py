"""Portable AI Memory (PAM v1.0): an agent's long-term memories as a memory store, and back.

PAM (portable-ai-memory.org) is the interchange format other memory tools read and write; its
SDK (`portable_ai_memory`) holds the models, the validator and the content hash, so nothing of
the format is checked here by hand: a file is loaded by the SDK's models and passed through its
deep validator before any of it is read.

The mapping, both ways (README "Moving memories in and out"):

- `id` is the memory's ref: its alias, or its id here when it never had one. An import keeps it
  as the alias, so exporting again writes the same ids.
- `type` is the category when the category is one of PAM's types, else `custom` with the
  category as `custom_type`; `tags` are the tags (a list PAM cannot spell goes whole into the
  extension below); `confidence.current` is the importance and `confidence.last_reinforced`
  the last time it was seen; `temporal` holds created, updated, `valid_until` (when it was
  invalidated) and `superseded_by`, with `status` `superseded`, `retracted` (invalidated) or
  `archived`, and a `supersedes` relation from the successor.
- What memoryadmin holds beyond PAM (store, reinforcement count, pin and floor, decay and
  archive times, the subject, its own metadata) rides in the memory's PAM `metadata` under
  `memoryadmin`: the extension.
- What a PAM file carries that has no field here (summary, access, provenance, the validity
  start, the initial confidence and decay model, a `deprecated` status, the PAM metadata,
  relations other than the ones above, its conversation's index entry) is kept in the memory's
  `metadata` under `pam`, the residue, and written back out on export. Only what an export
  would not write by itself is kept, so re-importing an export writes nothing.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import itertools
import json
import re
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from django.conf import settings
from django.db import transaction
from django.utils import timezone
from portable_ai_memory import (
    MemoryObject,
    MemoryStore,
    PAMError,
    PAMValidationError,
    compute_content_hash,
    load_dict,
    validate_memory_store,
)
from portable_ai_memory.core.integrity import canonicalize_jcs
from portable_ai_memory.models.enums import MemoryStatus, MemoryType, RelationType
from pydantic import ValidationError

from stores.errors import ApplicationError
from stores.interchange.native import record_fields
from stores.models import Agent, Memory, Subject
from stores.services import Actor, subject_create
from stores.services.importing import ImportReport, Incoming, clean_values, import_records
from stores.surfaces import MEMORY

FORMAT = "pam"
SCHEMA = "portable-ai-memory"
SCHEMA_VERSION = "1.0"
SPEC_URI = "https://portable-ai-memory.org/spec/v1.0"
EXPORTED_BY = "memoryadmin/0.1.0"
# Where a memory's origin is not known (until it is told, see `provenance_of`).
PLATFORM = "memoryadmin"
RESIDUE = "pam"
EXTENSION = "memoryadmin"
PAM_TYPES = frozenset(member.value for member in MemoryType) - {MemoryType.CUSTOM.value}
# The tag pattern of PAM's schema: its SDK checks it inside a model validator and names no
# function for it, and a tag that fails it must go to the extension rather than refuse the export.
TAG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
SUBJECT_FIELDS = ("external_id", "display_name", "privacy_level", "kind", "aliases")
# Residue keys an export writes back verbatim (nothing of memoryadmin's says them), and what
# an export writes for them when a memory has none.
# `embedding_ref` is not kept: vectors are recomputed here (PAM lets an importer regenerate
# them), and an export without its embeddings file must leave it null.
VERBATIM = ("summary", "access", "provenance")
DERIVED_VERBATIM: dict[str, Any] = {"provenance": {"platform": PLATFORM}}


class Refused(Exception):
    """A PAM file that is not imported at all: `check` names the failed check, the message
    names the memory (or the file) and what is wrong."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"[{check}] {message}")
        self.check = check
        self.message = message


def max_bytes() -> int:
    return int(settings.MEMORYADMIN["MAX_IMPORT_BYTES"])


# --- one memory, both ways -----------------------------------------------------------------


def pam_tags(tags: list[str]) -> list[str]:
    """The tags PAM can spell (lowercase ASCII words), each once."""
    return list(dict.fromkeys(tag for tag in tags if isinstance(tag, str) and TAG.fullmatch(tag)))


def _status(fields: dict[str, Any]) -> str:
    if fields["superseded_by"]:
        return MemoryStatus.SUPERSEDED.value
    if fields["invalidated_at"]:
        return MemoryStatus.RETRACTED.value
    if fields["archived_at"]:
        return MemoryStatus.ARCHIVED.value
    return MemoryStatus.ACTIVE.value


def _type(category: str) -> dict[str, str]:
    if category in PAM_TYPES:
        return {"type": category}
    return {"type": MemoryType.CUSTOM.value, "custom_type": category}


def pam_object(fields: dict[str, Any]) -> dict[str, Any]:
    """The PAM memory object of a memory, before the SDK's model checks and spells it.

    `fields` are the memory's own fields, with `ref`, `subject` as the subject's fields (or
    None) and `superseded_by` as the successor's ref (or None).
    """
    metadata = dict(fields["metadata"] or {})
    residue = metadata.pop(RESIDUE, None) or {}
    tags = list(fields["tags"] or [])
    extension: dict[str, Any] = {
        "store": fields["store"],
        "reinforcement_count": fields["reinforcement_count"],
        "pinned": fields["pinned"],
        "importance_floor": fields["importance_floor"],
    }
    for name in ("decayed_at", "archived_at"):
        if fields[name] is not None:
            extension[name] = fields[name]
    if fields["subject"] is not None:
        extension["subject"] = fields["subject"]
    if metadata:
        extension["metadata"] = metadata
    spelled_tags = pam_tags(tags)
    if spelled_tags != tags:
        extension["tags"] = tags
    status = _status(fields)
    temporal: dict[str, Any] = {
        "created_at": fields["created_at"],
        "updated_at": max(fields["updated_at"], fields["created_at"]),
    }
    if fields["invalidated_at"] is not None:
        temporal["valid_until"] = fields["invalidated_at"]
    if fields["superseded_by"] is not None:
        temporal["superseded_by"] = fields["superseded_by"]
    extra_temporal = residue.get("temporal") or {}
    if "valid_from" in extra_temporal:
        temporal["valid_from"] = extra_temporal["valid_from"]
    if "valid_until" in extra_temporal and "valid_until" not in temporal:
        temporal["valid_until"] = extra_temporal["valid_until"]
    if status == MemoryStatus.ACTIVE and residue.get("status"):
        status = residue["status"]
    confidence = {
        **(residue.get("confidence") or {}),
        "current": fields["importance"],
        "last_reinforced": fields["last_seen_at"],
    }
    obj: dict[str, Any] = {
        "id": fields["ref"],
        **_type(fields["category"]),
        "status": status,
        "content": fields["content"],
        "content_hash": compute_content_hash(fields["content"]),
        "tags": spelled_tags,
        "confidence": confidence,
        "temporal": temporal,
        "provenance": dict(DERIVED_VERBATIM["provenance"]),
        "metadata": {**(residue.get("metadata") or {}), EXTENSION: extension},
    }
    for name in VERBATIM:
        if name in residue:
            obj[name] = residue[name]
    return obj


def dump(obj: dict[str, Any]) -> dict[str, Any]:
    """A memory object as the SDK writes it (its model checks it on the way)."""
    return MemoryObject.model_validate(obj).model_dump(
        mode="json", by_alias=True, exclude_none=True
    )


def _when(value: Any) -> dt.datetime | None:
    if value is None:
        return None
    if isinstance(value, dt.datetime):
        return value
    parsed = dt.datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=dt.UTC)


@dataclass
class Parsed:
    """A memory as read from a PAM object: its fields here, and what rides in metadata."""

    ref: str
    values: dict[str, Any]
    subject: dict[str, Any] | None
    superseded_by: str | None


def memory_fields(memory: MemoryObject) -> Parsed:
    """A PAM memory object (validated by the SDK) as memoryadmin's fields, residue aside."""
    obj = memory.model_dump(mode="json", by_alias=True, exclude_none=True)
    pam_metadata = dict(obj.get("metadata") or {})
    extension = pam_metadata.pop(EXTENSION, None)
    extension = extension if isinstance(extension, dict) else {}
    temporal = memory.temporal
    confidence = memory.confidence
    status = memory.status.value
    ended = temporal.valid_until or temporal.updated_at or temporal.created_at
    invalidated_at = ended if status in (MemoryStatus.SUPERSEDED, MemoryStatus.RETRACTED) else None
    archived_at = _when(extension.get("archived_at"))
    if archived_at is None and status == MemoryStatus.ARCHIVED:
        archived_at = temporal.updated_at or temporal.created_at
    last_seen = (confidence and confidence.last_reinforced) or temporal.updated_at
    values: dict[str, Any] = {
        "content": memory.content,
        "category": memory.custom_type if memory.type == MemoryType.CUSTOM else memory.type.value,
        "tags": extension.get("tags", list(memory.tags)),
        "importance": (
            confidence.current if confidence and confidence.current is not None else 0.5
        ),
        "last_seen_at": last_seen or temporal.created_at,
        "created_at": temporal.created_at,
        "updated_at": temporal.updated_at or temporal.created_at,
        "invalidated_at": invalidated_at,
        "archived_at": archived_at,
        "store": extension.get("store", Memory.Store.WORKING),
        "reinforcement_count": extension.get("reinforcement_count", 1),
        "pinned": extension.get("pinned", False),
        "importance_floor": extension.get("importance_floor", 0.0),
        "decayed_at": _when(extension.get("decayed_at")),
        "metadata": dict(extension.get("metadata") or {}),
    }
    subject = extension.get("subject")
    parsed = Parsed(
        ref=memory.id,
        values=values,
        subject=subject if isinstance(subject, dict) else None,
        superseded_by=temporal.superseded_by,
    )
    residue = _residue(obj, parsed, pam_metadata)
    if residue:
        values["metadata"][RESIDUE] = residue
    return parsed


def _residue(obj: dict[str, Any], parsed: Parsed, pam_metadata: dict[str, Any]) -> dict[str, Any]:
    """What of `obj` an export of the parsed memory would not write by itself (see
    `pam_object`): what it never derives, and the end of a validity window that is not an
    invalidation."""
    residue: dict[str, Any] = {}
    for name in VERBATIM:
        if name in obj and obj[name] != DERIVED_VERBATIM.get(name):
            residue[name] = obj[name]
    if pam_metadata:
        residue["metadata"] = pam_metadata
    confidence = {
        name: value
        for name, value in (obj.get("confidence") or {}).items()
        if name in ("initial", "decay_model")
    }
    if confidence:
        residue["confidence"] = confidence
    temporal = obj["temporal"]
    extra_temporal = {name: temporal[name] for name in ("valid_from",) if name in temporal}
    if "valid_until" in temporal and parsed.values["invalidated_at"] is None:
        extra_temporal["valid_until"] = temporal["valid_until"]
    if extra_temporal:
        residue["temporal"] = extra_temporal
    if obj.get("status") == MemoryStatus.DEPRECATED:
        residue["status"] = MemoryStatus.DEPRECATED.value
    return residue


# --- writing a memory store ------------------------------------------------------------------

# Every stored field of a memory (as native exports write them), the vector aside.
MEMORY_COLUMNS = ("pk", "alias", *(field.attname for field in record_fields(MEMORY)))
CHUNK = 2000


def _ref(pk: int, alias: str | None) -> str:
    return alias or str(pk)


def _line(doc: Any) -> bytes:
    return json.dumps(doc, ensure_ascii=False).encode("utf-8")


@dataclass
class ExportCounts:
    memories: int = 0
    relations: int = 0
    conversations: int = 0


def write_memory_store(
    agent: Agent,
    output: IO[bytes],
    *,
    on_memories: Callable[[int], None] | None = None,
    export_id: str | None = None,
) -> ExportCounts:
    """Write the agent's long-term memories to `output` as one PAM memory store.

    Memories go out sorted by id, one chunk of rows at a time, so the integrity checksum (the
    SHA-256 of the canonical memories array in id order) is computed as they are written.
    """
    counts = ExportCounts()
    subjects = {
        row["pk"]: {name: row[name] for name in SUBJECT_FIELDS}
        for row in Subject.objects.filter(agent=agent).values("pk", *SUBJECT_FIELDS)
    }
    refs = {
        pk: _ref(pk, alias)
        for pk, alias in Memory.objects.filter(agent=agent).values_list("pk", "alias")
    }
    order = sorted(refs, key=lambda pk: refs[pk])
    head = {
        "schema": SCHEMA,
        "schema_version": SCHEMA_VERSION,
        "spec_uri": SPEC_URI,
        "export_id": export_id or str(uuid.uuid4()),
        "exported_by": EXPORTED_BY,
        "export_date": timezone.now().isoformat().replace("+00:00", "Z"),
        "owner": {"id": agent.name},
        "export_type": "full",
    }
    output.write(_line(head)[:-1] + b', "memories": [')
    checksum = hashlib.sha256(b"[")
    relations: dict[str, dict[str, Any]] = {}
    kept_relations: list[dict[str, Any]] = []
    conversations: dict[str, dict[str, Any]] = {}
    derived_from: dict[str, list[str]] = {}
    for start in range(0, len(order), CHUNK):
        chunk = order[start : start + CHUNK]
        rows = {
            row["pk"]: row for row in Memory.objects.filter(pk__in=chunk).values(*MEMORY_COLUMNS)
        }
        for position, pk in enumerate(chunk):
            row = rows[pk]
            fields = {
                **row,
                "ref": refs[pk],
                "subject": subjects.get(row["subject_id"]),
                "superseded_by": refs.get(row["superseded_by_id"]),
            }
            memory = dump(pam_object(fields))
            separator = b"," if start + position else b""
            output.write(separator + _line(memory))
            checksum.update(separator + canonical(memory))
            counts.memories += 1
            residue = (row["metadata"] or {}).get(RESIDUE) or {}
            kept_relations.extend(residue.get("relations") or [])
            if fields["superseded_by"] is not None:
                relation = _supersedes(fields["superseded_by"], memory)
                relations[relation["id"]] = relation
            conversation = residue.get("conversation")
            ref = memory["provenance"].get("conversation_ref")
            if ref:
                derived_from.setdefault(ref, []).append(memory["id"])
                if not isinstance(conversation, dict) or conversation.get("id") != ref:
                    # Once the index names one conversation, the validator wants every
                    # conversation a memory names in it.
                    conversation = {
                        "id": ref,
                        "platform": memory["provenance"]["platform"],
                        "temporal": {"created_at": memory["temporal"]["created_at"]},
                    }
                conversations.setdefault(ref, conversation)
        if on_memories:
            on_memories(len(chunk))
    checksum.update(b"]")
    all_refs = set(refs.values())
    for relation in kept_relations:
        if _still_holds(relation, all_refs, relations):
            relations[relation["id"]] = relation
    output.write(b'], "relations": ')
    output.write(_line(sorted(relations.values(), key=lambda relation: relation["id"])))
    index = [
        {**entry, "derived_memories": derived_from[ref]}
        for ref, entry in sorted(conversations.items())
    ]
    output.write(b', "conversations_index": ')
    output.write(_line(index))
    integrity = {
        "canonicalization": "RFC8785",
        "checksum": f"sha256:{checksum.hexdigest()}",
        "total_memories": counts.memories,
    }
    output.write(b', "integrity": ' + _line(integrity) + b"}\n")
    counts.relations = len(relations)
    counts.conversations = len(index)
    return counts


def write_embeddings(agent: Agent, output: IO[bytes]) -> int:
    """The agent's memory vectors as a PAM embeddings file, each naming its memory by the id
    the memory store gives it and the model that computed it; memories without a vector are
    left out. Returns how many were written."""
    output.write(
        _line({"schema": f"{SCHEMA}-embeddings", "schema_version": SCHEMA_VERSION})[:-1]
        + b', "embeddings": ['
    )
    embedded = Memory.objects.filter(agent=agent, embedding__isnull=False)
    rows = embedded.values_list("pk", "alias", "embedding", "embedding_model", "updated_at")
    written = 0
    for pk, alias, vector, model, updated_at in rows.iterator(chunk_size=CHUNK):
        ref = _ref(pk, alias)
        numbers = [float(x) for x in vector or []]  # the query asks for vectors only
        entry = {
            "id": f"embedding:{ref}",
            "memory_id": ref,
            "model": model or "unknown",
            "dimensions": len(numbers),
            "created_at": updated_at.isoformat().replace("+00:00", "Z"),
            "vector": numbers,
        }
        output.write((b"," if written else b"") + _line(entry))
        written += 1
    output.write(b"]}\n")
    return written


class _Unusual(Exception):
    """A value whose RFC 8785 form the standard JSON encoder does not write."""


# JSON's encoder writes integers exactly only up to this size, and RFC 8785 numbers are doubles.
_EXACT_INTEGER = 2**53


def _jcs_ready(value: Any) -> Any:
    """`value` with its numbers as RFC 8785 writes them (a double without a fraction as an
    integer), or _Unusual where the standard encoder would differ: an exponent, a key outside
    the Basic Multilingual Plane (RFC 8785 orders keys by UTF-16 code units)."""
    if isinstance(value, dict):
        for key in value:
            if not isinstance(key, str) or (not key.isascii() and max(key) > "\uffff"):
                raise _Unusual
        return {key: _jcs_ready(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jcs_ready(item) for item in value]
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int):
        if abs(value) >= _EXACT_INTEGER:
            raise _Unusual
        return value
    if isinstance(value, float):
        if value.is_integer() and abs(value) < _EXACT_INTEGER:
            return int(value)
        if "e" in repr(value) or "n" in repr(value):
            raise _Unusual
        return value
    raise _Unusual


def canonical(memory: dict[str, Any]) -> bytes:
    """A memory's RFC 8785 (JCS) form, as the SDK's `canonicalize_jcs` writes it.

    The standard encoder writes JCS for what exports hold (sorted keys, no spaces, the same
    string escapes, shortest round-trip numbers) at a tenth of the cost of the pure-Python
    canonicaliser, which is kept for whatever it would write differently.
    """
    try:
        ready = _jcs_ready(memory)
        text = json.dumps(ready, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        return text.encode("utf-8")
    except (_Unusual, UnicodeEncodeError):
        return canonicalize_jcs(memory)


def _supersedes(successor: str, memory: dict[str, Any]) -> dict[str, Any]:
    """The relation an export states for a superseded memory, the same at every export."""
    temporal = memory["temporal"]
    return {
        "id": f"supersedes:{memory['id']}",
        "from": successor,
        "to": memory["id"],
        "type": RelationType.SUPERSEDES.value,
        "created_at": temporal.get("valid_until") or temporal["updated_at"],
    }


def _still_holds(
    relation: dict[str, Any], refs: set[str], derived: dict[str, dict[str, Any]]
) -> bool:
    """A kept relation goes out while both its memories do; a `supersedes` one only while the
    memory it names is still superseded by that successor (the link has a field here)."""
    if relation.get("from") not in refs or relation.get("to") not in refs:
        return False
    if relation.get("type") != RelationType.SUPERSEDES:
        return True
    stated = derived.get(f"supersedes:{relation['to']}")
    if stated is None or stated["from"] != relation["from"]:
        return False
    del derived[stated["id"]]
    return True


# --- reading a memory store ------------------------------------------------------------------


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
            yield _incoming(parsed, subjects, times_stated)

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


def _incoming(parsed: Parsed, subjects: dict[str, Subject], times_stated: bool) -> Incoming:
    values = dict(parsed.values)
    where = f"memory {parsed.ref!r}"
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
    )


# --- importing -----------------------------------------------------------------------------


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
    return PamImport(report=report, notes=reading.notes)


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
