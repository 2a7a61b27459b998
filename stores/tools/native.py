"""memoryadmin's own tools: recall, full read and every op of the edit service."""

from __future__ import annotations

from typing import Any

from stores.editing import PhraseEdit, Status
from stores.errors import NotFound
from stores.selectors.filters import MemoryFilters
from stores.selectors.records import MAX_OFFSET, only_record_id, record_data
from stores.selectors.search import recall
from stores.services import (
    find_record,
    memory_invalidate,
    memory_reinforce,
    memory_set_importance,
    record_edit,
    record_forget,
    record_replace,
    record_revert,
    rules_replace,
    skill_append,
    skill_delete_section,
    skill_replace_section,
    surface,
    working_set_ttl,
)
from stores.tools.registry import ToolContext, parameters, tool
from stores.tools.schema import (
    EXPECTED_VERSION,
    MEMORY_FILTER_PROPERTIES,
    NEW_STRING,
    OLD_STRING,
    REFUSAL_ADVICE,
    REPLACE_ALL,
    SURFACE,
    record_id,
)


def _ref(context: ToolContext, surface_key: str, args: dict[str, Any]) -> int | str:
    """The record named by args["id"]; for rules, the agent's one document when omitted."""
    if "id" in args:
        return args["id"]
    spec = surface(surface_key)
    if spec.one_per_agent:
        document_id = only_record_id(spec, context.agent)
        if document_id is not None:
            return document_id
        raise NotFound("This agent has no rules document yet; add_rule starts one.")
    raise NotFound(f"Give the id of the {surface_key} record.")


