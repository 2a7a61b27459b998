"""The exports people have, as PAM memory stores: Claude, ChatGPT, mem0 and Letta.

Each reader turns another tool's export into PAM documents (one per agent it names) and, for
Letta, memory files; `pam.import_memory_store` then validates and imports them like any PAM
file. Claude's and ChatGPT's exports are read by the PAM SDK's own converters; mem0 and Letta
have none there, so their memories are built with the SDK's models from each format's own
definition:

- Claude (`memories.json`, `conversations.json`, in the export's folder): the SDK's
  `AnthropicConverter`. The account-wide memory gets a stable id (the SDK draws a random one
  each run, and an import must find it again); Claude states no time for its memories, so the
  times an import gives them apply to new memories only.
- ChatGPT (`conversations.json`): the SDK's `OpenAIConverter`. A memory is what the assistant
  sent to its memory tool (`bio`) in a conversation; the conversation is its provenance
  (conversation and message ids) and its entry in the conversations index.
- mem0 (`Memory.get_all()` / `MemoryClient.get_all()` output: a list, or `{"results": [...]}`,
  of `id, memory, hash, created_at, updated_at, user_id, agent_id, run_id, actor_id, role,
  metadata`): the id is kept, `hash` (MD5 of the text, as mem0 computes it) is checked,
  `user_id` becomes the memory's subject, `agent_id` the agent it goes to, and everything else
  is kept in the memory's metadata under `mem0`.
- Letta agent files (`.af`, both the single-agent `core_memory` layout and the `agents` +
  `blocks` layout of `letta/schemas/agent_file.py`): each core memory block becomes the memory
  file `/memories/letta/<label>.md` (under `<agent name>/` when the file holds several
  agents), its limit and description kept in the import trace. Neither layout carries archival
  passages (the Agent File project lists them on its roadmap).
- Letta archival memory (the list of passages its API answers for an agent, `id, text, tags,
  created_at, updated_at, …`): each passage a long-term memory of the agent the import names,
  its id kept, its tags kept, the rest (agent or archive, source and file ids, metadata) kept
  in the memory's metadata under `letta`; its vector is left out (memoryadmin embeds the text
  with its own model), and a passage marked deleted does not come in.
"""

from __future__ import annotations

import datetime as dt
import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from portable_ai_memory import (
    ConfidenceBlock,
    ConversationIndexEntry,
    MemoryObject,
    MemoryStore,
    Owner,
    ProvenanceBlock,
    TemporalBlock,
    compute_content_hash,
)
from portable_ai_memory.converters import validate_converter_output
from portable_ai_memory.converters.anthropic import AnthropicConverter
from portable_ai_memory.converters.openai import OpenAIConverter
from portable_ai_memory.exceptions import PAMError
from portable_ai_memory.models.conversation import Conversation
from portable_ai_memory.models.enums import ExtractionMethod, MemoryType
from portable_ai_memory.models.memory_store import ConversationTemporal, MetadataBlock
from pydantic import ValidationError

from stores.errors import ApplicationError
from stores.interchange import pam
from stores.services.importing.cleaning import clean_values
from stores.services.importing.entries import Incoming, Trace
from stores.surfaces import FILE

SOURCES = ("claude", "chatgpt", "mem0", "letta")
CLAUDE_MEMORY_ID = "claude-conversations-memory"
# ChatGPT's memory tool: what the assistant sends it is what ChatGPT remembers.
CHATGPT_MEMORY_TOOL = "bio"
LETTA_FOLDER = "/memories/letta"
CLAUDE_PROVENANCE = ProvenanceBlock(
    platform="claude", extraction_method=ExtractionMethod.API_EXPORT
)


@dataclass
class Converted:
    """What an export holds, ready for the import: PAM documents by agent (None: the agent the
    import names), memory files for that agent, and notes for the report."""

    stores: dict[str | None, dict[str, Any] | pam.Document] = field(default_factory=dict)
    files: list[Incoming] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    # Whether the documents' memory times are the tool's own (else they were made up now).
    times_stated: bool = True


