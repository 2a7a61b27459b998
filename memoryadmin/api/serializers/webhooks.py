"""Webhooks over the API: what a client sends to add or change one, and what it reads back."""

from __future__ import annotations

from django.core.validators import RegexValidator
from drf_spectacular.utils import extend_schema_serializer
from rest_framework import serializers

from memoryadmin.api.serializers.inputs import StrictText
from stores.editing import Status
from stores.models import Webhook, WebhookDelivery
from stores.selectors.changes import SUGGESTION, SUGGESTION_EVENTS
from stores.services.webhooks import EVENT_STATUSES, MAX_EVENTS, MAX_NAME, MAX_URL
from stores.surfaces import SURFACES

# An http(s) URL with a host name or IPv4 address and a port that exists.
URL_PATTERN = (
    r"^https?://[^/?#\s\[\]:@]+"
    r"(:([0-9]{1,4}|[1-5][0-9]{4}|6[0-4][0-9]{3}|65[0-4][0-9]{2}|655[0-2][0-9]|6553[0-5]))?"
    r"([/?#]\S*)?$"
)

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
    "('suggestion.created', '.accepted', '.dismissed', 'suggestion.*'). Default: all."
)


class WebhookInput(serializers.Serializer):
    url = serializers.CharField(
        max_length=MAX_URL,
        validators=[RegexValidator(URL_PATTERN, "Give an http or https URL.")],
        help_text="http or https; it must resolve to a public address.",
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


class WebhookChange(serializers.Serializer):
    enabled = serializers.BooleanField(
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


class WebhookRead(serializers.Serializer):
    status = serializers.ChoiceField(choices=[Status.OK.value])
    record = WebhookDetail()


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
