"""The shapes of answers, declared for the OpenAPI schema (bodies are built by the selectors
and WriteResult.as_dict(); schemathesis checks that the two agree)."""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from django.db import models
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from stores.editing import Status
from stores.models import Memory
from stores.selectors.records import sha256_key
from stores.surfaces import SurfaceSpec

STATUS_WORDS = [status.value for status in Status]


class NearMissSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    text = serializers.CharField()
    similarity = serializers.FloatField()
    explanation = serializers.CharField(allow_null=True)


class OccurrenceSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    column = serializers.IntegerField()
    context = serializers.CharField(help_text="The words around the match, to quote more of.")


class RuleAtSerializer(serializers.Serializer):
    line = serializers.IntegerField()
    text = serializers.CharField()


class UnlinkedSerializer(serializers.Serializer):
    surface = serializers.CharField()
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    revision = serializers.IntegerField()


class ResultSerializer(serializers.Serializer):
    """Every answer of a write, and every refusal: a status word and what to act on."""

    status = serializers.ChoiceField(choices=STATUS_WORDS)
    message = serializers.CharField(required=False)
    code = serializers.CharField(
        required=False, help_text="For transport errors: what exactly went wrong."
    )
    surface = serializers.CharField(required=False)
    id = serializers.IntegerField(required=False)
    version = serializers.IntegerField(required=False)
    revision = serializers.IntegerField(required=False)
    diff = serializers.CharField(required=False, help_text="Unified diff of the change.")
    store = serializers.ChoiceField(choices=Memory.Store.choices, required=False)
    bank = serializers.CharField(required=False)
    current_version = serializers.IntegerField(
        required=False, allow_null=True, help_text="conflict: the version to re-read."
    )
    expected_version = serializers.IntegerField(required=False)
    near_miss = NearMissSerializer(required=False, help_text="no_match: the closest text.")
    count = serializers.IntegerField(required=False, help_text="ambiguous: how many matches.")
    lines = serializers.ListField(
        child=serializers.IntegerField(), required=False, help_text="Line numbers matched."
    )
    occurrences = OccurrenceSerializer(
        many=True,
        required=False,
        help_text="ambiguous: the first few matches, each with its line, column and context.",
    )
    existing_rule = RuleAtSerializer(
        required=False, help_text="no_change of add_rule: the rule already there."
    )
    placed = serializers.ChoiceField(
        choices=["after_last_rule", "first_in_section", "first_in_document"],
        required=False,
        help_text="add_rule: where the rule went (its line is in `lines`).",
    )
    dropped_heading = serializers.CharField(
        required=False,
        help_text="replace_section: the content's first line restated the section's heading "
        "and was dropped, so the section keeps one heading.",
    )
    replacements = serializers.IntegerField(required=False)
    clamped = serializers.BooleanField(required=False)
    importance = serializers.FloatField(required=False)
    previous_importance = serializers.FloatField(required=False)
    reinforcement_count = serializers.IntegerField(required=False)
    replacement_id = serializers.IntegerField(required=False)
    reverted_to = serializers.IntegerField(required=False)
    reverted_revision = serializers.IntegerField(
        required=False,
        help_text="revert, undo: the revision gone back to or taken back; its history entry "
        "names it too.",
    )
    unlinked = UnlinkedSerializer(
        many=True,
        required=False,
        help_text="deleted: records that pointed at the forgotten one (a memory it superseded) "
        "and lost that link, each with a revision of its own.",
    )
    side = serializers.CharField(required=False)
    expires_at = serializers.DateTimeField(required=False, allow_null=True)
    fields = serializers.JSONField(
        required=False,
        help_text="The fields a PATCH changed, or (invalid) what is wrong with each.",
    )
    limit = serializers.IntegerField(required=False)
    length = serializers.IntegerField(required=False)
    current_length = serializers.IntegerField(required=False)
    new_length = serializers.IntegerField(required=False)
    retry_after = serializers.IntegerField(required=False)
    errors = serializers.JSONField(required=False, help_text="invalid: the offending fields.")


class SubjectSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    display_name = serializers.CharField()
    external_id = serializers.CharField()
    privacy_level = serializers.CharField()


class RecordSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    alias = serializers.CharField(allow_null=True)
    version = serializers.IntegerField()
    created_at = serializers.DateTimeField()
    updated_at = serializers.DateTimeField()


class SourceSerializer(serializers.Serializer):
    conversation = serializers.CharField(required=False)
    message = serializers.CharField(required=False)
    platform = serializers.CharField(required=False)
    url = serializers.CharField(required=False)
    excerpt = serializers.CharField(required=False)
    takeback = serializers.BooleanField(
        required=False, help_text="A take-back's write, naming the conversation it took back."
    )


class SourcedFields(serializers.Serializer):
    # DRF's fields have an attribute `source` of their own (where a field reads from); the
    # metaclass takes declared fields out of the class, so this one shadows nothing.
    source = SourceSerializer(  # type: ignore[assignment]
        allow_null=True, help_text="Where the write came from (null: it named no source)."
    )


class OriginSerializer(SourcedFields):
    revision = serializers.IntegerField()
    op = serializers.CharField()
    actor = serializers.CharField()
    channel = serializers.CharField()
    at = serializers.DateTimeField()


class OriginFields(serializers.Serializer):
    created_by = OriginSerializer(allow_null=True, help_text="The write that created the record.")
    last_changed_by = OriginSerializer(allow_null=True, help_text="The latest write of it.")


class PreviewFields(serializers.Serializer):
    preview = serializers.CharField(help_text="At most 500 characters; cut ones end in '…'.")
    truncated = serializers.BooleanField()
    full_length = serializers.IntegerField()


