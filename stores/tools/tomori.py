"""Tomori's `update_long_term_memory(memory_id, memory_content, target_user?)`.

Without `target_user` it touches the agent-wide (shared) memories; with it, the
personal memories of that person, found by display name, alias or external id.
Empty content (after unknown `{placeholder}` tokens are stripped) deletes. Answers in
Tomori's shape (`status`, `success`, `message`, `data`) with its status words;
refusals Tomori has no word for read `memory_update_failed_<memoryadmin word>`
(e.g. memory_update_failed_suspected_truncation). As Tomori sends no version, the
version read just before the write is the precondition. A memory longer than a preview
is replaced only with `expected_sha256` (the content_sha256 of a full read), as through every
door; the truncation guard applies too.
"""

from __future__ import annotations

import re
from typing import Any

from django.db import DatabaseError

from stores.editing import Status
from stores.engine.lookup import find_record
from stores.errors import NotFound
from stores.models import Subject
from stores.selectors.subjects import subjects_named
from stores.services import record_forget, record_replace
from stores.surfaces import MEMORY
from stores.tools.registry import ToolContext, parameters, tool
from stores.tools.schema import EXPECTED_SHA256

# Tomori's template variables; any other {token} is a model's stray placeholder.
KNOWN_PLACEHOLDERS = frozenset({"user", "bot"})
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_.-]*)\}")

UPDATED = "memory_updated_successfully"
DELETED = "memory_deleted_successfully"
FAILED = "memory_update_failed_"
WORDS = {
    Status.UPDATED: UPDATED,
    Status.DELETED: DELETED,
    Status.NOT_FOUND: FAILED + "not_found",
    Status.DISABLED: FAILED + "disabled",
    Status.PRIVACY_RESTRICTED: FAILED + "privacy_restricted",
}


def sanitize(content: str) -> str:
    return PLACEHOLDER.sub(
        lambda match: match.group(0) if match.group(1) in KNOWN_PLACEHOLDERS else "", content
    )


@tool(
    "update_long_term_memory",
    "Replace or delete one existing memory by the number shown as ID:N in your context. "
    "memory_content is the COMPLETE new text (an empty string deletes the memory); for a "
    "small correction of a long memory read it in full first or use edit_memory; a memory "
    "over 500 characters is replaced only with expected_sha256 (content_sha256 of a full "
    "read). Give "
    "target_user (the person's name) when the memory is personal to that person; omit it "
    "for server-wide memories.",
    parameters(
        ["memory_id", "memory_content"],
        memory_id={"type": "integer", "minimum": 1, "maximum": 2**53 - 1},
        memory_content={"type": "string"},
        target_user={"type": "string", "description": "Display name of the memory's owner."},
        expected_sha256=EXPECTED_SHA256,
    ),
    family="tomori",
)
def update_long_term_memory(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    memory_id = args["memory_id"]
    content = sanitize(args["memory_content"])
    delete = not content.strip()
    target = (args.get("target_user") or "").strip()
    data: dict[str, Any] = {"memory_id": memory_id, "scope": "personal" if target else "server"}
    if context.actor.is_agent and not context.agent.self_editing_enabled:
        return _answer(FAILED + "disabled", "Self-editing is switched off for this agent.", data)

    subject: Subject | None = None
    if target:
        matches = subjects_named(context.agent, target)
        if not matches:
            return _answer(FAILED + "user_not_found", f"No user matches {target!r}.", data)
        if len(matches) > 1:
            names = ", ".join(sorted(s.display_name for s in matches))
            return _answer(
                FAILED + "ambiguous_user", f"{target!r} matches several users: {names}.", data
            )
        subject = matches[0]
        data["target_user"] = subject.display_name
        if subject.kind == Subject.Kind.SELF:
            return _answer(
                FAILED + "invalid_target", "Personal memories about yourself are not kept.", data
            )
        if subject.kind == Subject.Kind.BRIDGE:
            return _answer(
                FAILED + "invalid_scope",
                f"{subject.display_name} is a bridge user: only server-wide memories apply.",
                data,
            )

    try:
        record = find_record(MEMORY, agent=context.agent, ref=memory_id, actor=context.actor)
        if record.subject_id != (subject.pk if subject else None):
            raise NotFound("not in this scope")
    except NotFound:
        scope = f"{subject.display_name}'s memories" if subject else "server memories"
        return _answer(FAILED + "not_found", f"No memory {memory_id} in {scope}.", data)

    try:
        if delete:
            result = record_forget(
                surface_key=MEMORY.key,
                agent=context.agent,
                ref=record.pk,
                actor=context.actor,
                expected_version=record.version,
            )
            if result.ok:
                data["deleted_content"] = record.content
        else:
            result = record_replace(
                surface_key=MEMORY.key,
                agent=context.agent,
                ref=record.pk,
                actor=context.actor,
                text=content,
                expected_version=record.version,
                expected_sha256=args.get("expected_sha256"),
            )
    except DatabaseError as error:
        return _answer(FAILED + "db_error", f"The database refused the write: {error}", data)
    body = result.as_dict()
    data.update(
        {
            key: body[key]
            for key in ("version", "revision", "current_version", "unlinked")
            if key in body
        }
    )
    word = WORDS.get(result.status, FAILED + str(result.status))
    done = "deleted" if result.status is Status.DELETED else "updated"
    message = (
        f"Memory {memory_id} {done}. {result.message}".strip() if result.ok else result.message
    )
    return _answer(word, message, data)


def _answer(word: str, message: str, data: dict[str, Any]) -> dict[str, Any]:
    return {
        "status": word,
        "success": word in (UPDATED, DELETED),
        "message": message,
        "data": {"status": word, **data},
    }
