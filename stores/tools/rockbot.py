"""RockBot's tool shapes: a phrase edit per surface, and add/remove of one rule.

RockBot names working-memory entries by namespace and key, and skills and scheduled
tasks by name; these tools resolve those names to records and call the same service.
Their answers are the service's results (status words of memoryadmin).
"""

from __future__ import annotations

from typing import Any

from stores.editing import Status
from stores.models import ScheduledTask, Skill, WorkingMemoryEntry
from stores.selectors.records import named_record_id, working_entry_id
from stores.services import record_edit
from stores.surfaces import MEMORY, SKILL, TASK, WORKING
from stores.tools.registry import ToolContext, parameters, tool
from stores.tools.schema import NEW_STRING, OLD_STRING, REFUSAL_ADVICE, REPLACE_ALL, record_id

# The namespace a working-memory entry gets when none is given, as the model defines it.
DEFAULT_NAMESPACE: str = WorkingMemoryEntry._meta.get_field("namespace").default

PHRASE_EDIT = (
    " Copy old_string exactly from the current text; only that phrase changes, nothing "
    "else in the record, and its timestamps of first observation and reinforcement stay."
    + REFUSAL_ADVICE
)


def _edit(
    context: ToolContext, surface_key: str, ref: int | str | None, args: dict[str, Any], what: str
) -> dict[str, Any]:
    if ref is None:
        return {"status": str(Status.NOT_FOUND), "message": f"No {what}."}
    return record_edit(
        surface_key=surface_key,
        agent=context.agent,
        ref=ref,
        actor=context.actor,
        old_string=args["old_string"],
        new_string=args["new_string"],
        replace_all=args.get("replace_all", False),
    ).as_dict()


def _phrase_parameters(**identity: dict[str, Any]) -> dict[str, Any]:
    # A part of the identity with a default (the working-memory namespace) may be left out.
    required = [name for name, schema in identity.items() if "default" not in schema]
    return parameters(
        [*required, "old_string", "new_string"],
        **identity,
        old_string=OLD_STRING,
        new_string=NEW_STRING,
        replace_all=REPLACE_ALL,
    )


@tool(
    "edit_memory",
    "Correct a long-term memory by replacing an exact phrase of its content (instead of "
    "deleting and re-saving it, which would lose its history)." + PHRASE_EDIT,
    _phrase_parameters(id=record_id("memory")),
    family="rockbot",
)
def edit_memory(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    return _edit(context, MEMORY.key, args["id"], args, f"memory {args['id']}")


@tool(
    "edit_working_memory",
    "Correct a working-memory value by replacing an exact phrase. Its expiry does not "
    "move." + PHRASE_EDIT,
    _phrase_parameters(
        key={"type": "string", "description": "The entry's key."},
        namespace={
            "type": "string",
            "default": DEFAULT_NAMESPACE,
            "description": f"The entry's namespace; {DEFAULT_NAMESPACE} when left out.",
        },
    ),
    family="rockbot",
)
def edit_working_memory(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    namespace = args.get("namespace", DEFAULT_NAMESPACE)
    ref = working_entry_id(context.agent, namespace=namespace, key=args["key"])
    return _edit(context, WORKING.key, ref, args, f"working-memory entry {namespace}/{args['key']}")


@tool(
    "edit_skill",
    "Correct a skill's markdown body by replacing an exact phrase; its summary stays."
    + PHRASE_EDIT,
    _phrase_parameters(name={"type": "string", "description": "The skill's name."}),
    family="rockbot",
)
def edit_skill(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ref = named_record_id(Skill, context.agent, args["name"])
    return _edit(context, SKILL.key, ref, args, f"skill {args['name']!r}")


@tool(
    "edit_task_directive",
    "Correct a scheduled task's directive by replacing an exact phrase, instead of "
    "rewriting the whole directive." + PHRASE_EDIT,
    _phrase_parameters(name={"type": "string", "description": "The task's name."}),
    family="rockbot",
)
def edit_task_directive(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
    ref = named_record_id(ScheduledTask, context.agent, args["name"])
    return _edit(context, TASK.key, ref, args, f"scheduled task {args['name']!r}")
