"""An op's parameters, each declared once with its type, bounds and words for a model.

The doors derive what they accept from these: the tools' JSON Schema (`json_schema`, here,
since it is plain data), the REST serializers and the web forms (in their doors). A door
never adds a parameter or a bound of its own.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, replace
from enum import StrEnum
from typing import Any

from stores.editing import MAX_BATCH_EDITS, PhraseEdit
from stores.engine.sources import SOURCE_LIMITS, SOURCE_PATTERNS

# At least one character that is not whitespace, and no NUL: a blank rule, heading, section
# or category is refused, whatever the door (a `Kind.STRING` is never blank). Whitespace is
# spelled out as Python's str.isspace() has it, which is what the services strip; ECMA's \s
# and Python's differ (U+001C-U+001F, U+0085, U+FEFF), and a schema's readers hold a pattern
# to ECMA's.
_SPACE = (
    "\\t\\n\\v\\f\\r\\u001c-\\u001f \\u0085\\u00a0\\u1680"
    "\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000"
)
NOT_BLANK = f"^[{_SPACE}]*[^{_SPACE}\\u0000][^\\u0000]*$"


class Kind(StrEnum):
    # Text as sent: whitespace is content, an empty string is a value.
    TEXT = "text"
    # A short name or label: at least one character.
    STRING = "string"
    BOOLEAN = "boolean"
    INTEGER = "integer"
    NUMBER = "number"
    MOMENT = "moment"
    CHOICE = "choice"
    # A record's id, or the alias it had in the store it came from.
    REF = "ref"
    # Several records' ids or aliases.
    REFS = "refs"
    # The version a write expects to find (optimistic lock).
    VERSION = "version"
    TAGS = "tags"
    OBJECT = "object"
    # A batch of phrase edits, applied all or nothing.
    EDITS = "edits"
    # Where a write came from (stores.engine.sources): kept on its revision.
    SOURCE = "source"


@dataclass(frozen=True)
class Param:
    name: str
    kind: Kind
    description: str
    required: bool = False
    # What an absent value means; None: absent is absent (the service decides).
    default: Any = None
    minimum: float | None = None
    maximum: float | None = None
    # The most characters of a text, or the most items of a list of refs.
    max_length: int | None = None
    # At least this many characters (a text that may not be empty: 1).
    min_length: int | None = None
    # A regular expression (ECMA and Python alike) the whole value must match.
    pattern: str | None = None
    choices: tuple[str, ...] = ()
    # The service's keyword for it, when not `name`.
    argument: str = ""
    # Its words on a form, for people.
    label: str = ""
    # A choice whose values depend on the surface (a text field's name): resolved per surface.
    choices_of: Callable[[Any], tuple[str, ...]] | None = None
    # Other names a caller may send it under (clients written before its name was settled);
    # the schemas state only `name`.
    aliases: tuple[str, ...] = ()

    @property
    def form(self) -> str | None:
        """The pattern a value must match: its own, or for a short string not a blank one
        (every door strips a string and refuses it empty)."""
        return self.pattern or (NOT_BLANK if self.kind is Kind.STRING else None)

    @property
    def keyword(self) -> str:
        return self.argument or self.name

    def for_surfaces(self, specs: Iterable[Any]) -> Param:
        """This parameter on records of `specs`: a surface-dependent choice, resolved."""
        if self.choices_of is None:
            return self
        choices: list[str] = []
        for spec in specs:
            choices += [value for value in self.choices_of(spec) if value not in choices]
        return replace(self, choices=tuple(choices), choices_of=None)

    def json_schema(self) -> dict[str, Any]:
        """The parameter as a JSON Schema property (the tools' and the MCP tools')."""
        schema: dict[str, Any] = {**_JSON_TYPES[self.kind], "description": self.description}
        if self.kind is Kind.STRING or self.min_length:
            schema["minLength"] = self.min_length or 1
        if self.form:
            schema["pattern"] = self.form
        if self.kind is Kind.CHOICE:
            schema["enum"] = list(self.choices)
        for keyword, bound in (
            ("minimum", self.minimum),
            ("maximum", self.maximum),
            ("maxItems" if self.kind is Kind.REFS else "maxLength", self.max_length),
        ):
            if bound is not None:
                schema[keyword] = bound
        if self.default is not None:
            schema["default"] = self.default
        return schema


_JSON_TYPES: dict[Kind, dict[str, Any]] = {
    Kind.TEXT: {"type": "string"},
    Kind.STRING: {"type": "string"},
    Kind.BOOLEAN: {"type": "boolean"},
    Kind.INTEGER: {"type": "integer"},
    Kind.NUMBER: {"type": "number"},
    Kind.MOMENT: {"type": "string", "format": "date-time"},
    Kind.CHOICE: {"type": "string"},
    Kind.REF: {"type": ["integer", "string"]},
    Kind.REFS: {"type": "array", "minItems": 1, "items": {"type": ["integer", "string"]}},
    Kind.VERSION: {"type": "integer", "minimum": 1},
    Kind.TAGS: {"type": "array", "items": {"type": "string"}},
    Kind.OBJECT: {"type": "object"},
}
# A write's source as every door takes it: the parts `parse_source` knows, each in its form.
SOURCE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        name: {"type": "string", "maxLength": limit, "pattern": SOURCE_PATTERNS[name]}
        for name, limit in SOURCE_LIMITS.items()
    },
    "additionalProperties": False,
}
_JSON_TYPES[Kind.SOURCE] = SOURCE_SCHEMA

# One phrase edit of a batch (`Kind.EDITS`): the one shape every door reads an item in.
PHRASE_ITEM: tuple[Param, ...] = (
    Param(
        "old_string",
        Kind.TEXT,
        "The exact text to replace, copied from a full read of the record (keep whitespace "
        "and punctuation). Quote enough to be unique.",
        required=True,
        min_length=1,
    ),
    Param("new_string", Kind.TEXT, "The text to put in its place.", required=True),
    Param(
        "replace_all",
        Kind.BOOLEAN,
        "Replace every occurrence instead of refusing when the text occurs more than once.",
        default=False,
    ),
    Param(
        "expected_replacements",
        Kind.INTEGER,
        "How many times old_string occurs. A different count is refused as ambiguous with "
        "the real count; more than 1 replaces them all.",
        minimum=1,
        maximum=10**6,
    ),
)
_JSON_TYPES[Kind.EDITS] = {
    "type": "array",
    "minItems": 1,
    "maxItems": MAX_BATCH_EDITS,
    "items": {
        "type": "object",
        "properties": {param.name: param.json_schema() for param in PHRASE_ITEM},
        "required": [param.name for param in PHRASE_ITEM if param.required],
        "additionalProperties": False,
    },
}


def phrase_edits(items: Iterable[Mapping[str, Any]]) -> list[PhraseEdit]:
    """A batch as a door parsed it (each item as `PHRASE_ITEM` names it), for the engine."""
    return [
        PhraseEdit(**{param.name: item[param.name] for param in PHRASE_ITEM if param.name in item})
        for item in items
    ]


def alias_names(params: Iterable[Param]) -> dict[str, str]:
    """Each alias of `params`, with the name it stands for."""
    return {alias: param.name for param in params for alias in param.aliases}


def under_declared_names(values: Mapping[str, Any], aliases: Mapping[str, str]) -> dict[str, Any]:
    """`values` with each alias renamed to the name it stands for; an alias sent beside its
    name stays as sent, to be refused as an unknown field."""
    return {
        aliases[name] if name in aliases and aliases[name] not in values else name: value
        for name, value in values.items()
    }


def given(param: Param, values: Mapping[str, Any]) -> bool:
    """Whether `values` gives `param`: present, not null, and for a flag, set."""
    value = values.get(param.name)
    if value is None:
        return False
    return value is True if param.kind is Kind.BOOLEAN else True


def given_schema(param: Param) -> dict[str, Any]:
    """JSON Schema for "the body gives `param`", as `given` decides it."""
    if param.kind is Kind.BOOLEAN:
        return {"required": [param.name], "properties": {param.name: {"enum": [True]}}}
    return {"required": [param.name]}
