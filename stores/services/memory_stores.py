"""Writes of the memory stores API: a store's own fields, and its memories as memory files.

A memory's every write is one memory file op (`record_create`, `record_update`,
`record_forget`), so it has its revision, review, feed entry, webhook and take-back like any
other. What the API adds is checked here, before the op runs: the store's folder, its
archived state, and the `content_sha256` a caller expects to find.
"""

from __future__ import annotations

import dataclasses
import json
import unicodedata
from collections.abc import Iterable, Mapping
from typing import Any

from django.db import transaction
from django.utils import timezone

from stores.engine import doorscan, policy
from stores.engine.actors import Actor
from stores.engine.audit import record_audit
from stores.engine.results import WriteResult
from stores.errors import ApplicationError, Conflict, Invalid, SensitiveData
from stores.models import AuditEntry, MemoryFile, MemoryStore, Revision, text_fingerprint
from stores.models.files import path_problem
from stores.opnames import OpName
from stores.selectors.memory_stores import (
    current_versions,
    file_at_path,
    file_in,
    memory_public_id,
    paths_in,
    version_in,
)
from stores.services import record_create, record_forget, record_update
from stores.services.erasure import redact_revision

FILE_SURFACE = "file"
MAX_NAME_LENGTH = 255
MAX_DESCRIPTION_LENGTH = 1024
MAX_METADATA_PAIRS = 16
MAX_METADATA_KEY_LENGTH = 64
MAX_METADATA_VALUE_LENGTH = 512
MAX_PATH_SEGMENTS = 20
MAX_PATH_BYTES = 1024
# Why a write was refused as a conflict, for a door that names the two apart.
PATH_CONFLICT = "path"
PRECONDITION_FAILED = "content_sha256"
ARCHIVED = "archived"
REDACTION_REASON = "Redacted through the memory stores API."
# A store's own fields, as its audit entries name them.
STORE_FIELDS = ("name", "description", "metadata")


def _audited(
    store: MemoryStore, actor: Actor, action: str, fields: Iterable[str] = (), **details: Any
) -> None:
    """A store's own change in the audit log, in the write's transaction: which store, what
    was done, by whom and through which door, and for each field set the SHA-256 of its new
    value. Never the value: the log is kept for good, and a store's name or metadata may hold
    text an erasure must be able to remove."""
    record_audit(
        AuditEntry.Kind.MEMORY_STORE,
        actor=actor,
        agent=store.agent,
        details={
            "store": store.public_id,
            "action": action,
            "channel": actor.channel,
            # A list keeps the fields' order (a JSON object's keys do not keep it everywhere).
            "fields": list(fields),
            "sha256": {
                name: text_fingerprint(json.dumps(getattr(store, name), sort_keys=True))
                for name in fields
            },
            **details,
        },
    )


def _refused(result: WriteResult) -> WriteResult:
    """`result` if the write was made; its refusal raised, status word and details kept."""
    if result.ok:
        return result
    refusal = ApplicationError(result.message, **result.details)
    refusal.status = result.status
    raise refusal


def _name(value: Any) -> str:
    if not isinstance(value, str) or not 1 <= len(value) <= MAX_NAME_LENGTH:
        raise Invalid(f"name must be a string of 1 to {MAX_NAME_LENGTH} characters.")
    if any(unicodedata.category(char) == "Cc" for char in value):
        raise Invalid("name may not contain a control character.")
    return value


def _description(value: Any) -> str:
    if not isinstance(value, str) or len(value) > MAX_DESCRIPTION_LENGTH:
        raise Invalid(
            f"description must be a string of at most {MAX_DESCRIPTION_LENGTH} characters."
        )
    return value