def convert(source: str, path: Path) -> Converted:
    """Read one tool's export; raises pam.Refused naming what cannot be read."""
    readers = {"claude": _claude, "chatgpt": _chatgpt, "mem0": _mem0, "letta": _letta}
    try:
        return readers[source](path)
    except (PAMError, ValidationError) as error:
        raise pam.Refused("schema", f"{path.name}: {error}") from None


def _json_file(path: Path) -> Any:
    """A JSON file of an export, refused by its size before it is read."""
    if not path.is_file():
        raise pam.Refused("file", f"{path} is not a file.")
    return pam.read_json(path)


def _store(memories: list[MemoryObject], **extra: Any) -> dict[str, Any]:
    store = MemoryStore(
        schema_version=pam.SCHEMA_VERSION, owner=Owner(id="import"), memories=memories, **extra
    )
    return store.model_dump(mode="json", by_alias=True, exclude_none=True)


# --- Claude ---------------------------------------------------------------------------------


def _claude(path: Path) -> Converted:
    folder = path if path.is_dir() else path.parent
    converter = AnthropicConverter()
    converted = Converted(times_stated=False)
    memories_file = folder / "memories.json"
    memories: list[MemoryObject] = []
    if memories_file.is_file():
        store = converter.convert_memories(_json_file(memories_file))
        for memory in store.memories:
            # The SDK stamps each run's memories with that run's time; Claude says none.
            stated: dict[str, Any] = {"provenance": CLAUDE_PROVENANCE}
            if memory.type == MemoryType.CONTEXT and memory.id.startswith("claude-mem-"):
                stated["id"] = CLAUDE_MEMORY_ID
            memories.append(memory.model_copy(update=stated))
    conversations_file = folder / "conversations.json"
    if conversations_file.is_file():
        conversations = converter.convert_conversations(_json_file(conversations_file))
        validate_converter_output(conversations)
        converted.notes.append(
            f"{len(conversations)} Claude conversation(s) read and valid; Claude names no "
            "memory they gave, so none is linked to its conversation."
        )
    if not memories_file.is_file() and not conversations_file.is_file():
        raise pam.Refused("file", f"{folder} holds neither memories.json nor conversations.json.")
    converted.stores[None] = _store(memories)
    return converted


# --- ChatGPT --------------------------------------------------------------------------------


def _chatgpt(path: Path) -> Converted:
    file = path / "conversations.json" if path.is_dir() else path
    conversations = OpenAIConverter().convert_conversations(_json_file(file))
    validate_converter_output(conversations)
    memories: list[MemoryObject] = []
    index: list[ConversationIndexEntry] = []
    for conversation in conversations:
        derived = [_chatgpt_memory(conversation, message) for message in conversation.messages]
        found = [memory for memory in derived if memory is not None]
        if not found:
            continue
        memories.extend(found)
        index.append(
            ConversationIndexEntry(
                id=conversation.id,
                platform="chatgpt",
                title=conversation.title,
                message_count=len(conversation.messages),
                temporal=ConversationTemporal(
                    created_at=conversation.temporal.created_at,
                    updated_at=conversation.temporal.updated_at,
                ),
                derived_memories=[memory.id for memory in found],
            )
        )
    converted = Converted()
    converted.stores[None] = _store(memories, conversations_index=index)
    converted.notes.append(
        f"{len(conversations)} ChatGPT conversation(s) read; {len(index)} gave memories."
    )
    return converted


def _chatgpt_memory(conversation: Conversation, message: Any) -> MemoryObject | None:
    for call in message.tool_calls:
        text = call.input if isinstance(call.input, str) else None
        if call.name != CHATGPT_MEMORY_TOOL or not text or not text.strip():
            continue
        return MemoryObject(
            id=f"chatgpt-{message.id}",
            type=MemoryType.FACT,
            content=text.strip(),
            content_hash=compute_content_hash(text.strip()),
            temporal=TemporalBlock(created_at=message.created_at),
            provenance=ProvenanceBlock(
                platform="chatgpt",
                conversation_ref=conversation.id,
                message_ref=message.id,
                extraction_method=ExtractionMethod.LLM_INFERENCE,
            ),
        )
    return None


# --- mem0 -----------------------------------------------------------------------------------

