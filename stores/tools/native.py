"""memoryadmin's own tools: one per op of the catalog, generated from its declaration.

A tool's JSON Schema is its op's parameters, with `surface` (when the op applies to several
surfaces) and `id` (when it names a record) in front; its handler is the op's `call`.
"""

from __future__ import annotations

from typing import Any

from stores.engine.results import WriteResult
from stores.errors import ApplicationError
from stores.ops.catalog import OPS, Op, Target
from stores.ops.params import alias_names
from stores.tools.registry import Tool, ToolContext, register
from stores.tools.schema import record_id


def _surface_property(op: Op) -> dict[str, Any]:
    *first, last = (spec.tool_hint for spec in op.specs())
    hints = f"{', '.join(first)} or {last}." if first else f"{last}."
    return {"type": "string", "enum": [spec.key for spec in op.specs()], "description": hints}


def parameters_of(op: Op) -> dict[str, Any]:
    """The tool's arguments as JSON Schema: what a model sends to run `op`."""
    properties: dict[str, Any] = {}
    required: list[str] = []
    if op.takes_surface:
        properties["surface"] = _surface_property(op)
        required.append("surface")
    if op.target is Target.RECORD:
        specs = op.specs()
        properties["id"] = record_id(specs[0].label.lower() if len(specs) == 1 else "record")
        # A read of the rules, the agent's only document, may leave it unnamed.
        if op.writes:
            required.append("id")
    for param in op.params():
        properties[param.name] = param.json_schema()
        if param.required:
            required.append(param.name)
    return {
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": False,
    }


def _handler(op: Op) -> Any:
    def handle(context: ToolContext, args: dict[str, Any]) -> dict[str, Any]:
        values = {name: value for name, value in args.items() if name not in ("surface", "id")}
        try:
            result = op.call(
                agent=context.agent,
                actor=context.actor,
                values=values,
                surface_key=args.get("surface"),
                ref=args.get("id"),
            )
        except ApplicationError as error:
            return {"status": str(error.status), "message": error.message, **error.details}
        return result.as_dict() if isinstance(result, WriteResult) else result

    return handle


for _op in OPS:
    if _op.tool is not None:
        register(
            Tool(
                _op.tool.name,
                _op.tool.description,
                parameters_of(_op),
                _handler(_op),
                family=_op.tool.family,
                writes=_op.writes,
                aliases=alias_names(_op.params()),
            )
        )
