"""A memory store checked as the PAM SDK checks one, its memories streamed.

The SDK validates a document it holds whole: its models (`load_dict`), then its deep validator
(`validate_memory_store`). Here the members around the memories are validated by the SDK's
`MemoryStore` model (with no memories), each memory by its `MemoryObject` model as it comes, and
the deep validator runs on one batch of memories at a time for the checks that look at a
memory alone (content hash, times, custom type). The checks that need the whole document (ids
unique, every cross-reference, the integrity block) are kept across batches here, by the SDK's
names and its messages, with a set of ids and a running checksum instead of every model.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from portable_ai_memory import (
    ConversationIndexEntry,
    MemoryObject,
    MemoryStore,
    validate_memory_store,
)
from portable_ai_memory.models.memory_store import RelationObject
from pydantic import ValidationError

from stores.interchange.pam.document import MEMORIES, Document
from stores.interchange.pam.integrity import Checksum, canonical
from stores.interchange.pam.mapping import EXTENSION, SCHEMA, SUBJECT_FIELDS, Refused

# Memories the deep validator sees at once.
CHECK_BATCH = 1000
# Its checks that need every memory of the document: kept across batches below.
WHOLE_DOCUMENT_CHECKS = frozenset({"id-unique", "xref-superseded"})
OTHER_SCHEMAS = ("portable-ai-memory-conversation", "portable-ai-memory-embeddings")


@dataclass
class Checked:
    """What the import needs of a memory store that passed every check, besides its memories
    (read again, one batch at a time)."""

    relations: list[RelationObject]
    conversations_index: list[ConversationIndexEntry]
    # Every memory's successor as its `temporal.superseded_by` states it, where it does.
    stated_successors: dict[str, str] = field(default_factory=dict)
    # The subjects the memories' extensions name, by external id (the first spelling wins).
    subjects: dict[str, dict[str, Any]] = field(default_factory=dict)
    naming_an_embedding: int = 0
    conversations_named: set[str] = field(default_factory=set)
    count: int = 0


def check_store(document: Document) -> Checked:
    """Every check of the SDK's models and deep validator; raises Refused naming the first
    that fails (the memory and the check), with how many more did."""
    head = document.head()
    store = _validated_head(head, document.name)
    checks = _Checks(store)
    batch: list[MemoryObject] = []
    for position, raw in enumerate(document.memories()):
        batch.append(_validated_memory(raw, position))
        if len(batch) == CHECK_BATCH:
            checks.memories(batch)
            batch = []
    checks.memories(batch)
    return checks.finish()


def _validated_head(head: dict[str, Any], name: str) -> MemoryStore:
    """The document's members around its memories, through the SDK's model of a store."""
    schema = head.get("schema")
    if schema is None:
        raise Refused("schema", "Missing 'schema' field — cannot determine document type")
    if schema != SCHEMA:
        known = schema in OTHER_SCHEMAS
        raise Refused(
            "schema",
            f"not a memory store (its schema is {schema!r})."
            if known
            else f"Unknown schema: {schema!r}. Expected one of: {[SCHEMA, *OTHER_SCHEMAS]}",
        )
    try:
        return MemoryStore.model_validate(head)
    except ValidationError as error:
        raise Refused("schema", _schema_message(error, "")) from None


def _validated_memory(raw: Any, position: int) -> MemoryObject:
    try:
        return MemoryObject.model_validate(raw)
    except ValidationError as error:
        name = raw.get("id") if isinstance(raw, dict) else None
        where = f"memory {name!r} ({MEMORIES}[{position}])"
        raise Refused("schema", _schema_message(error, where)) from None


def _schema_message(error: ValidationError, where: str) -> str:
    """The first error of the SDK's model, at its place in the document."""
    first = error.errors()[0]
    inner = ".".join(str(part) for part in first["loc"])
    place = f"{where}, {inner or 'the memory'}" if where else inner or "the document"
    more = f" (and {error.error_count() - 1} more)" if error.error_count() > 1 else ""
    return f"{place}: {first['msg']}{more}"


