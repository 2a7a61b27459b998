"""Sources: the conversations that wrote to the agent, and taking one back."""

from __future__ import annotations

from typing import Any

from django.core.validators import RegexValidator
from drf_spectacular.utils import PolymorphicProxySerializer, extend_schema, extend_schema_field
from rest_framework import serializers
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.schema import AGENT_PARAMETER, IDEMPOTENCY_KEY, answers, read_responses
from memoryadmin.api.serializers import inputs
from memoryadmin.api.serializers.outputs import page_of
from memoryadmin.api.views.base import AgentViewSet
from memoryadmin.doors import statuses
from stores.editing import Status
from stores.engine.sources import NAMED_CONVERSATION_PATTERN
from stores.models import Revision
from stores.selectors.sources import conversation_count, conversations
from stores.services.holds import conversation_hold
from stores.services.takeback import CHOICES, MAX_ANYWAY, conversation_takeback
from stores.surfaces import SURFACES

CONVERSATION_LENGTH = Revision._meta.get_field("source_conversation").max_length


@extend_schema_field(
    {"type": "string", "maxLength": CONVERSATION_LENGTH, "pattern": NAMED_CONVERSATION_PATTERN}
)
class ConversationName(inputs.StrictText):
    """A conversation's id as its writes' sources name it: the services check its form, and
    name the character at fault; the schema states that form."""

    def __init__(self, **kwargs: Any) -> None:
        # Untrimmed: the services hold it to the form a write's source has, line breaks
        # and all, and trim it themselves.
        super().__init__(max_length=CONVERSATION_LENGTH, trim_whitespace=False, **kwargs)


class TakebackInput(inputs.InputSerializer):
    conversation = ConversationName(help_text="The conversation whose writes to take back.")
    dry_run = inputs.StrictBoolean(
        default=False,
        help_text="true: answer what would be taken back (every check made), writing nothing.",
    )
    anyway = serializers.ListField(
        child=inputs.StrictText(
            max_length=64,
            validators=[
                RegexValidator(
                    rf"^({'|'.join(SURFACES)}):[0-9]+$",
                    'A record as its surface and id, as "memory:12".',
                )
            ],
        ),
        required=False,
        max_length=MAX_ANYWAY,
        help_text='Records to take back even over later writes of others, as "memory:12" '
        "(surface and id): a record a take-back answered conflict for, after a person chose "
        "to.",
    )


class HoldInput(inputs.InputSerializer):
    conversation = ConversationName(
        required=False,
        help_text="The conversation to hold for review, in any case (`CONV-Q` holds `conv-q`).",
    )
    without_source = inputs.StrictBoolean(
        default=False,
        help_text="true (and no conversation): hold the agents' writes that name no "
        "conversation at all.",
    )
    held = inputs.StrictBoolean(
        default=True, help_text="false: trust it again (its writes no longer wait for review)."
    )


# What the schema says HoldInput takes: a conversation or the writes without one, not both.
class HoldConversationInput(inputs.InputSerializer):
    conversation = ConversationName(help_text=HoldInput().fields["conversation"].help_text)
    held = inputs.StrictBoolean(default=True, help_text=HoldInput().fields["held"].help_text)


@extend_schema_field({"type": "boolean", "enum": [True]})
class OnlyTrue(inputs.StrictBoolean):
    pass


class HoldWithoutSourceInput(inputs.InputSerializer):
    without_source = OnlyTrue(help_text="Hold the agents' writes that name no conversation at all.")
    held = inputs.StrictBoolean(default=True, help_text=HoldInput().fields["held"].help_text)


HOLD_BODY = PolymorphicProxySerializer(
    component_name="HoldInput",
    serializers=[HoldConversationInput, HoldWithoutSourceInput],
    resource_type_field_name=None,
)


class HeldSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=[Status.UPDATED.value])
    conversation = serializers.CharField(allow_blank=True, help_text='"": the writes without one.')
    held = serializers.BooleanField()


class ConversationSerializer(serializers.Serializer):
    conversation = serializers.CharField()
    writes = serializers.IntegerField()
    records = serializers.IntegerField(help_text="Records it created or changed.")
    first_at = serializers.DateTimeField()
    last_at = serializers.DateTimeField()
    platforms = serializers.ListField(child=serializers.CharField())
    by_op = serializers.DictField(child=serializers.IntegerField())
    by_surface = serializers.DictField(child=serializers.IntegerField())
    taken_back = serializers.IntegerField(help_text="Writes of take-backs of it.")
    held = serializers.BooleanField(help_text="Its agents' writes wait in the review queue.")


