"""Writing an agent's memories as a PAM memory store (and its embeddings file), streamed: the
memories in id order, the integrity checksum computed as they are written."""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

from django.db import connection
from django.db.models import CharField, OuterRef, Subquery
from django.db.models.functions import Cast, Coalesce, Collate, JSONObject
from django.utils import timezone
from portable_ai_memory.models.enums import RelationType

from stores.interchange.native import record_fields
from stores.interchange.pam.integrity import Checksum, canonical
from stores.interchange.pam.mapping import (
    EXPORTED_BY,
    RESIDUE,
    SCHEMA,
    SCHEMA_VERSION,
    SPEC_URI,
    SUBJECT_FIELDS,
    dump,
    pam_object,
)
from stores.models import Agent, Memory, Revision, Subject
from stores.surfaces import MEMORY

# Every stored field of a memory (as native exports write them), the vector aside.
MEMORY_COLUMNS = ("pk", "alias", *(field.attname for field in record_fields(MEMORY)))
CHUNK = 2000
# The collation that compares text by its UTF-8 bytes, by database.
BYTE_ORDER = {"postgresql": "C", "sqlite": "BINARY"}
# The parts of the source of the write that created a memory that PAM's provenance carries.
CREATING_SOURCE = ("source_platform", "source_conversation", "source_message")


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

    Memories go out sorted by id, streamed from the database a chunk of rows at a time, so
    the integrity checksum (the SHA-256 of the canonical memories array in id order) is
    computed as they are written, and each is encoded once.
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
    checksum = Checksum(in_id_order=True)
    relations: dict[str, dict[str, Any]] = {}
    kept_relations: list[dict[str, Any]] = []
    conversations: dict[str, dict[str, Any]] = {}
    derived_from: dict[str, list[str]] = {}
    for row in _memories_in_id_order(agent):
        fields = {
            **row,
            "ref": refs[row["pk"]],
            "subject": subjects.get(row["subject_id"]),
            "superseded_by": refs.get(row["superseded_by_id"]),
        }
        memory = dump(pam_object(fields))
        # Written in the form the checksum hashes (RFC 8785, valid JSON): encoded once.
        form = canonical(memory)
        output.write(b"," + form if counts.memories else form)
        checksum.add(memory["id"], form)
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
        if on_memories and counts.memories % CHUNK == 0:
            on_memories(CHUNK)
    if on_memories and counts.memories % CHUNK:
        on_memories(counts.memories % CHUNK)
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
        "checksum": checksum.value(),
        "total_memories": counts.memories,
    }
    output.write(b', "integrity": ' + _line(integrity) + b"}\n")
    counts.relations = len(relations)
    counts.conversations = len(index)
    return counts


def _memories_in_id_order(agent: Agent) -> Iterator[dict[str, Any]]:
    """The agent's memories as rows of their stored fields, in the order of their PAM ids (a
    server-side cursor read a chunk at a time), each with `source`: the source of the write
    that created it (the parts PAM's provenance carries), or None.

    The ids are compared as Python compares strings (by code point, as the SDK sorts them for
    the checksum): in UTF-8 bytes, which is that order, whatever the database's own collation.
    """
    first_write = Revision.objects.filter(
        surface=MEMORY.key, record_id=OuterRef("pk"), version_before=0
    ).order_by()
    ref: Any = Coalesce("alias", Cast("pk", output_field=CharField()))
    if connection.vendor in BYTE_ORDER:
        ref = Collate(ref, BYTE_ORDER[connection.vendor])
    rows = (
        Memory.objects.filter(agent=agent)
        .annotate(
            export_ref=ref,
            source=Subquery(
                first_write.values(source=JSONObject(**{name: name for name in CREATING_SOURCE}))[
                    :1
                ]
            ),
        )
        .order_by("export_ref", "pk")
        .values(*MEMORY_COLUMNS, "source")
    )
    return rows.iterator(chunk_size=CHUNK)


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
