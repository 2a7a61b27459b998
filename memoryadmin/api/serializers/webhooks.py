"""Webhooks over the API: what a client sends to add or change one, and what it reads back."""

from __future__ import annotations

import re

from django.conf import settings
from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memoryadmin.api.serializers.inputs import InputSerializer, StrictBoolean, StrictText
from memoryadmin.api.serializers.outputs import read_of
from stores.editing import Status
from stores.models import Webhook, WebhookDelivery
from stores.selectors.changes import SUGGESTION, SUGGESTION_EVENTS
from stores.services.webhooks import EVENT_STATUSES, MAX_EVENTS, MAX_NAME, MAX_URL
from stores.surfaces import SURFACES
from stores.webhooks import outbound


class WebhookUrl(RegexValidator):
    """The URLs the service takes, as the schema states them: read when used, since whether
    private addresses are allowed is a setting."""

    message = (
        "Give an http or https URL whose host is a domain name (an international one in its "
        "xn-- form) or a public IPv4 address."
    )

    def __init__(self) -> None:
        super().__init__(message=self.message)

    @property  # type: ignore[override]
    def regex(self) -> re.Pattern[str]:
        allow_private = settings.MEMORYADMIN["WEBHOOKS"]["ALLOW_PRIVATE"]
        return re.compile(outbound.url_pattern(allow_private=allow_private))

    @regex.setter
    def regex(self, _value: object) -> None:
        """RegexValidator's own pattern is not used."""


# The events a webhook may hear, as `clean_events` takes them: *, <surface>.<status>, or
# suggestion.<event>.
_ANY = r"\*"
EVENT_PATTERN = "^({any}|({surfaces})\\.({statuses})|{suggestion}\\.({events}))$".format(
    any=_ANY,
    surfaces="|".join([*SURFACES, _ANY]),
    statuses="|".join([*EVENT_STATUSES, _ANY]),
    suggestion=SUGGESTION,
    events="|".join([*SUGGESTION_EVENTS, _ANY]),
)

EVENTS_HELP = (
    "Which changes go out: '*' (all), or '<surface>.<status>' patterns where either part may "
    "be '*', e.g. ['memory.*', 'skill.updated', '*.deleted'], or a suggestion's events "
    "('suggestion.created', '.accepted', '.dismissed', '.stale', 'suggestion.*'). "
    "Default: all."
)


class WebhookInput(InputSerializer):
    url = serializers.CharField(
        max_length=MAX_URL,
        validators=[WebhookUrl()],
        help_text="http or https; its host a domain name (an international one in its xn-- "
        "form) or a public IPv4 address, and a name must resolve to public addresses only.",
    )
    events = serializers.ListField(
        child=serializers.CharField(
            max_length=40,
            validators=[RegexValidator(EVENT_PATTERN, "Not an event pattern (see events).")],
        ),
        max_length=MAX_EVENTS,
        required=False,
        help_text=EVENTS_HELP,
    )
    format = serializers.ChoiceField(
        choices=Webhook.Format.choices,
        default=Webhook.Format.STANDARD,
        help_text="standard: signed JSON per the Standard Webhooks specification (the "
        "answer carries the secret, once). discord: a Discord webhook URL, one embed per change.",
    )
    name = StrictText(max_length=MAX_NAME, required=False, allow_blank=True)


class WebhookChange(InputSerializer):
    enabled = StrictBoolean(
        required=False,
        help_text="false switches it off; true switches it on again, resuming where it stopped.",
    )


class WebhookSerializer(serializers.Serializer):
    id = serializers.IntegerField()
    name = serializers.CharField(allow_blank=True)
    url = serializers.CharField(help_text="Scheme, host and the start of the path only.")
    events = serializers.ListField(child=serializers.CharField())
    format = serializers.ChoiceField(choices=Webhook.Format.choices)
    enabled = serializers.BooleanField()
    disabled_reason = serializers.CharField(allow_blank=True)
    consecutive_failures = serializers.IntegerField()
    created_at = serializers.DateTimeField()


class DeliverySerializer(serializers.Serializer):
    at = serializers.DateTimeField()
    event = serializers.CharField()
    revision = serializers.IntegerField(allow_null=True, help_text="The webhook-id sent.")
    attempt = serializers.IntegerField()
    http_status = serializers.IntegerField(allow_null=True)
    duration_ms = serializers.FloatField()
    outcome = serializers.ChoiceField(choices=WebhookDelivery.Outcome.choices)
    error = serializers.CharField(allow_blank=True)


class WebhookDetail(WebhookSerializer):
    deliveries = DeliverySerializer(many=True, help_text="The latest attempts, newest first.")


@extend_schema_serializer(many=False)
class WebhookList(serializers.Serializer):
    status = serializers.ChoiceField(choices=[Status.OK.value])
    results = WebhookSerializer(many=True)


WebhookRead = read_of(WebhookDetail, "WebhookRead")


class WebhookAnswer(serializers.Serializer):
    """The answer of an add, a change or a delete (or its refusal)."""

    status = serializers.CharField()
    message = serializers.CharField(required=False)
    id = serializers.IntegerField(required=False)
    webhook = WebhookSerializer(required=False)
    secret = serializers.CharField(
        required=False,
        help_text="Standard format, on the add only: the signing secret (whsec_…). It is not "
        "shown again.",
    )
