"""The change feed's query parameters and answer, for the view and the OpenAPI schema."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memoryadmin.api.serializers.inputs import QueryParameters, optional_text
from memoryadmin.api.serializers.outputs import SourcedFields
from stores.editing import Status
from stores.selectors.changes import CURSOR_PATTERN, MAX_PAGE, NOW, PREVIEW_CHARS
from stores.surfaces import SURFACES

INCLUDE_DECAY = "decay"


class ChangeQuery(QueryParameters):
    agent = optional_text(help_text="Humans: the agent (name or id). Tokens: their own agent.")
    after = serializers.CharField(
        required=False,
        allow_blank=True,
        max_length=64,
        validators=[RegexValidator(CURSOR_PATTERN, "Not a cursor of this feed, nor 'now'.")],
        help_text="The `next` of your last page (or any item's `cursor`): the changes after "
        f"it. '{NOW}' starts at the end (only what is committed from now on). Leave it out "
        "to read the feed from its start. Cursors stay valid across restarts.",
    )
    limit = serializers.IntegerField(min_value=1, max_value=MAX_PAGE, default=100)
    include = serializers.ChoiceField(
        choices=[INCLUDE_DECAY],
        required=False,
        allow_blank=True,
        help_text="'decay' adds one change per importance decay pass that lowered the "
        "agent's memories (bookkeeping: no revision, no version).",
    )
    surface = serializers.ChoiceField(
        choices=list(SURFACES), required=False, allow_blank=True, help_text="Only this surface."
    )
    wait = serializers.IntegerField(
        min_value=0,
        max_value=settings.MEMORYADMIN["CHANGES"]["MAX_WAIT"],
        default=0,
        help_text="Seconds to hold the request open when nothing is there yet (long poll): "
        "it answers as soon as a change commits, or empty when the time is up.",
    )


class ChangeSerializer(SourcedFields):
    cursor = serializers.CharField(help_text="This change's place in the feed.")
    revision = serializers.IntegerField(
        allow_null=True, help_text="The revision (GET /api/v1/revisions/{id}/); null for decay."
    )
    surface = serializers.ChoiceField(choices=list(SURFACES))
    id = serializers.IntegerField(allow_null=True, help_text="The record; null for decay.")
    op = serializers.CharField(help_text="The service op: edit, replace, forget, import, …")
    status = serializers.ChoiceField(
        choices=[
            Status.CREATED.value,
            Status.UPDATED.value,
            Status.DELETED.value,
            Status.INVALIDATED.value,
            Status.REVERTED.value,
        ]
    )
    version = serializers.IntegerField(
        allow_null=True, help_text="The record's version after the change."
    )
    actor = serializers.CharField()
    channel = serializers.CharField(help_text="ui, api, shell or task.")
    at = serializers.DateTimeField(allow_null=True)
    field = serializers.CharField(allow_blank=True, help_text="The text field written.")
    hash = serializers.CharField(
        allow_null=True,
        help_text="SHA-256 (hex) of the field's new text, UTF-8; null after a delete.",
    )
    preview = serializers.CharField(
        allow_blank=True,
        help_text=f"The first {PREVIEW_CHARS} characters of the new text (of the deleted text "
        "for a delete). Read the record for the whole text.",
    )
    memories = serializers.IntegerField(
        required=False, help_text="Decay: how many memories the pass lowered."
    )


@extend_schema_serializer(many=False)
class ChangePage(serializers.Serializer):
    status = serializers.ChoiceField(choices=[Status.OK.value])
    results = ChangeSerializer(many=True)
    next = serializers.CharField(
        help_text="Send it as `after` for the following changes (also when results is empty)."
    )
