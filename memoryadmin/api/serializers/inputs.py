"""Request bodies and query parameters. They parse and validate; the edit service writes."""

from __future__ import annotations

import re
from collections.abc import Mapping
from functools import cache
from typing import Any, ClassVar

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from stores.editing import MAX_BATCH_EDITS
from stores.editing.numbers import is_number, is_whole_number
from stores.models import Revision
from stores.ops.catalog import Op
from stores.ops.params import (
    PHRASE_ITEM,
    SOURCE_SCHEMA,
    Kind,
    Param,
    alias_names,
    under_declared_names,
)
from stores.selectors.filters import MEMORY_FILTERS, FilterSpec
from stores.selectors.records import MAX_OFFSET
from stores.services.erasure import MAX_REASON, SIDES
from stores.surfaces import SURFACES


class InputSerializer(serializers.Serializer):
    """A request body. Unknown fields are refused (a typo must not be silently ignored)."""

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, Mapping):
            unknown = sorted(set(data) - set(self.fields))
            if unknown:
                raise serializers.ValidationError(
                    {
                        name: [f"Unknown field; expected one of {', '.join(self.fields)}."]
                        for name in unknown
                    }
                )
        return super().to_internal_value(data)


class StrictBoolean(serializers.BooleanField):
    """true or false, as JSON has them: a body is JSON, not a form's "on" or "1"."""

    def to_internal_value(self, data: Any) -> bool:
        if not isinstance(data, bool):
            self.fail("invalid", input=data)
        return data


