"""Request bodies and query parameters. They parse and validate; the edit service writes."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from rest_framework import serializers

from stores.models import Memory
from stores.selectors.filters import MEMORY_FILTERS, FilterSpec
from stores.selectors.records import MAX_OFFSET
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


def text(**kwargs: Any) -> serializers.CharField:
    """Text as sent: whitespace is content, an empty string is a value."""
    return serializers.CharField(allow_blank=True, trim_whitespace=False, **kwargs)


def expected_version() -> serializers.IntegerField:
    return serializers.IntegerField(
        min_value=1,
        required=False,
        allow_null=True,
        help_text="The version you read. A different current version is refused as a "
        "conflict (409). The If-Match header does the same and answers 412.",
    )


def allow_shorter() -> serializers.BooleanField:
    return serializers.BooleanField(
        default=False,
        help_text="Set only when you mean to replace the text with a shorter one that keeps "
        "its beginning. Without it such a text is refused as suspected_truncation (422), "
        "because it is what an edited recall preview looks like: read the full text first.",
    )


def reference(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(max_length=255, **kwargs)


class PhraseEditInput(InputSerializer):
    old_string = text(help_text="The exact text to replace, quoted from a full read.")
    new_string = text()
    replace_all = serializers.BooleanField(default=False)


class EditInput(InputSerializer):
    old_string = text(required=False)
    new_string = text(required=False)
    replace_all = serializers.BooleanField(
        default=False, help_text="Replace every occurrence instead of refusing as ambiguous."
    )
    edits = PhraseEditInput(
        many=True,
        required=False,
        help_text="Several phrase edits applied in order, all or nothing (instead of "
        "old_string/new_string).",
    )
    field = serializers.CharField(
        required=False, help_text="The text field to edit (skills: content or summary)."
    )
    expected_version = expected_version()

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        single = "old_string" in attrs or "new_string" in attrs
        if "edits" in attrs and single:
            raise serializers.ValidationError("Send either edits or old_string/new_string.")
        if "edits" not in attrs and not ("old_string" in attrs and "new_string" in attrs):
            raise serializers.ValidationError("A phrase edit needs old_string and new_string.")
        if "edits" in attrs and not attrs["edits"]:
            raise serializers.ValidationError({"edits": ["Give at least one edit."]})
        return attrs


class ReplaceInput(InputSerializer):
    text = text(help_text="The complete new text, merged from a full read (never a preview).")
    field = serializers.CharField(required=False)
    allow_shorter = allow_shorter()
    expected_version = expected_version()


class VersionOnlyInput(InputSerializer):
    expected_version = expected_version()


class SetImportanceInput(InputSerializer):
    importance = serializers.FloatField(help_text="0..1; values outside are clamped.")
    expected_version = expected_version()


class InvalidateInput(InputSerializer):
    replacement_id = reference(
        required=False,
        allow_null=True,
        help_text="Id or alias of the memory that supersedes this one.",
    )
    expected_version = expected_version()


class RevertInput(InputSerializer):
    revision_id = serializers.IntegerField(min_value=1)
    to = serializers.ChoiceField(
        choices=["after", "before"],
        default="after",
        help_text="'after': how the record stood after that revision; 'before': before it.",
    )
    expected_version = expected_version()


class AppendInput(InputSerializer):
    content = text()
    heading = serializers.CharField(
        required=False, allow_null=True, help_text="Append at the end of this section."
    )
    expected_version = expected_version()


class ReplaceSectionInput(InputSerializer):
    heading = serializers.CharField()
    content = text()
    expected_version = expected_version()


class DeleteSectionInput(InputSerializer):
    heading = serializers.CharField()
    expected_version = expected_version()


class SetTtlInput(InputSerializer):
    ttl = serializers.IntegerField(
        required=False, allow_null=True, min_value=1, help_text="Seconds from now."
    )
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    clear = serializers.BooleanField(default=False, help_text="Never expire.")
    expected_version = expected_version()


class AddRuleInput(InputSerializer):
    rule = text()
    section = serializers.CharField(
        required=False, allow_null=True, help_text="Add under this heading."
    )
    expected_version = expected_version()


class RemoveRuleInput(InputSerializer):
    rule = text()
    expected_version = expected_version()


class ReplaceRuleInput(InputSerializer):
    rule = text()
    new_rule = text()
    expected_version = expected_version()


# --- create and PATCH bodies, one per surface ---------------------------------------------


class MemoryFieldsInput(InputSerializer):
    content = text(required=False)
    category = serializers.CharField(required=False, max_length=100)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    importance = serializers.FloatField(required=False)
    importance_floor = serializers.FloatField(required=False)
    pinned = serializers.BooleanField(required=False)
    metadata = serializers.DictField(required=False)
    allow_shorter = allow_shorter()
    expected_version = expected_version()


class MemoryCreateInput(InputSerializer):
    content = text()
    store = serializers.ChoiceField(choices=Memory.Store.choices, required=False)
    category = serializers.CharField(required=False, max_length=100)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    importance = serializers.FloatField(required=False)
    importance_floor = serializers.FloatField(required=False)
    pinned = serializers.BooleanField(required=False)
    metadata = serializers.DictField(required=False)
    subject = serializers.CharField(
        required=False,
        allow_null=True,
        help_text="External id of the subject this memory is about; absent: shared bank.",
    )
    alias = reference(required=False, allow_null=True)


class WorkingFieldsInput(InputSerializer):
    value = text(required=False)
    category = serializers.CharField(required=False, allow_blank=True, max_length=100)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    allow_shorter = allow_shorter()
    expected_version = expected_version()


class WorkingCreateInput(InputSerializer):
    namespace = serializers.CharField(required=False, max_length=100)
    key = serializers.CharField(max_length=255)
    value = text()
    ttl = serializers.IntegerField(required=False, allow_null=True, min_value=1)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    category = serializers.CharField(required=False, allow_blank=True, max_length=100)
    tags = serializers.ListField(child=serializers.CharField(), required=False)
    alias = reference(required=False, allow_null=True)


class SkillFieldsInput(InputSerializer):
    name = serializers.CharField(required=False, max_length=200)
    summary = text(required=False)
    content = text(required=False)
    allow_shorter = allow_shorter()
    expected_version = expected_version()


class SkillCreateInput(InputSerializer):
    name = serializers.CharField(max_length=200)
    summary = text(required=False)
    content = text(required=False)
    alias = reference(required=False, allow_null=True)


class TaskFieldsInput(InputSerializer):
    name = serializers.CharField(required=False, max_length=200)
    schedule = serializers.CharField(required=False, max_length=100)
    directive = text(required=False)
    enabled = serializers.BooleanField(required=False)
    allow_shorter = allow_shorter()
    expected_version = expected_version()


class TaskCreateInput(InputSerializer):
    name = serializers.CharField(max_length=200)
    schedule = serializers.CharField(max_length=100)
    directive = text()
    enabled = serializers.BooleanField(required=False)
    alias = reference(required=False, allow_null=True)


class RulesFieldsInput(InputSerializer):
    content = text(required=False)
    allow_shorter = allow_shorter()
    expected_version = expected_version()


class RulesCreateInput(InputSerializer):
    content = text(required=False)
    alias = reference(required=False, allow_null=True)


# --- query parameters -----------------------------------------------------------------------


class QueryParameters(serializers.Serializer):
    """Query parameters; unknown ones (e.g. the browsable API's ?format=) are left alone.

    An empty parameter is no filter (`?tag=` lists as if no tag were given), and the
    schema says so: no `minLength`, and an empty choice among a choice's values.
    """

    def validate(self, attrs: dict[str, Any]) -> dict[str, Any]:
        return {name: value for name, value in attrs.items() if value != ""}


def optional_text(**kwargs: Any) -> serializers.CharField:
    return serializers.CharField(required=False, allow_blank=True, **kwargs)


class PageQuery(QueryParameters):
    agent = optional_text(help_text="Humans: the agent (name or id). Tokens: their own agent.")
    limit = serializers.IntegerField(min_value=1, max_value=200, default=20)
    offset = serializers.IntegerField(min_value=0, max_value=MAX_OFFSET, default=0)


def filter_field(spec: FilterSpec) -> serializers.Field:
    """One memory filter as a query parameter, from its one declaration."""
    common: dict[str, Any] = {"required": False, "help_text": spec.description}
    if spec.kind is bool:
        return serializers.BooleanField(default=spec.default, **common)
    if spec.kind is float:
        return serializers.FloatField(min_value=spec.minimum, max_value=spec.maximum, **common)
    if spec.choices:
        return serializers.ChoiceField(choices=spec.choices, allow_blank=True, **common)
    return serializers.CharField(allow_blank=True, max_length=spec.max_length, **common)


# The recall parameters: paging, then every memory filter under its query-string name.
RecallQuery = type(PageQuery)(
    "RecallQuery",
    (PageQuery,),
    {"__module__": __name__, **{spec.param: filter_field(spec) for spec in MEMORY_FILTERS}},
)


class RevisionQuery(PageQuery):
    surface = serializers.ChoiceField(choices=list(SURFACES), required=False, allow_blank=True)
    record_id = serializers.IntegerField(required=False, min_value=1, max_value=2**63 - 1)


class AgentQuery(QueryParameters):
    agent = optional_text()
    expected_version = serializers.IntegerField(required=False, min_value=1)
