"""Tools for language models: name, description, JSON Schema parameters and a handler.

Defined once here, independent of any web framework: the REST door lists and runs them
(`/api/v1/tools/`), and any other door (an MCP server) can be generated from the same
registry. Every handler calls the edit service or a selector and returns a JSON-ready
dict with a `status`.
"""

from __future__ import annotations

import datetime as dt
import difflib
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from jsonschema import Draft202012Validator, FormatChecker, ValidationError, validators

from stores.editing.numbers import is_number, is_whole_number
from stores.engine.actors import Actor
from stores.engine.sources import parse_source
from stores.engine.validation import unstorable_string
from stores.errors import Invalid
from stores.models import Agent
from stores.ops.fields import SOURCE
from stores.ops.params import under_declared_names


@dataclass(frozen=True)
class ToolContext:
    """Whose memory a tool call touches and who makes it."""

    agent: Agent
    actor: Actor


class ToolArgumentError(Exception):
    """The arguments do not fit the tool: nothing ran, nothing was written."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


Handler = Callable[[ToolContext, dict[str, Any]], dict[str, Any]]


@dataclass(frozen=True)
class Tool:
    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    # native, or the reference project whose tool shape it reproduces
    family: str = "native"
    writes: bool = True
    # Other names an argument is accepted under, with the name the schema states.
    aliases: Mapping[str, str] = field(default_factory=dict)

    def definition(self) -> dict[str, Any]:
        """The tool as a function-calling definition (the shape OpenAI-style APIs take)."""
        return {
            "type": "function",
            "function": {
                "name": self.name,
                "description": self.description,
                "parameters": self.parameters,
            },
            "family": self.family,
            "writes": self.writes,
        }


REGISTRY: dict[str, Tool] = {}

# The formats a tool's arguments are held to (jsonschema checks none unless told).
FORMATS = FormatChecker(formats=())


@FORMATS.checks("date-time", raises=ValueError)
def _is_moment(value: object) -> bool:
    if not isinstance(value, str):
        return True
    moment = dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    return moment.tzinfo is not None


def _strict_integer(_checker: Any, instance: object) -> bool:
    return is_whole_number(instance)


def _finite_number(_checker: Any, instance: object) -> bool:
    if not is_number(instance):
        return False
    # Python's JSON reads NaN and Infinity, which are no JSON numbers.
    return isinstance(instance, int) or math.isfinite(instance)


# JSON Schema counts 1.0 and 1e300 as integers; no handler takes a float for a count or a
# line number (a float line number was a 500), so an integer here is an integer in Python;
# and a number is a finite one, as JSON has them.
StrictValidator = validators.extend(
    Draft202012Validator,
    type_checker=Draft202012Validator.TYPE_CHECKER.redefine_many(
        {"integer": _strict_integer, "number": _finite_number}
    ),
)


def register(tool: Tool) -> Tool:
    if tool.name in REGISTRY:
        raise ValueError(f"Tool {tool.name!r} is registered twice.")
    if tool.writes and "source" not in tool.parameters.get("properties", {}):
        # Every write takes where it came from, the reference tools' too.
        properties = {**tool.parameters["properties"], SOURCE.name: SOURCE.json_schema()}
        tool = replace(tool, parameters={**tool.parameters, "properties": properties})
    Draft202012Validator.check_schema(tool.parameters)
    REGISTRY[tool.name] = tool
    return tool


def tool(
    name: str,
    description: str,
    parameters: dict[str, Any],
    *,
    family: str = "native",
    writes: bool = True,
) -> Callable[[Handler], Handler]:
    """Register the decorated function as the handler of a tool."""

    def decorate(handler: Handler) -> Handler:
        register(Tool(name, description, parameters, handler, family=family, writes=writes))
        return handler

    return decorate


def parameters(required: list[str] | None = None, **properties: dict[str, Any]) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": required or [],
        "additionalProperties": False,
    }


def all_tools() -> list[Tool]:
    return list(REGISTRY.values())


def get_tool(name: str) -> Tool | None:
    return REGISTRY.get(name)


def call_tool(name: str, arguments: Any, context: ToolContext) -> dict[str, Any]:
    """Check `arguments` against the tool's schema, then run it. KeyError: no such tool."""
    tool_ = REGISTRY[name]
    if not isinstance(arguments, dict):
        raise ToolArgumentError("The arguments must be a JSON object.")
    arguments = under_declared_names(arguments, tool_.aliases)
    if tool_.writes and arguments.get(SOURCE.name) is not None:
        # The write's source goes on its actor, who records it on every revision the tool
        # makes; checked here, before the rest, so a huge one costs nothing more. A null one
        # is left to the schema, which takes an object.
        arguments = dict(arguments)
        try:
            source = parse_source(arguments.pop(SOURCE.name))
        except Invalid as refused:
            raise ToolArgumentError(refused.message) from None
        context = replace(context, actor=context.actor.with_source(source))
    unstorable = unstorable_string(arguments)
    if unstorable is not None:
        raise ToolArgumentError("{}: {}.".format(*unstorable))
    errors = sorted(
        StrictValidator(tool_.parameters, format_checker=FORMATS).iter_errors(arguments),
        # A misnamed field first: it explains the required one that then seems missing.
        key=lambda e: (list(e.path), e.validator != "additionalProperties"),
    )
    if errors:
        error = errors[0]
        where = ".".join(str(part) for part in error.absolute_path)
        raise ToolArgumentError(f"{where + ': ' if where else ''}{_describe(error)}")
    return tool_.handler(context, arguments)


def _describe(error: ValidationError) -> str:
    # jsonschema's own words for a too-long string quote all of it and omit the limit.
    if error.validator == "maxLength" and isinstance(error.instance, str):
        return f"{len(error.instance)} characters long; the limit is {error.validator_value}."
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        return _unknown_fields(error.instance, list(error.schema.get("properties", {})))
    return error.message


def _unknown_fields(arguments: dict[str, Any], accepted: list[str]) -> str:
    """As REST refuses a typo: name it, the fields accepted, and the closest one."""
    unknown = [name for name in arguments if name not in accepted]
    words = [f"Unknown field{'s' if len(unknown) > 1 else ''} {', '.join(map(repr, unknown))}"]
    words.append(f"expected one of {', '.join(accepted)}")
    guesses = [difflib.get_close_matches(name, accepted, n=1) for name in unknown]
    if any(guesses):
        named = ", ".join(repr(guess[0]) for guess in guesses if guess)
        words.append(f"did you mean {named}?")
    return "; ".join(words) + ("" if any(guesses) else ".")