class LaterWriteSerializer(serializers.Serializer):
    revision = serializers.IntegerField()
    actor = serializers.CharField()
    conversation = serializers.CharField(help_text="Empty: the write named no conversation.")


class TakenBackSerializer(serializers.Serializer):
    surface = serializers.CharField()
    id = serializers.IntegerField()
    op = serializers.CharField(
        help_text="The op that took it back: forget, invalidate, undo, revert."
    )
    status = serializers.CharField()
    revision = serializers.IntegerField(allow_null=True)
    why = serializers.CharField(help_text="What was done to the record and why, or why not.")
    changed_by = LaterWriteSerializer(
        many=True, help_text="The later writes of others (on a conflict: those in its way)."
    )
    message = serializers.CharField(required=False)
    choices = serializers.ListField(
        child=serializers.ChoiceField(choices=list(CHOICES)),
        required=False,
        help_text="On a conflict: keep it, edit it by hand, or name it in `anyway`.",
    )


class TakebackSerializer(serializers.Serializer):
    status = serializers.CharField(
        help_text="updated (something changed), ok (nothing left to take back), or, when "
        "nothing could change, the first record's refusal (conflict, forbidden, disabled, …)."
    )
    conversation = serializers.CharField()
    dry_run = serializers.BooleanField()
    count = serializers.IntegerField(
        help_text="Records changed (with dry_run: records that would change)."
    )
    results = TakenBackSerializer(many=True)


class SourceViewSet(AgentViewSet):
    @extend_schema(
        tags=["sources"],
        parameters=[inputs.PageQuery],
        responses=read_responses(page_of(ConversationSerializer, "ConversationPage")),
        description="The conversations that wrote to the agent, the latest to write first.",
    )
    def list(self, request: Request) -> Response:
        query = self.parse(inputs.PageQuery, request.query_params)
        limit, offset = query["limit"], query["offset"]
        found = conversations(self.caller.agent, limit=limit, offset=offset)
        items = [summary.as_dict() for summary in found]
        return self.page(items, conversation_count(self.caller.agent), limit, offset)

    @extend_schema(
        tags=["sources"],
        parameters=[AGENT_PARAMETER, IDEMPOTENCY_KEY],
        request=TakebackInput,
        responses=answers(
            TakebackSerializer,
            {
                400: "invalid",
                403: "forbidden (a read-only token)",
                404: "this agent has no write from that conversation",
                409: "conflict: later writes of others are in the way of every record left "
                "to take back",
                422: "not_editable: the store rules keep every record as it is",
            },
        ),
        description="Take back everything one conversation wrote, newest first, each record "
        "as a write of its own: a record it created is forgotten (an episodic memory "
        "invalidated), a change it made undone, keeping later edits, a record it deleted "
        "restored. A record later writes of others are in the way of (they changed a record "
        "it created, wrote after its deletion, or overlap its change) answers conflict, "
        "naming them, and is left as it is, unless named in `anyway`.",
    )
    @action(detail=False, methods=["post"])
    def takeback(self, request: Request) -> Response:
        values = self.parse(TakebackInput)
        answer = conversation_takeback(agent=self.caller.agent, actor=self.caller.actor, **values)
        return Response(answer.as_dict(), status=statuses.http_code(answer.status))

    @extend_schema(
        tags=["sources"],
        parameters=[AGENT_PARAMETER, IDEMPOTENCY_KEY],
        request=HOLD_BODY,
        responses=answers(
            HeldSerializer,
            {
                400: "invalid",
                403: "forbidden: tokens and viewers may not",
                404: "not_found: no such agent is visible to the caller",
            },
        ),
        description="People: hold a conversation for review (quarantine), so its further "
        "writes by agents wait in the review queue, or trust it again (held: false).",
    )
    @action(detail=False, methods=["post"])
    def hold(self, request: Request) -> Response:
        values = self.parse(HoldInput)
        held = conversation_hold(agent=self.caller.agent, actor=self.caller.actor, **values)
        return Response(
            {
                "status": str(Status.UPDATED),
                "conversation": values.get("conversation", ""),
                "held": held,
            }
        )
