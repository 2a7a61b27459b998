"""oh-my-pi's `memory_edit(op, id, content?, importance?, replacement_id?)`.

Answers in its result shape: `content` (one text part for the model) and `details`
with `status` in updated | deleted | invalidated | not_found | not_editable, plus
`bank` and `store` when a row was resolved. As in oh-my-pi, update and forget apply to
memories of the editable store only: on an episodic row they answer not_found with its bank
and store; fact rows answer not_editable to every op.

Its `update` with `content` is a full replacement, and oh-my-pi sends no version. Here it
takes an optional `expected_version`; without one the version read just before the write
is the precondition (so a concurrent change still answers conflict). A memory longer than a
preview is replaced only with `expected_sha256` from a full read (precondition_required
otherwise), and the truncation guard applies either way: a recall preview sent back as
content is refused with suspected_truncation. Refusals oh-my-pi has no word for (conflict,
suspected_truncation, precondition_required, no_change, disabled, privacy_restricted,
forbidden, invalid) keep memoryadmin's word.
"""

from __future__ import annotations

from typing import Any

from stores.editing import Status
from stores.engine.lookup import find_record
from stores.engine.results import WriteResult
from stores.errors import NotFound
from stores.models import Memory
from stores.opnames import OpName
from stores.services import memory_invalidate, record_forget, record_update
from stores.surfaces import MEMORY
from stores.tools.registry import ToolContext, parameters, tool
from stores.tools.schema import EXPECTED_SHA256, REFUSAL_ADVICE, record_id


@tool(
    "memory_edit",
    "Update, forget or invalidate one long-term memory by the id recall gave you (this "
    "tool never searches). op=update replaces the WHOLE text with `content` and/or sets "
    "`importance` (0..1, clamped): recall shows only a preview, so read the full memory "
    "first (read_record), merge your change into the full text, then update with its "
    "content_sha256 as expected_sha256 (required over 500 characters) — or better, "
    "use edit_memory to change just a phrase. op=forget deletes a working memory; "
    "op=invalidate marks a working or episodic memory superseded (optionally by "
    "replacement_id). Fact memories are read-only." + REFUSAL_ADVICE,
    parameters(
        ["op", "id"],
        op={"type": "string", "enum": [OpName.UPDATE, OpName.FORGET, OpName.INVALIDATE]},
        id=record_id("memory"),
        content={"type": "string", "description": "update: the complete new text."},
        importance={"type": "number", "description": "update: 0..1 (clamped)."},
        replacement_id=record_id("superseding memory"),
        expected_version={
            "type": "integer",
            "minimum": 1,
            "description": "update: the version you read (recommended with content).",
        },
        expected_sha256=EXPECTED_SHA256,
    ),
    family="oh-my-pi",
)
def memory_edit(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    op, ref = args["op"], args["id"]
    if op == OpName.UPDATE:
        result = (
            _update(context, ref, args)
            if "content" in args or "importance" in args
            else WriteResult(
                status=Status.INVALID, message="memory_edit update requires content or importance."
            )
        )
    elif op == OpName.FORGET:
        result = record_forget(
            surface_key=MEMORY.key, agent=context.agent, ref=ref, actor=context.actor
        )
    else:
        result = memory_invalidate(
            agent=context.agent,
            ref=ref,
            actor=context.actor,
            replacement_ref=args.get("replacement_id"),
        )
    return _answer(ref, result)


def _update(context: ToolContext, ref: int | str, args: dict[str, Any]) -> WriteResult:
    changes: dict[str, Any] = {}
    if "content" in args:
        changes["content"] = args["content"]
    if "importance" in args:
        changes["importance"] = args["importance"]
    expected = args.get("expected_version")
    if "content" in changes and expected is None:
        try:
            expected = find_record(
                MEMORY, agent=context.agent, ref=ref, actor=context.actor
            ).version
        except NotFound as error:
            return WriteResult(status=Status.NOT_FOUND, message=error.message)
    return record_update(
        surface_key=MEMORY.key,
        agent=context.agent,
        ref=ref,
        actor=context.actor,
        changes=changes,
        expected_version=expected,
        expected_sha256=args.get("expected_sha256"),
    )


def _answer(ref: int | str, result: WriteResult) -> dict[str, Any]:
    body = result.as_dict()
    status, store, bank = result.status, body.get("store"), body.get("bank")
    if status is Status.NOT_EDITABLE and store == Memory.Store.EPISODIC:
        status = Status.NOT_FOUND
        text = (
            f"Memory {ref} is episodic (bank {bank}): it can be invalidated, not updated "
            "or forgotten."
        )
    elif status is Status.NOT_EDITABLE:
        text = f"Memory {ref} is a read-only fact; it cannot be edited. Read it with read_record."
    elif status is Status.NOT_FOUND:
        text = f"Memory {ref} was not found."
    elif result.ok:
        text = f"Memory {result.id} {status} in bank {bank} ({store}). {result.message}".strip()
    else:
        text = result.message
    details: dict[str, Any] = {"status": str(status)}
    if store is not None:
        details["store"] = store
    if bank is not None:
        details["bank"] = bank
    for key in ("id", "version", "revision", "current_version", "clamped", "unlinked"):
        if key in body:
            details[key] = body[key]
    return {"status": str(status), "content": [{"type": "text", "text": text}], "details": details}