# Read fields whose JSON shape the model field does not say.
_SHAPES: dict[str, Callable[[], serializers.Field]] = {
    "subject": lambda: SubjectSerializer(allow_null=True),
    "bank": serializers.CharField,
    "tags": lambda: serializers.ListField(child=serializers.CharField()),
    "metadata": serializers.DictField,
}


def _read_field(spec: SurfaceSpec, name: str) -> serializers.Field:
    if name in _SHAPES:
        return _SHAPES[name]()
    field = spec.model._meta.get_field(name)
    if field.choices:
        return serializers.ChoiceField(choices=field.choices, allow_null=field.null)
    if isinstance(field, models.ForeignKey):
        return serializers.IntegerField(allow_null=True)
    if isinstance(field, models.DateTimeField):
        return serializers.DateTimeField(allow_null=field.null)
    if isinstance(field, models.BooleanField):
        return serializers.BooleanField()
    if isinstance(field, models.FloatField):
        return serializers.FloatField()
    if isinstance(field, models.IntegerField):
        return serializers.IntegerField()
    return serializers.CharField(allow_blank=True)


def _schema_name(spec: SurfaceSpec) -> str:
    return "".join(part.title() for part in spec.api_path.split("-"))


@cache
def record_output(spec: SurfaceSpec) -> type[serializers.Serializer]:
    """A full record of `spec` as a read returns it: the registry's read fields, typed."""
    fields = {name: _read_field(spec, name) for name in spec.read_fields}
    for name in spec.text_fields:
        fields[sha256_key(name)] = serializers.CharField(
            help_text=f"SHA-256 (hex) of {name}: send it as expected_sha256 to replace it whole."
        )
    return type(f"{_schema_name(spec)}Record", (RecordSerializer,), fields)


@cache
def read_output(spec: SurfaceSpec) -> type[serializers.Serializer]:
    """{status: ok, record: <record>} — the answer of a full read."""
    full = type(f"{_schema_name(spec)}FullRecord", (record_output(spec), OriginFields), {})
    return read_of(full, f"{_schema_name(spec)}Read")


@cache
def page_output(spec: SurfaceSpec) -> type[serializers.Serializer]:
    """A page of the list: the records without their text, each with a preview of it."""
    item = type(
        f"{_schema_name(spec)}Summary",
        (record_output(spec), PreviewFields),
        {spec.primary_text_field: None, sha256_key(spec.primary_text_field): None},
    )
    return page_of(item, f"{_schema_name(spec)}Page")


def read_of(record: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    """{status: ok, record: <record>}, named `name` in the schema."""
    return type(
        name,
        (serializers.Serializer,),
        {
            "status": serializers.ChoiceField(choices=[Status.OK.value]),
            "record": record(),
        },
    )


def page_of(item: type[serializers.Serializer], name: str) -> type[serializers.Serializer]:
    # many=False: a list action answers one page object, not an array of them.
    page = type(
        name,
        (serializers.Serializer,),
        {
            "status": serializers.ChoiceField(choices=[Status.OK.value]),
            "count": serializers.IntegerField(),
            "next": serializers.URLField(allow_null=True),
            "previous": serializers.URLField(allow_null=True),
            "results": item(many=True),
        },
    )
    return extend_schema_serializer(many=False)(page)


class RecallResultSerializer(PreviewFields):
    id = serializers.IntegerField()
    alias = serializers.CharField(allow_null=True)
    version = serializers.IntegerField()
    store = serializers.ChoiceField(choices=Memory.Store.choices)
    bank = serializers.CharField()
    category = serializers.CharField()
    tags = serializers.ListField(child=serializers.CharField())
    importance = serializers.FloatField()
    score = serializers.FloatField(
        allow_null=True, help_text="Relevance 0..1 to q; null when listing without q."
    )
    invalidated_at = serializers.DateTimeField(allow_null=True)
    updated_at = serializers.DateTimeField()


RecallPage = page_of(RecallResultSerializer, "RecallPage")


class RevisionSerializer(SourcedFields):
    id = serializers.IntegerField()
    surface = serializers.CharField()
    record_id = serializers.IntegerField()
    version_before = serializers.IntegerField()
    version_after = serializers.IntegerField()
    op = serializers.CharField()
    field = serializers.CharField(allow_blank=True)
    actor = serializers.CharField()
    channel = serializers.CharField()
    created_at = serializers.DateTimeField()
    review = serializers.CharField(allow_blank=True)
    redacted = serializers.DictField(
        allow_null=True,
        help_text="The sides whose text was redacted (before, after, excerpt), each with who, "
        "when, why and the SHA-256 of what was removed; null when none.",
    )


class RevisionDetailSerializer(RevisionSerializer):
    before_text = serializers.CharField(allow_blank=True)
    after_text = serializers.CharField(allow_blank=True)
    before_state = serializers.DictField()
    after_state = serializers.DictField()
    diff = serializers.CharField(
        allow_blank=True, help_text='"redacted" when a side\'s text was redacted.'
    )


RevisionPage = page_of(RevisionSerializer, "RevisionPage")
RevisionRead = read_of(RevisionDetailSerializer, "RevisionRead")


class LinesRead(serializers.Serializer):
    """Some lines of a record's text, numbered: `<number right-aligned to 6>\\t<line>`."""

    status = serializers.ChoiceField(choices=[Status.OK.value])
    id = serializers.IntegerField()
    version = serializers.IntegerField()
    field = serializers.CharField()
    numbered = serializers.CharField()
    first = serializers.IntegerField()
    last = serializers.IntegerField()
    total = serializers.IntegerField()
