"""The change feed's query parameters and answer, for the view and the OpenAPI schema."""

from __future__ import annotations

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memoryadmin.api.serializers.inputs import QueryInteger, QueryParameters, optional_text
from memoryadmin.api.serializers.outputs import SourcedFields
from stores.editing import Status
from stores.models import Suggestion
from stores.selectors.changes import (
    CURSOR_PATTERN,
    MAX_PAGE,
    NOW,
    PREVIEW_CHARS,
    SUGGESTION,
    SUGGESTION_EVENTS,
)
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
    limit = QueryInteger(min_value=1, max_value=MAX_PAGE, default=100)
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
    wait = QueryInteger(
        min_value=0,
        max_value=settings.MEMORYADMIN["CHANGES"]["MAX_WAIT"],
        default=0,
        help_text="Seconds to hold the request open when nothing is there yet (long poll): "
        "it answers as soon as a change commits, or empty when the time is up.",
    )


class SuggestedVersionSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The memory.")
    version = serializers.IntegerField(help_text="The version the suggestion pinned it at.")


class SuggestionEventSerializer(serializers.Serializer):
    id = serializers.IntegerField(help_text="The suggestion (GET /api/v1/suggestions/{id}/).")
    event = serializers.ChoiceField(
        choices=list(SUGGESTION_EVENTS),
        help_text="created (found by the pass or proposed), accepted, dismissed, or stale "
        "(marked by the pass: a record of it moved); the webhook event is suggestion.<event>.",
    )
    kind = serializers.ChoiceField(choices=Suggestion.Kind.values)
    status = serializers.ChoiceField(
        choices=Suggestion.State.values, help_text="The status it took: open when created."
    )
    records = SuggestedVersionSerializer(many=True)
    revisions = serializers.ListField(
        child=serializers.IntegerField(),
        help_text="Accepted: the revisions that settled it (earlier in the feed).",
    )


class ChangeSerializer(SourcedFields):
    cursor = serializers.CharField(help_text="This change's place in the feed.")
    revision = serializers.IntegerField(
        allow_null=True,
        help_text="The revision (GET /api/v1/revisions/{id}/); null for decay and suggestions.",
    )
    surface = serializers.ChoiceField(choices=list(SURFACES))
    id = serializers.IntegerField(
        allow_null=True, help_text="The record; null for decay and suggestions."
    )
    op = serializers.CharField(
        help_text="The service op: edit, replace, forget, import, …; decay for a decay pass, "
        f"{SUGGESTION} for a suggestion's event."
    )
    status = serializers.ChoiceField(
        help_text="What the write answered; for a suggestion, created when it is found or "
        "proposed, updated when it is accepted, dismissed or marked stale.",
        choices=[
            Status.CREATED.value,
            Status.UPDATED.value,
            Status.DELETED.value,
            Status.INVALIDATED.value,
            Status.REVERTED.value,
        ],
    )
    version = serializers.IntegerField(
        allow_null=True, help_text="The record's version after the change."
    )
    actor = serializers.CharField()
    channel = serializers.CharField(help_text="ui, api, shell or task.")
    at = serializers.DateTimeField(allow_null=True)
    field = serializers.CharField(allow_blank=True, help_text="The text field written.")
    fingerprint = serializers.CharField(
        allow_null=True,
        help_text="SHA-256 (hex) of the SHA-256 (hex) of the field's new text, UTF-8; null "
        "after a delete. A cache holding the whole text compares it to know whether to re-read; "
        "it is not the text's SHA-256, so it never stands for a full read as expected_sha256.",
    )
    preview = serializers.CharField(
        allow_blank=True,
        help_text=f"The first {PREVIEW_CHARS} characters of the new text (of the deleted text "
        "for a delete; of its reason for a suggestion). Read the record for the whole text.",
    )
    memories = serializers.IntegerField(
        required=False, help_text="Decay: how many memories the pass lowered."
    )
    suggestion = SuggestionEventSerializer(
        required=False,
        help_text="A suggestion's event: the suggestion, what happened to it and its records.",
    )


@extend_schema_serializer(many=False)
class ChangePage(serializers.Serializer):
    status = serializers.ChoiceField(choices=[Status.OK.value])
    results = ChangeSerializer(many=True)
    next = serializers.CharField(
        help_text="Send it as `after` for the following changes (also when results is empty)."
    )