class _Checks:
    """The deep validator's checks, run as memories come and finished once all have."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.first: tuple[str, str] | None = None
        self.failed = 0
        self.ids: set[str] = set()
        self.conversation_ids = {entry.id for entry in store.conversations_index}
        self.checksum = Checksum(in_id_order=False) if store.integrity is not None else None
        self.checked = Checked(
            relations=list(store.relations),
            conversations_index=list(store.conversations_index),
        )
        # The members around the memories, checked by the SDK itself: ids unique among the
        # relations and the conversations, the conversations' times. What names memories
        # (cross-references, the integrity block) waits for them.
        around = store.model_copy(update={"integrity": None})
        for issue in validate_memory_store(around).errors:
            if not issue.check.startswith("xref-"):
                self.error(issue.check, issue.message)

    def error(self, check: str, message: str) -> None:
        if self.first is None:
            self.first = (check, message)
        self.failed += 1

    def memories(self, batch: list[MemoryObject]) -> None:
        if not batch:
            return
        alone = self.store.model_copy(
            update={
                "memories": batch,
                "relations": [],
                "conversations_index": [],
                "integrity": None,
            }
        )
        for issue in validate_memory_store(alone).errors:
            if issue.check not in WHOLE_DOCUMENT_CHECKS:
                self.error(issue.check, issue.message)
        for memory in batch:
            self._memory(memory)

    def _memory(self, memory: MemoryObject) -> None:
        checked = self.checked
        checked.count += 1
        if memory.id in self.ids:
            self.error("id-unique", f"Duplicate memory ID: '{memory.id}'")
        self.ids.add(memory.id)
        ref = memory.provenance.conversation_ref
        if ref:
            checked.conversations_named.add(ref)
            if self.conversation_ids and ref not in self.conversation_ids:
                self.error(
                    "xref-conversation",
                    f"Memory '{memory.id}': conversation_ref='{ref}' not in conversations_index",
                )
        if memory.temporal.superseded_by:
            checked.stated_successors[memory.id] = memory.temporal.superseded_by
        if memory.embedding_ref:
            checked.naming_an_embedding += 1
        self._subject(memory)
        if self.checksum is not None:
            dumped = memory.model_dump(mode="json", by_alias=True, exclude_none=True)
            self.checksum.add(memory.id, canonical(dumped))

    def _subject(self, memory: MemoryObject) -> None:
        extension = (memory.metadata.model_extra or {}).get(EXTENSION) if memory.metadata else None
        subject = extension.get("subject") if isinstance(extension, dict) else None
        if not isinstance(subject, dict):
            return
        external_id = subject.get("external_id")
        if not isinstance(external_id, str) or not external_id:
            # Not the SDK's check: memoryadmin's own, of its extension.
            self.error("subject", f"memory {memory.id!r}: its subject has no external_id.")
            return
        self.checked.subjects.setdefault(
            external_id, {name: subject[name] for name in SUBJECT_FIELDS if name in subject}
        )

    def finish(self) -> Checked:
        ids, store = self.ids, self.store
        for memory_id, successor in self.checked.stated_successors.items():
            if successor not in ids:
                self.error(
                    "xref-superseded",
                    f"Memory '{memory_id}': superseded_by='{successor}' not found",
                )
        for relation in store.relations:
            for end, ref in (("'from'", relation.from_), ("'to'", relation.to)):
                if ref not in ids:
                    message = f"Relation '{relation.id}': {end} → unknown '{ref}'"
                    self.error("xref-relation", message)
        for entry in store.conversations_index:
            for ref in entry.derived_memories:
                if ref in ids:
                    continue
                self.error(
                    "xref-derived",
                    f"Conversation '{entry.id}': derived_memories → unknown '{ref}'",
                )
        integrity = store.integrity
        if integrity is not None and self.checksum is not None:
            if integrity.total_memories != self.checked.count:
                self.error(
                    "integrity-total",
                    f"integrity.total_memories={integrity.total_memories}, "
                    f"actual={self.checked.count}",
                )
            computed = self.checksum.value()
            if computed != integrity.checksum:
                self.error(
                    "integrity-checksum",
                    f"Declared: {integrity.checksum}, computed: {computed}",
                )
        if self.first is not None:
            check, message = self.first
            more = f" (and {self.failed - 1} more)" if self.failed > 1 else ""
            raise Refused(check, f"{message}{more}")
        return self.checked