# The fields of a mem0 memory that have one here; the rest (hash, user_id, agent_id, run_id,
# actor_id, role, metadata, categories, …) is kept whole in the memory's metadata.
MEM0_MAPPED = ("id", "memory", "created_at", "updated_at")


def _mem0(path: Path) -> Converted:
    document = _json_file(path)
    items = document.get("results") if isinstance(document, dict) else document
    if not isinstance(items, list):
        raise pam.Refused("schema", f"{path.name}: not mem0's get_all output (a list of memories).")
    by_agent: dict[str | None, list[MemoryObject]] = {}
    for number, item in enumerate(items):
        memory, agent = _mem0_memory(item, number)
        by_agent.setdefault(agent, []).append(memory)
    converted = Converted()
    for agent, memories in by_agent.items():
        converted.stores[agent] = _store(memories)
    return converted


def _mem0_memory(item: Any, number: int) -> tuple[MemoryObject, str | None]:
    where = f"mem0 memory {item.get('id')!r}" if isinstance(item, dict) else f"item {number}"
    if not isinstance(item, dict):
        raise pam.Refused("schema", f"{where} is not an object.")
    text = item.get("memory")
    if not isinstance(item.get("id"), str) or not isinstance(text, str) or not text.strip():
        raise pam.Refused("schema", f"{where}: id and memory (text) are required.")
    stated_hash = item.get("hash")
    if stated_hash is not None and stated_hash != hashlib.md5(text.encode()).hexdigest():
        raise pam.Refused("hash", f"{where}: its hash is not the MD5 of its text.")
    created_at = _when(item.get("created_at"), where)
    updated_at = _when(item.get("updated_at"), where) if item.get("updated_at") else None
    user_id = item.get("user_id")
    kept = {
        key: item[key] for key in item if key not in ("id", "memory", "created_at", "updated_at")
    }
    extension: dict[str, Any] = {"metadata": {"mem0": kept}}
    if isinstance(user_id, str) and user_id:
        extension["subject"] = {"external_id": user_id, "display_name": user_id}
    agent = item.get("agent_id")
    memory = _fact(
        item["id"],
        text,
        tags=item.get("categories") or [],
        created_at=created_at,
        updated_at=updated_at,
        provenance=ProvenanceBlock(
            platform="mem0",
            platform_user_id=user_id if isinstance(user_id, str) else None,
            extraction_method=ExtractionMethod.LLM_INFERENCE,
        ),
        extension=extension,
    )
    return memory, agent if isinstance(agent, str) and agent else None


def _fact(
    memory_id: str,
    text: str,
    *,
    tags: list[Any],
    created_at: dt.datetime,
    updated_at: dt.datetime | None,
    provenance: ProvenanceBlock,
    extension: dict[str, Any],
) -> MemoryObject:
    """A memory another tool kept as a plain text with its times: a fact, at middling
    confidence (the tool states none), what has no PAM field kept in the extension."""
    return MemoryObject(
        id=memory_id,
        type=MemoryType.FACT,
        content=text,
        content_hash=compute_content_hash(text),
        tags=pam.pam_tags(tags),
        confidence=ConfidenceBlock(current=0.5),
        temporal=TemporalBlock(
            created_at=created_at, updated_at=max(updated_at, created_at) if updated_at else None
        ),
        provenance=provenance,
        metadata=MetadataBlock.model_validate({pam.EXTENSION: extension}),
    )


def _when(value: Any, where: str) -> dt.datetime:
    if not isinstance(value, str):
        raise pam.Refused("schema", f"{where}: created_at must be an ISO 8601 time.")
    try:
        moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        raise pam.Refused("schema", f"{where}: {value!r} is not an ISO 8601 time.") from None
    return moment if moment.tzinfo else moment.replace(tzinfo=dt.UTC)


# --- Letta ----------------------------------------------------------------------------------


