"""Suggestions over the API: the inbox's query, a proposal, and how one is settled."""

from __future__ import annotations

from rest_framework import serializers

from memoryadmin.api.serializers.inputs import (
    InputSerializer,
    PageQuery,
    Reference,
    StrictBoolean,
    StrictText,
    param_field,
)
from stores.models import Suggestion
from stores.ops.fields import EXPECTED_SHA256
from stores.ops.memory.merge import MAX_MERGED


class SuggestionQuery(PageQuery):
    kind = serializers.ChoiceField(
        choices=Suggestion.Kind.choices, required=False, allow_blank=True
    )
    status = serializers.ChoiceField(
        choices=Suggestion.State.choices, required=False, allow_blank=True, default="open"
    )


class ProposalInput(InputSerializer):
    kind = serializers.ChoiceField(
        choices=Suggestion.Kind.choices,
        default=Suggestion.Kind.MERGE,
        help_text="merge (the default): fold the records into the first (or `keep`); "
        "duplicate or conflict: point a person at them.",
    )
    records = serializers.ListField(
        child=Reference(),
        min_length=2,
        max_length=MAX_MERGED + 1,
        help_text="The memories (ids or aliases), pinned at the versions they are at now.",
    )
    content = StrictText(
        required=False,
        min_length=1,
        help_text="The merged text, for a merge: it will replace the kept memory's whole text, "
        "so it comes with expected_sha256 when that text is longer than 500 characters.",
    )
    expected_sha256 = param_field(EXPECTED_SHA256)
    reason = StrictText(required=False, max_length=500, help_text="Why, in one line.")
    keep = Reference(required=False, help_text="Which record stays; the first by default.")


class AcceptInput(InputSerializer):
    keep = Reference(
        required=False,
        help_text="The record that stays (its id); the suggestion's proposal by default.",
    )
    content = StrictText(
        required=False,
        min_length=1,
        help_text="The kept record's new text: the merged text, or the corrected one. It "
        "replaces the whole text, so it comes with expected_sha256 when that text is longer "
        "than 500 characters.",
    )
    expected_sha256 = param_field(EXPECTED_SHA256)
    dry_run = StrictBoolean(
        required=False, default=False, help_text="Every write made and rolled back."
    )