def _metadata(current: Mapping[str, str], changes: Any, *, merge: bool) -> dict[str, str]:
    """`changes` applied to `current`: a string sets a key, null (when merging) removes it."""
    if not isinstance(changes, Mapping):
        raise Invalid("metadata must be an object of string keys and values.")
    result = dict(current) if merge else {}
    for key, value in changes.items():
        if not isinstance(key, str) or not 1 <= len(key) <= MAX_METADATA_KEY_LENGTH:
            raise Invalid(f"metadata keys are 1 to {MAX_METADATA_KEY_LENGTH} characters long.")
        if value is None and merge:
            result.pop(key, None)
        elif isinstance(value, str) and len(value) <= MAX_METADATA_VALUE_LENGTH:
            result[key] = value
        else:
            raise Invalid(
                f"metadata.{key} must be a string of at most {MAX_METADATA_VALUE_LENGTH} "
                "characters."
            )
    if len(result) > MAX_METADATA_PAIRS:
        raise Invalid(f"metadata holds at most {MAX_METADATA_PAIRS} pairs.")
    return result


def _texts(fields: Mapping[str, Any]) -> dict[str, str]:
    """A store's fields as the scan reads them: each metadata value a text of its own."""
    texts = {name: value for name, value in fields.items() if name != "metadata"}
    metadata = fields.get("metadata") or {}
    return texts | {f"metadata.{key}": value for key, value in metadata.items()}


def _screened(
    agent: Any, actor: Actor, fields: dict[str, Any], before: MemoryStore | None = None
) -> dict[str, Any]:
    """The store's fields as the door's scan lets them through (masked where the agent's
    policy masks; what `before` held already is not read again). A store's fields have no
    revision to wait in review with, so what the policy would hold is refused, as a refusal
    is: nothing written."""
    texts = _texts(fields)
    metadata = fields.get("metadata") or {}
    # The store keeps no source: only its own fields are read.
    screened = doorscan.screen(
        agent=agent,
        actor=dataclasses.replace(actor, source=None),
        text_fields=list(texts),
        values=texts,
        before=None
        if before is None
        else _texts({name: getattr(before, name) for name in STORE_FIELDS}),
    )
    if screened.held:
        raise SensitiveData(
            "Refused: a memory store's name, description and metadata cannot wait for a "
            "person's review, and this agent holds what they hold for one ("
            + ", ".join(found["kind"] for found in screened.details["scan"]["found"])
            + "). Nothing was written. Leave it out of the store's fields.",
            **screened.details["scan"],
        )
    values = screened.values
    # Checked again: a mask may make a text longer than its limit.
    result: dict[str, Any] = {}
    if "name" in fields:
        result["name"] = _name(values["name"])
    if "description" in fields:
        result["description"] = _description(values["description"])
    if "metadata" in fields:
        masked = {key: values[f"metadata.{key}"] for key in metadata}
        result["metadata"] = _metadata({}, masked, merge=False)
    return result


def store_create(
    *, agent: Any, actor: Actor, name: Any, description: Any = "", metadata: Any = None
) -> MemoryStore:
    policy.check_agent(agent, actor=actor, op=OpName.CREATE)
    fields = _screened(
        agent,
        actor,
        {
            "name": _name(name),
            "description": _description(description),
            "metadata": _metadata({}, metadata or {}, merge=False),
        },
    )
    now = timezone.now()
    with transaction.atomic():
        store = MemoryStore.objects.create(agent=agent, created_at=now, updated_at=now, **fields)
        _audited(store, actor, "created", STORE_FIELDS)
    return store


def _locked(store: MemoryStore, actor: Actor, op: OpName, *, writable: bool) -> MemoryStore:
    """The store's row, locked for the rest of the transaction (an archive cannot slip in
    between the check and the write), after the caller's right to write was checked."""
    policy.check_agent(store.agent, actor=actor, op=op)
    locked = MemoryStore.objects.select_for_update().get(pk=store.pk)
    if writable and locked.archived_at is not None:
        raise Conflict(
            f"Memory store {locked.public_id} is archived: its memories and fields are "
            "read-only (they may still be read, deleted and redacted).",
            reason=ARCHIVED,
        )
    return locked