@tool(
    "recall_memories",
    "Search the agent's long-term memories by words and filters. Returns the best matches "
    "with id, version, store, bank, score and a PREVIEW of at most 500 characters "
    "(truncated: true when cut) — never the full text. To change a memory, prefer "
    "edit_record with a phrase from its full text; before any full replacement, read the "
    "whole record with read_record. Never paste a preview back as the new text.",
    parameters(
        **MEMORY_FILTER_PROPERTIES,
        limit={"type": "integer", "minimum": 1, "maximum": 50, "default": 10},
        offset={"type": "integer", "minimum": 0, "maximum": MAX_OFFSET, "default": 0},
    ),
    writes=False,
)
def recall_memories(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    page = recall(
        agent=context.agent,
        filters=MemoryFilters.from_values(args),
        limit=args.get("limit", 10),
        offset=args.get("offset", 0),
    )
    return {
        "status": str(Status.OK),
        "count": page.total,
        "results": [hit.as_dict() for hit in page.hits],
    }


@tool(
    "read_record",
    "Read one record in full: its whole text, every field and its current version. Do "
    "this before replacing a text, and again after any refusal, before trying anything else.",
    parameters(["surface"], surface=SURFACE, id=record_id()),
    writes=False,
)
def read_record(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    key = args["surface"]
    try:
        record = find_record(
            surface(key), agent=context.agent, ref=_ref(context, key, args), actor=context.actor
        )
    except NotFound as error:
        return {"status": str(Status.NOT_FOUND), "message": error.message}
    return {"status": str(Status.OK), "record": record_data(record)}


EDIT_ITEM = parameters(
    ["old_string", "new_string"],
    old_string=OLD_STRING,
    new_string=NEW_STRING,
    replace_all=REPLACE_ALL,
)


@tool(
    "edit_record",
    "Change part of a record's text by replacing an exact phrase: the preferred way to "
    "correct a memory, a working-memory value, a skill, a task directive or the rules. "
    "Copy old_string from a full read; the rest of the text stays byte for byte. Several "
    "edits in `edits` apply all or nothing." + REFUSAL_ADVICE,
    parameters(
        ["surface", "id"],
        surface=SURFACE,
        id=record_id(),
        old_string=OLD_STRING,
        new_string=NEW_STRING,
        replace_all=REPLACE_ALL,
        edits={"type": "array", "items": EDIT_ITEM, "minItems": 1},
        field={"type": "string", "description": "Skills only: 'content' or 'summary'."},
        expected_version=EXPECTED_VERSION,
    ),
)
def edit_record(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    edits = None
    if "edits" in args:
        edits = [
            PhraseEdit(e["old_string"], e["new_string"], e.get("replace_all", False))
            for e in args["edits"]
        ]
    return record_edit(
        surface_key=args["surface"],
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        old_string=args.get("old_string"),
        new_string=args.get("new_string"),
        replace_all=args.get("replace_all", False),
        edits=edits,
        field=args.get("field"),
        expected_version=args.get("expected_version"),
    ).as_dict()


@tool(
    "replace_record",
    "Replace a record's whole text. Use only when most of the text changes; otherwise use "
    "edit_record. First read_record, merge your change into the FULL text you read, and "
    "send it with the version you read. A recall preview is not the full text: a "
    "shorter replacement that looks cut from a preview is refused (suspected_truncation) "
    "unless allow_shorter is true." + REFUSAL_ADVICE,
    parameters(
        ["surface", "id", "text", "expected_version"],
        surface=SURFACE,
        id=record_id(),
        text={"type": "string", "description": "The complete new text."},
        field={"type": "string", "description": "Skills only: 'content' or 'summary'."},
        expected_version=EXPECTED_VERSION,
        allow_shorter={
            "type": "boolean",
            "default": False,
            "description": "true only when you mean to shorten the text on purpose, keeping "
            "its beginning and dropping the rest; never to get past a refusal of a text "
            "made from a preview.",
        },
    ),
)
def replace_record(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return record_replace(
        surface_key=args["surface"],
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        text=args["text"],
        field=args.get("field"),
        expected_version=args["expected_version"],
        allow_shorter=args.get("allow_shorter", False),
    ).as_dict()


@tool(
    "set_memory_importance",
    "Set how important a long-term memory is, from 0 to 1 (values outside are clamped and "
    "the answer says so).",
    parameters(
        ["id", "importance"],
        id=record_id("memory"),
        importance={"type": "number"},
        expected_version=EXPECTED_VERSION,
    ),
)
def set_memory_importance(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return memory_set_importance(
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        importance=args["importance"],
        expected_version=args.get("expected_version"),
    ).as_dict()


@tool(
    "reinforce_memory",
    "Record that a long-term memory was observed again (moves last_seen_at and the "
    "reinforcement count). Not for corrections: an edit is not a new observation.",
    parameters(["id"], id=record_id("memory")),
)
def reinforce_memory(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return memory_reinforce(agent=context.agent, ref=args["id"], actor=context.actor).as_dict()


@tool(
    "invalidate_memory",
    "Mark a long-term memory as no longer true (superseded) while keeping it as history; "
    "optionally name the memory that replaces it. Prefer this to forgetting when the old "
    "memory still tells something about the past.",
    parameters(
        ["id"],
        id=record_id("memory"),
        replacement_id=record_id("replacing memory"),
        expected_version=EXPECTED_VERSION,
    ),
)
def invalidate_memory(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return memory_invalidate(
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        replacement_ref=args.get("replacement_id"),
        expected_version=args.get("expected_version"),
    ).as_dict()


@tool(
    "forget_record",
    "Delete a record for good (its last text stays in the history and can be restored "
    "with revert_record). Only when it is wrong and worthless as history.",
    parameters(
        ["surface", "id"], surface=SURFACE, id=record_id(), expected_version=EXPECTED_VERSION
    ),
)
def forget_record(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return record_forget(
        surface_key=args["surface"],
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        expected_version=args.get("expected_version"),
    ).as_dict()


@tool(
    "revert_record",
    "Bring a record back to how it stood after (or before) one of its revisions, as a new "
    "revision. Also restores a forgotten record under its own id.",
    parameters(
        ["surface", "id", "revision_id"],
        surface=SURFACE,
        id=record_id(),
        revision_id={"type": "integer", "minimum": 1},
        to={"type": "string", "enum": ["after", "before"], "default": "after"},
        expected_version=EXPECTED_VERSION,
    ),
)
def revert_record(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return record_revert(
        surface_key=args["surface"],
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        revision_id=args["revision_id"],
        to=args.get("to", "after"),
        expected_version=args.get("expected_version"),
    ).as_dict()


HEADING = {"type": "string", "description": "The section's heading text, e.g. 'Steps'."}


@tool(
    "skill_append",
    "Add text at the end of a skill's markdown body, or at the end of one section.",
    parameters(
        ["id", "content"],
        id=record_id("skill"),
        content={"type": "string"},
        heading=HEADING,
        expected_version=EXPECTED_VERSION,
    ),
)
def skill_append_tool(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return skill_append(
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        content=args["content"],
        heading=args.get("heading"),
        expected_version=args.get("expected_version"),
    ).as_dict()


@tool(
    "skill_replace_section",
    "Replace the body of one section (under its heading) of a skill; the rest stays as is.",
    parameters(
        ["id", "heading", "content"],
        id=record_id("skill"),
        heading=HEADING,
        content={"type": "string"},
        expected_version=EXPECTED_VERSION,
    ),
)
def skill_replace_section_tool(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return skill_replace_section(
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        heading=args["heading"],
        content=args["content"],
        expected_version=args.get("expected_version"),
    ).as_dict()


@tool(
    "skill_delete_section",
    "Delete one section (its heading and body) of a skill.",
    parameters(
        ["id", "heading"],
        id=record_id("skill"),
        heading=HEADING,
        expected_version=EXPECTED_VERSION,
    ),
)
def skill_delete_section_tool(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return skill_delete_section(
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        heading=args["heading"],
        expected_version=args.get("expected_version"),
    ).as_dict()


@tool(
    "set_working_memory_ttl",
    "Change when a working-memory entry expires: ttl seconds from now, an exact "
    "expires_at, or clear=true for never. Editing a value never extends its life; only "
    "this does.",
    parameters(
        ["id"],
        id=record_id("working-memory entry"),
        ttl={"type": "integer", "minimum": 1},
        expires_at={"type": "string", "format": "date-time"},
        clear={"type": "boolean"},
        expected_version=EXPECTED_VERSION,
    ),
)
def set_working_memory_ttl(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return working_set_ttl(
        agent=context.agent,
        ref=args["id"],
        actor=context.actor,
        ttl=args.get("ttl"),
        expires_at=args.get("expires_at"),
        clear=args.get("clear", False),
        expected_version=args.get("expected_version"),
    ).as_dict()


@tool(
    "replace_rule",
    "Rewrite one behavioural rule in place (its bullet and position stay); every other "
    "line of the rules document stays byte for byte.",
    parameters(
        ["rule", "new_rule"],
        rule={"type": "string", "description": "The rule's current text, as written."},
        new_rule={"type": "string"},
        expected_version=EXPECTED_VERSION,
    ),
)
def replace_rule(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return rules_replace(
        agent=context.agent,
        actor=context.actor,
        rule=args["rule"],
        new_rule=args["new_rule"],
        expected_version=args.get("expected_version"),
    ).as_dict()