def _letta(path: Path) -> Converted:
    document = _json_file(path)
    if isinstance(document, list):
        return _letta_passages(path.name, document)
    if not isinstance(document, dict):
        raise pam.Refused(
            "schema",
            f"{path.name}: not a Letta agent file (a JSON object) nor archival passages (a list).",
        )
    if "core_memory" in document:
        agents = [(document.get("name") or "agent", document["core_memory"])]
    elif isinstance(document.get("agents"), list) and isinstance(document.get("blocks"), list):
        blocks = {block.get("id"): block for block in document["blocks"] if isinstance(block, dict)}
        agents = []
        for agent in document["agents"]:
            if not isinstance(agent, dict):
                raise pam.Refused("schema", f"{path.name}: an agent is not an object.")
            missing = [ref for ref in agent.get("block_ids") or [] if ref not in blocks]
            if missing:
                raise pam.Refused(
                    "xref-block", f"agent {agent.get('name')!r} names missing blocks {missing}."
                )
            agents.append(
                (
                    agent.get("name") or agent.get("id") or "agent",
                    [blocks[ref] for ref in agent.get("block_ids") or []],
                )
            )
    else:
        raise pam.Refused(
            "schema", f"{path.name}: not a Letta agent file (no core_memory, no agents and blocks)."
        )
    converted = Converted()
    for name, blocks_of_agent in agents:
        folder = LETTA_FOLDER if len(agents) == 1 else f"{LETTA_FOLDER}/{name}"
        for block in blocks_of_agent:
            converted.files.append(_letta_file(path.name, folder, block))
    converted.notes.append(
        f"{len(converted.files)} core memory block(s) as memory files; the agent file holds no "
        "archival passages."
    )
    return converted


# The fields of a Letta passage that have one here; its vector is the model's of that server
# (made again here); the rest (agent or archive, source, file, metadata, …) is kept whole.
LETTA_PASSAGE_MAPPED = ("id", "text", "tags", "created_at", "updated_at", "embedding")


def _letta_passages(file_name: str, passages: list[Any]) -> Converted:
    """Letta's archival memory as its API lists it (`GET /v1/agents/{id}/archival-memory`),
    a list of passages: each a long-term memory of the agent the import names."""
    memories: list[MemoryObject] = []
    deleted = 0
    for number, passage in enumerate(passages):
        where = f"passage {number}"
        if not isinstance(passage, dict):
            raise pam.Refused("schema", f"{file_name}: {where} is not an object.")
        where = f"Letta passage {passage.get('id')!r}"
        text = passage.get("text")
        if not isinstance(passage.get("id"), str) or not isinstance(text, str) or not text.strip():
            raise pam.Refused("schema", f"{where}: id and text are required.")
        if passage.get("is_deleted") is True:
            deleted += 1
            continue
        tags = passage.get("tags") or []
        if not isinstance(tags, list):
            raise pam.Refused("schema", f"{where}: tags must be a list.")
        kept = {key: passage[key] for key in passage if key not in LETTA_PASSAGE_MAPPED}
        memories.append(
            _fact(
                passage["id"],
                text,
                tags=tags,
                created_at=_when(passage.get("created_at"), where),
                updated_at=_when(passage["updated_at"], where)
                if passage.get("updated_at")
                else None,
                provenance=ProvenanceBlock(
                    platform="letta", extraction_method=ExtractionMethod.API_EXPORT
                ),
                extension={"metadata": {"letta": kept}},
            )
        )
    converted = Converted(stores={None: _store(memories)})
    converted.notes.append(
        f"{len(memories)} archival passage(s) as long-term memories"
        + (f"; {deleted} deleted one(s) left out." if deleted else ".")
    )
    return converted


def _letta_file(file_name: str, folder: str, block: Any) -> Incoming:
    if not isinstance(block, dict) or not isinstance(block.get("label"), str):
        raise pam.Refused("schema", f"{file_name}: a memory block has no label.")
    label, value = block["label"], block.get("value")
    if not isinstance(value, str):
        raise pam.Refused("schema", f"{file_name}: block {label!r} has no text value.")
    memory_path = f"{folder}/{label}.md"
    try:
        values = clean_values(FILE.key, {"path": memory_path, "content": value})
    except ApplicationError as error:
        raise pam.Refused("memoryadmin", f"block {label!r}: {error.message}") from None
    raw = {key: block[key] for key in block if key not in ("value",)}
    return Incoming(
        surface=FILE.key,
        ref=memory_path,
        values=values,
        source=f"{file_name} block {label!r}",
        trace=Trace(source_format="letta", path=f"{file_name}#{memory_path}", raw=raw),
    )