class StrictInteger(serializers.IntegerField):
    def to_internal_value(self, data: Any) -> int:
        if not is_whole_number(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class StrictNumber(serializers.FloatField):
    def to_internal_value(self, data: Any) -> float:
        if not is_number(data):
            self.fail("invalid")
        try:
            return super().to_internal_value(data)
        except OverflowError:
            # An integer past any float (10**400): a number no column holds.
            self.fail("invalid")


class StrictText(serializers.CharField):
    """A JSON string; a number is not text."""

    def to_internal_value(self, data: Any) -> str:
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


# The longest alias a record may have had in the store it came from.
ALIAS_LENGTH = 255
# PostgreSQL stores no NUL character, and the parser refuses one in any text.
NO_NUL = "^[^\\u0000]*$"


@extend_schema_field(
    {
        "anyOf": [
            {"type": "integer"},
            {"type": "string", "minLength": 1, "maxLength": ALIAS_LENGTH, "pattern": NO_NUL},
        ]
    }
)
class Reference(serializers.Field):
    """A record's id, or the alias it had in the store it came from."""

    default_error_messages = {"invalid": "An id (a number) or an alias (a string)."}

    def to_internal_value(self, data: Any) -> int | str:
        if isinstance(data, bool) or not isinstance(data, int | str) or data == "":
            self.fail("invalid")
        if isinstance(data, str) and len(data) > ALIAS_LENGTH:
            self.fail("invalid")
        return data


@extend_schema_field(SOURCE_SCHEMA)
class SourceInput(serializers.DictField):
    """A write's source: its parts are checked by the write itself, which names the part at
    fault; the schema states what it takes."""


def param_field(param: Param) -> serializers.Field:
    """One op parameter as a field of a request body, from its one declaration."""
    common: dict[str, Any] = {"required": param.required, "help_text": param.description}
    if param.default is not None:
        common["default"] = param.default
    if param.kind is Kind.EDITS:
        common["max_length"] = MAX_BATCH_EDITS
        return phrase_edit_input()(many=True, allow_empty=False, **common)
    if param.kind is Kind.VERSION:
        # Never required here: the If-Match header may give it instead (the schema says so).
        common["required"] = False
        return StrictInteger(min_value=1, **common)
    bounds = {
        key: value
        for key, value in (("min_value", param.minimum), ("max_value", param.maximum))
        if value is not None
    }
    if param.pattern:
        message = f"{param.name} is not in its form: {param.description}"
        common["validators"] = [RegexValidator(param.pattern, message)]
    match param.kind:
        case Kind.TEXT:
            return StrictText(
                allow_blank=not param.min_length,
                min_length=param.min_length,
                trim_whitespace=False,
                **common,
            )
        case Kind.STRING:
            return StrictText(max_length=param.max_length or 255, **common)
        case Kind.REF:
            return Reference(**common)
        case Kind.REFS:
            return serializers.ListField(
                child=Reference(),
                allow_empty=False,
                min_length=1,
                max_length=param.max_length,
                **common,
            )
        case Kind.BOOLEAN:
            return StrictBoolean(**common)
        case Kind.INTEGER:
            return StrictInteger(**bounds, **common)
        case Kind.NUMBER:
            return StrictNumber(**bounds, **common)
        case Kind.MOMENT:
            return serializers.DateTimeField(**common)
        case Kind.CHOICE:
            return serializers.ChoiceField(choices=list(param.choices), **common)
        case Kind.TAGS:
            return serializers.ListField(child=StrictText(allow_blank=True), **common)
        case Kind.OBJECT:
            return serializers.DictField(**common)
        case Kind.SOURCE:
            return SourceInput(**common)
    raise ValueError(f"No request field for parameters of kind {param.kind}.")


@cache
def phrase_edit_input() -> type[InputSerializer]:
    """One phrase edit of a batch, from the one declaration of its shape."""
    fields = {param.name: param_field(param) for param in PHRASE_ITEM}
    return type("PhraseEditInput", (InputSerializer,), fields)


class OpInput(InputSerializer):
    """The body of one op on one surface; `op` and `surface_key` say which."""

    op: ClassVar[Op]
    surface_key: ClassVar[str]

    def to_internal_value(self, data: Any) -> dict[str, Any]:
        if isinstance(data, Mapping):
            data = under_declared_names(data, alias_names(self.op.params(self.surface_key)))
        return super().to_internal_value(data)


@cache
def op_input(op: Op, surface_key: str) -> type[OpInput]:
    """The request body `op` takes on records of `surface_key`, derived from its params."""
    name = "".join(part.title() for part in (surface_key, *op.name.split("_"))) + "Input"
    fields = {param.name: param_field(param) for param in op.params(surface_key)}
    return type(
        name,
        (OpInput,),
        {
            "__module__": __name__,
            "__doc__": op.summary,
            "op": op,
            "surface_key": surface_key,
            **fields,
        },
    )


# --- query parameters -----------------------------------------------------------------------


class QueryParameters(serializers.Serializer):
    """Query parameters; unknown ones (e.g. the browsable API's ?format=) are left alone.

    An empty parameter is no filter (`?tag=` lists as if no tag were given), and the
    schema says so: no `minLength`, and an empty choice among a choice's values.
    """

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {name: value for name, value in attrs.items() if value != ""}


class QueryText(serializers.CharField):
    """Text in a query string; the schema says it holds no NUL, which no text may."""


def optional_text(**kwargs: Any) -> serializers.CharField:
    return QueryText(required=False, allow_blank=True, **kwargs)


_DIGITS = re.compile(r"-?[0-9]+")


class QueryInteger(serializers.IntegerField):
    """A whole number in a query string, in digits: `?limit=` is no number, not the default,
    and `?offset=0.0` is a decimal, which DRF's field would take as 0 though the schema
    says integer."""

    def get_value(self, dictionary: Mapping[str, Any]) -> Any:
        if dictionary.get(self.field_name) == "":
            return ""
        return super().get_value(dictionary)

    def to_internal_value(self, data: Any) -> int:
        if isinstance(data, str) and not _DIGITS.fullmatch(data):
            self.fail("invalid")
        return super().to_internal_value(data)


class PageQuery(QueryParameters):
    agent = optional_text(help_text="Humans: the agent (name or id). Tokens: their own agent.")
    limit = QueryInteger(min_value=1, max_value=200, default=20)
    offset = QueryInteger(min_value=0, max_value=MAX_OFFSET, default=0)


class RecordPageQuery(PageQuery):
    source_conversation = optional_text(
        max_length=Revision._meta.get_field("source_conversation").max_length,
        help_text="Only records this conversation (its source's id) created or changed.",
    )


def filter_field(spec: FilterSpec) -> serializers.Field:
    """One memory filter as a query parameter, from its one declaration."""
    common: dict[str, Any] = {"required": False, "help_text": spec.description}
    if spec.kind is bool:
        return serializers.BooleanField(default=spec.default, **common)
    if spec.kind is float:
        return serializers.FloatField(min_value=spec.minimum, max_value=spec.maximum, **common)
    if spec.choices:
        return serializers.ChoiceField(choices=spec.choices, allow_blank=True, **common)
    return QueryText(allow_blank=True, max_length=spec.max_length, **common)


# The recall parameters: paging, then every memory filter under its query-string name.
RecallQuery = type(PageQuery)(
    "RecallQuery",
    (PageQuery,),
    {"__module__": __name__, **{spec.param: filter_field(spec) for spec in MEMORY_FILTERS}},
)


class RedactInput(InputSerializer):
    reason = StrictText(max_length=MAX_REASON, help_text="Why the text is removed; kept.")
    sides = serializers.ListField(
        child=serializers.ChoiceField(choices=SIDES),
        required=False,
        min_length=1,
        default=list(SIDES),
        help_text="Which texts of the revision to redact; both unless told.",
    )


class RevisionQuery(PageQuery):
    surface = serializers.ChoiceField(choices=list(SURFACES), required=False, allow_blank=True)
    record_id = QueryInteger(required=False, min_value=1, max_value=2**63 - 1)


@cache
def op_query(op: Op, surface_key: str) -> type[QueryParameters]:
    """The query string a read op takes on records of `surface_key`, from its params."""
    fields: dict[str, serializers.Field] = {"agent": optional_text()}
    for param in op.params(surface_key):
        common: dict[str, Any] = {"required": False, "help_text": param.description}
        if param.kind is Kind.INTEGER:
            fields[param.name] = QueryInteger(
                min_value=param.minimum, max_value=param.maximum, **common
            )
        elif param.kind is Kind.CHOICE:
            fields[param.name] = serializers.ChoiceField(
                choices=list(param.choices), allow_blank=True, **common
            )
        else:
            raise ValueError(f"No query parameter for {param.name} ({param.kind}).")
    name = "".join(part.title() for part in (surface_key, op.name)) + "Query"
    return type(name, (QueryParameters,), {"__module__": __name__, **fields})


class AgentQuery(QueryParameters):
    agent = optional_text()
    expected_version = QueryInteger(required=False, min_value=1)