def store_update(*, store: MemoryStore, actor: Actor, changes: Mapping[str, Any]) -> MemoryStore:
    """Set the fields `changes` names (a null one is left as it is)."""
    with transaction.atomic():
        locked = _locked(store, actor, OpName.UPDATE, writable=True)
        before = {name: getattr(locked, name) for name in STORE_FIELDS}
        given: dict[str, Any] = {}
        if changes.get("name") is not None:
            given["name"] = _name(changes["name"])
        if changes.get("description") is not None:
            given["description"] = _description(changes["description"])
        if changes.get("metadata") is not None:
            given["metadata"] = _metadata(locked.metadata, changes["metadata"], merge=True)
        for name, value in _screened(locked.agent, actor, given, before=locked).items():
            setattr(locked, name, value)
        locked.updated_at = timezone.now()
        locked.save(update_fields=[*STORE_FIELDS, "updated_at"])
        changed = [name for name in STORE_FIELDS if getattr(locked, name) != before[name]]
        if changed:
            _audited(locked, actor, "updated", changed)
    return locked


def store_archive(*, store: MemoryStore, actor: Actor) -> MemoryStore:
    """Archive the store; a store archived already keeps the moment it was first archived."""
    with transaction.atomic():
        locked = _locked(store, actor, OpName.UPDATE, writable=False)
        if locked.archived_at is None:
            locked.archived_at = locked.updated_at = timezone.now()
            locked.save(update_fields=["archived_at", "updated_at"])
            _audited(locked, actor, "archived")
    return locked


def store_delete(*, store: MemoryStore, actor: Actor) -> None:
    """Forget every memory of the store, each as a write of its own, then the store: all or
    nothing. Their revisions stay in memoryadmin's history, as a forgotten file's do."""
    with transaction.atomic():
        locked = _locked(store, actor, OpName.FORGET, writable=False)
        files = paths_in(locked, locked.folder + "/")
        for _path, file_id in files:
            _refused(
                record_forget(
                    surface_key=FILE_SURFACE, agent=locked.agent, ref=file_id, actor=actor
                )
            )
        _audited(locked, actor, "deleted", memories_forgotten=len(files))
        locked.delete()


def file_path(store: MemoryStore, path: Any) -> str:
    """The memory file path of `path` in `store` (`/notes/a.md` → its folder + `/notes/a.md`),
    or a refusal in the API's words."""
    if not isinstance(path, str) or not path.startswith("/"):
        raise Invalid("path must be a string starting with /, such as /notes/todo.md.")
    if len(path.encode("utf-8", "surrogatepass")) > MAX_PATH_BYTES:
        raise Invalid(f"path is longer than {MAX_PATH_BYTES} bytes in UTF-8.")
    if len(path[1:].split("/")) > MAX_PATH_SEGMENTS:
        raise Invalid(f"path has more than {MAX_PATH_SEGMENTS} segments.")
    if unicodedata.normalize("NFC", path) != path:
        raise Invalid("path must be in Unicode Normalization Form C.")
    if any(unicodedata.category(char) == "Cf" or char in "\u2028\u2029" for char in path):
        raise Invalid("path may not contain a format character or a line or paragraph separator.")
    full = store.folder + path
    problem = path_problem(full)
    if problem is not None:
        raise Invalid(problem.replace(store.folder, ""))
    return full


def _as_path_conflict(store: MemoryStore, result: WriteResult, full: str) -> WriteResult:
    """A write the engine refused because `full` is taken, or is above or below another
    memory's path, as the API's path conflict naming that memory when it is the path itself."""
    if result.status != Conflict.status:
        return result
    taken = file_at_path(store, full)
    raise Conflict(
        result.message.replace(store.folder, ""),
        reason=PATH_CONFLICT,
        conflicting_path=full[len(store.folder) :],
        conflicting_memory_id=memory_public_id(taken.pk) if taken is not None else "",
    )


