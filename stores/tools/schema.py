"""JSON Schema pieces the tool definitions share, with descriptions written for a model."""

from __future__ import annotations

from typing import Any

from stores.selectors.filters import MEMORY_FILTERS, FilterSpec
from stores.surfaces import SURFACES

SURFACE_KEYS = list(SURFACES)

REFUSAL_ADVICE = (
    " A refusal (no_match, ambiguous, conflict, suspected_truncation, ...) means the text "
    "is not what you think: read the record again and base the next call on what you read; "
    "never repeat the same call unchanged."
)


def record_id(what: str = "record") -> dict[str, Any]:
    return {
        "type": ["integer", "string"],
        "description": f"The {what}'s id as shown by recall or a list (or its alias).",
    }


def _hints() -> str:
    *first, last = (spec.tool_hint for spec in SURFACES.values())
    return f"{', '.join(first)} or {last}."


SURFACE = {
    "type": "string",
    "enum": SURFACE_KEYS,
    "description": _hints(),
}
OLD_STRING = {
    "type": "string",
    "description": "The exact text to replace, copied from a full read of the record "
    "(keep whitespace and punctuation). Quote enough to be unique.",
}
NEW_STRING = {"type": "string", "description": "The text to put in its place."}
REPLACE_ALL = {
    "type": "boolean",
    "default": False,
    "description": "Replace every occurrence instead of refusing when the text occurs "
    "more than once.",
}
EXPECTED_VERSION = {
    "type": "integer",
    "minimum": 1,
    "description": "The version you read; the write is refused (conflict) if the record "
    "changed since.",
}
_JSON_TYPES = {str: "string", float: "number", bool: "boolean"}


def filter_property(spec: FilterSpec) -> dict[str, Any]:
    """One memory filter as a tool parameter, from its one declaration."""
    prop: dict[str, Any] = {"type": _JSON_TYPES[spec.kind], "description": spec.description}
    if spec.choices:
        prop["enum"] = [value for value, _ in spec.choices]
    for keyword, bound in (
        ("maxLength", spec.max_length),
        ("minimum", spec.minimum),
        ("maximum", spec.maximum),
    ):
        if bound is not None:
            prop[keyword] = bound
    if spec.kind is bool:
        prop["default"] = spec.default
    return prop


# The recall tool's filters, named as MemoryFilters names them (its query is `query`).
MEMORY_FILTER_PROPERTIES = {spec.name: filter_property(spec) for spec in MEMORY_FILTERS}
