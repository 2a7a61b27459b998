"""One memory both ways: memoryadmin's fields as a PAM memory object, and back, with what
either side has no field for kept where the other can carry it (see the package's docstring)."""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from portable_ai_memory import MemoryObject, compute_content_hash
from portable_ai_memory.models.enums import MemoryStatus, MemoryType
from portable_ai_memory.models.memory_store import ProvenanceBlock

from stores.models import Memory

SCHEMA = "portable-ai-memory"
SCHEMA_VERSION = "1.0"
SPEC_URI = "https://portable-ai-memory.org/spec/v1.0"
EXPORTED_BY = "memoryadmin/0.1.0"
# The platform of a memory whose origin the file does not say.
PLATFORM = "memoryadmin"
# Where PAM's fields without a home ride in a memory's metadata here, and where memoryadmin's
# ride in a PAM memory's metadata.
RESIDUE = "pam"
EXTENSION = "memoryadmin"
PAM_TYPES = frozenset(member.value for member in MemoryType) - {MemoryType.CUSTOM.value}
# The tag pattern of PAM's schema: its SDK checks it inside a model validator and names no
# function for it, and a tag that fails it must go to the extension rather than refuse the export.
TAG = re.compile(r"^[a-z0-9][a-z0-9_-]*$")
SUBJECT_FIELDS = ("external_id", "display_name", "privacy_level", "kind", "aliases")
# Residue keys an export writes back verbatim (nothing of memoryadmin's says them), and what
# an export writes for them when a memory has none. `embedding_ref` is not kept: vectors are
# recomputed here (PAM lets an importer regenerate them), and an export without its embeddings
# file must leave it null.
VERBATIM = ("summary", "access", "provenance")
DERIVED_VERBATIM: dict[str, Any] = {"provenance": {"platform": PLATFORM}}


class Refused(Exception):
    """A PAM file that is not imported at all: `check` names the failed check, the message
    names the memory (or the file) and what is wrong."""

    def __init__(self, check: str, message: str) -> None:
        super().__init__(f"[{check}] {message}")
        self.check = check
        self.message = message


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


def provenance_of(source: dict[str, str] | None) -> dict[str, Any]:
    """PAM's provenance of a memory created here: the source of the write that created it
    (platform, conversation, message), or memoryadmin itself when it named none. PAM spells
    a platform in lower case letters, digits, `-` and `_`; a name it cannot spell stays ours."""
    provenance = dict(DERIVED_VERBATIM["provenance"])
    if not source:
        return provenance
    platform = re.sub(r"[^a-z0-9_-]+", "-", source["source_platform"].lower()).strip("-")[:32]
    if len(platform) >= 2:
        provenance["platform"] = platform
    if source["source_conversation"]:
        provenance["conversation_ref"] = source["source_conversation"]
    if source["source_message"]:
        provenance["message_ref"] = source["source_message"]
    return provenance


def _derived_provenance(provenance: dict[str, Any]) -> bool:
    """Whether an export writes this provenance by itself: it names only a source, which the
    import keeps as the first revision's and an export derives it from."""
    parts = source_of(ProvenanceBlock.model_validate(provenance))
    columns = {f"source_{name}": parts.get(name, "") for name in SOURCE_NAMES}
    return provenance_of(columns) == provenance


# The parts of a write's source a PAM provenance names.
SOURCE_NAMES = ("platform", "conversation", "message")


def source_of(provenance: ProvenanceBlock) -> dict[str, str]:
    """The source a PAM memory's provenance names, as a write's `source` (checked by the
    caller like any other): its platform, conversation and message."""
    parts = {
        "platform": provenance.platform if provenance.platform != PLATFORM else "",
        "conversation": provenance.conversation_ref or "",
        "message": provenance.message_ref or "",
    }
    return {name: part for name, part in parts.items() if part}


def pam_object(fields: dict[str, Any]) -> dict[str, Any]:
    """The PAM memory object of a memory, before the SDK's model checks and spells it.

    `fields` are the memory's own fields, with `ref`, `subject` as the subject's fields (or
    None), `superseded_by` as the successor's ref (or None) and `source` as the source of the
    write that created it (its `source_*` revision columns, or None).
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
        "provenance": provenance_of(fields.get("source")),
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
    if "provenance" in residue and _derived_provenance(residue["provenance"]):
        del residue["provenance"]
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
