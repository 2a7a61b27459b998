"""The suggestion tools: read the inbox, propose a merge instead of applying it, settle one.

They are the REST door's suggestion actions for a model (`GET /api/v1/suggestions/`, `POST
suggestions/`, `POST suggestions/<id>/accept/` and `dismiss/`), calling the same services.
"""

from __future__ import annotations

from typing import Any

from stores.editing import Status
from stores.models import Suggestion
from stores.ops.memory.merge import MAX_MERGED
from stores.selectors.suggestions import suggestion_rows, suggestions_of
from stores.services.suggestions import suggestion_accept, suggestion_dismiss, suggestion_propose
from stores.tools.registry import ToolContext, parameters, tool
from stores.tools.schema import EXPECTED_SHA256, record_id

# A model reads at most this many suggestions a call.
LISTED = 20
_REFS = {
    "type": "array",
    "items": record_id("memory"),
    "minItems": 2,
    "maxItems": MAX_MERGED + 1,
    "description": "The memories' ids (or aliases), as recall shows them.",
}


@tool(
    "list_suggestions",
    "List the open suggestions about this agent's memories: duplicates and conflicts found "
    "by memoryadmin, and merges proposed. Each names its memories with the version each "
    "was found at and a preview, a reason and a proposal.",
    parameters(
        kind={"type": "string", "enum": list(Suggestion.Kind.values), "description": "Only these."},
        status={
            "type": "string",
            "enum": list(Suggestion.State.values),
            "default": "open",
            "description": "open (the default), accepted, dismissed or stale.",
        },
    ),
    writes=False,
)
def list_suggestions(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    found = suggestions_of(
        context.agent, kind=args.get("kind"), status=args.get("status", Suggestion.State.OPEN)
    )
    return {
        "status": str(Status.OK),
        "count": found.count(),
        "results": suggestion_rows(list(found[:LISTED])),
    }


@tool(
    "propose_merge",
    "Propose merging memories that say the same thing, instead of editing them: the "
    "proposal waits, pinned to the versions they are at now, for a person to accept (the "
    "first memory, or keep, stays and takes content as its text). Nothing is written now.",
    parameters(
        ["records"],
        records=_REFS,
        content={
            "type": "string",
            "minLength": 1,
            "description": "The merged text; it will replace the kept memory's whole text, so "
            "read_record that memory first and send its content_sha256 as expected_sha256.",
        },
        expected_sha256=EXPECTED_SHA256,
        reason={"type": "string", "maxLength": 500, "description": "Why, in one line."},
        keep=record_id("memory that stays"),
    ),
)
def propose_merge(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    result = suggestion_propose(
        agent=context.agent, actor=context.actor, kind=Suggestion.Kind.MERGE, **args
    )
    return result.as_dict()


@tool(
    "settle_suggestion",
    "Settle an open suggestion: accept it by keeping one memory (a duplicate or a merge is "
    "merged into it; a conflict's other memory is invalidated, superseded by it; content "
    "sets the kept memory's text), or dismiss it (the memories are fine as they are). "
    "Refused as conflict when a memory changed since the suggestion was made: list again.",
    parameters(
        ["id", "decision"],
        id={"type": "integer", "minimum": 1, "description": "The suggestion's id."},
        decision={"type": "string", "enum": ["accept", "dismiss"]},
        keep=record_id("memory that stays"),
        content={
            "type": "string",
            "minLength": 1,
            "description": "The kept memory's whole new text, made from a full read of it "
            "(send its content_sha256 as expected_sha256).",
        },
        expected_sha256=EXPECTED_SHA256,
        dry_run={"type": "boolean", "description": "Say what accepting would do; write nothing."},
    ),
)
def settle_suggestion(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    if args["decision"] == "dismiss":
        result = suggestion_dismiss(
            agent=context.agent, actor=context.actor, suggestion_id=args["id"]
        )
    else:
        result = suggestion_accept(
            agent=context.agent,
            actor=context.actor,
            suggestion_id=args["id"],
            keep=args.get("keep"),
            content=args.get("content"),
            expected_sha256=args.get("expected_sha256"),
            dry_run=args.get("dry_run", False),
        )
    return result.as_dict()