def memory_create(*, store: MemoryStore, actor: Actor, path: Any, content: Any) -> WriteResult:
    full = file_path(store, path)
    if content is None:
        content = ""
    with transaction.atomic():
        locked = _locked(store, actor, OpName.CREATE, writable=True)
        result = record_create(
            surface_key=FILE_SURFACE,
            agent=locked.agent,
            actor=actor,
            values={"path": full, "content": content},
        )
        return _refused(_as_path_conflict(locked, result, full))


def _check_precondition(file: MemoryFile, expected_sha256: str | None) -> None:
    if expected_sha256 is not None and text_fingerprint(file.content) != expected_sha256:
        raise Conflict(
            f"The memory's content_sha256 is not {expected_sha256}: it changed since it was "
            "read. Read it again and retry against the fresh content.",
            reason=PRECONDITION_FAILED,
        )


def memory_update(
    *,
    store: MemoryStore,
    actor: Actor,
    memory_id: str,
    content: Any = None,
    path: Any = None,
    expected_sha256: str | None = None,
) -> MemoryFile:
    """Set the memory's content, path or both, if its content still has `expected_sha256`.

    A memory that already reads as asked is answered as it is, written nothing, whatever the
    precondition says. The version read is the version written: a write between the read and
    the write is refused as a failed precondition, nothing written.
    """
    with transaction.atomic():
        locked = _locked(store, actor, OpName.UPDATE, writable=True)
        # Locked: no write slips in between the precondition's check and this write.
        file = file_in(locked, memory_id, lock=True)
        changes: dict[str, Any] = {}
        if content is not None and content != file.content:
            changes["content"] = content
        if path is not None:
            full = file_path(locked, path)
            if full != file.path:
                changes["path"] = full
        if not changes:
            return file
        _check_precondition(file, expected_sha256)
        result = record_update(
            surface_key=FILE_SURFACE,
            agent=locked.agent,
            ref=file.pk,
            actor=actor,
            changes=changes,
            # The API sends whole texts only (a basic read has none, not a preview), read
            # from the locked row just above.
            expected_sha256=text_fingerprint(file.content),
            allow_shorter=True,
            expected_version=file.version,
        )
        if "path" in changes:
            result = _as_path_conflict(locked, result, changes["path"])
        written: MemoryFile = _refused(result).record
        return written


def memory_delete(
    *, store: MemoryStore, actor: Actor, memory_id: str, expected_sha256: str | None = None
) -> None:
    with transaction.atomic():
        locked = _locked(store, actor, OpName.FORGET, writable=False)
        file = file_in(locked, memory_id, lock=True)
        _check_precondition(file, expected_sha256)
        _refused(
            record_forget(
                surface_key=FILE_SURFACE,
                agent=locked.agent,
                ref=file.pk,
                actor=actor,
                expected_version=file.version,
            )
        )


def redacted_side(revision: Revision) -> str:
    """The side of a revision its version shows: what a delete removed, or what a write left."""
    return "before" if revision.op == OpName.FORGET else "after"


def version_redact(*, store: MemoryStore, actor: Actor, version_id: str) -> Revision:
    """Remove a version's text from memoryadmin's history (the erasure's redaction: the same
    text beside it in the history goes too). The version that holds the memory's current
    content is refused, as is one whose text the memory still holds: change the memory first."""
    with transaction.atomic():
        locked = _locked(store, actor, OpName.UPDATE, writable=False)
        revision = version_in(locked, version_id)
        side = redacted_side(revision)
        current = current_versions(locked, [revision.record_id]).get(revision.record_id)
        if side == "after" and current == revision.pk:
            raise Invalid(
                f"Version {version_id} holds the memory's current content; update or delete "
                "the memory first, then redact this version."
            )
        try:
            return redact_revision(
                revision, actor=actor.label, reason=REDACTION_REASON, sides=(side,)
            )
        except Conflict as refusal:
            # The memory still holds the text: the same refusal as for its current version.
            raise Invalid(str(refusal)) from None
