"""Webhooks of the agent: POST/GET/DELETE /api/v1/webhooks/ (and PATCH to switch one)."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.exceptions import ApiError
from memoryadmin.api.schema import AGENT_PARAMETER, IDEMPOTENCY_KEY, answers
from memoryadmin.api.serializers.webhooks import (
    WebhookAnswer,
    WebhookChange,
    WebhookInput,
    WebhookList,
    WebhookRead,
)
from memoryadmin.api.views.base import AgentViewSet
from stores.editing import Status
from stores.models import Webhook
from stores.selectors.webhooks import agent_webhook, agent_webhooks, delivery_log
from stores.services.webhooks import (
    manage_refusal,
    webhook_create,
    webhook_data,
    webhook_delete,
    webhook_set_enabled,
)

WEBHOOK_ID = OpenApiParameter("id", int, OpenApiParameter.PATH)
DELIVERIES_SHOWN = 50
WHO = (
    "The agent's write token, or a person with write access to the agent; a read-only "
    "token or a viewer is refused (403), since a webhook's URL can itself be a secret."
)


def _answers(success: int, body: type, refusals: dict[int, str]) -> dict[int, OpenApiResponse]:
    common = {
        401: "not authenticated",
        403: "forbidden: a read-only token or a viewer",
        404: "not_found: no such agent or webhook",
        429: "rate limited",
    }
    return answers(OpenApiResponse(body, "done"), {**common, **refusals}, success)


def _delivery(row) -> dict:
    return {
        "at": row.at.isoformat(),
        "event": row.event,
        "revision": row.revision_id,
        "attempt": row.attempt,
        "http_status": row.http_status,
        "duration_ms": row.duration_ms,
        "outcome": row.outcome,
        "error": row.error,
    }


class WebhookViewSet(AgentViewSet):
    lookup_value_regex = "[0-9]+"

    def _may_manage(self) -> None:
        refused = manage_refusal(self.caller.actor, self.caller.agent)
        if refused is not None:
            raise ApiError(refused.status, refused.message)

    def _webhook(self, pk: str) -> Webhook:
        webhook = agent_webhook(self.caller.agent, int(pk))
        if webhook is None:
            raise ApiError(Status.NOT_FOUND, f"No webhook {pk}.")
        return webhook

    @extend_schema(
        tags=["webhooks"],
        parameters=[AGENT_PARAMETER],
        description=f"The agent's webhooks. {WHO}",
        responses=_answers(200, WebhookList, {400: "invalid: which agent (humans)"}),
    )
    def list(self, request: Request) -> Response:
        self._may_manage()
        webhooks = [webhook_data(webhook) for webhook in agent_webhooks(self.caller.agent)]
        return Response({"status": str(Status.OK), "results": webhooks})

    @extend_schema(
        tags=["webhooks"],
        parameters=[AGENT_PARAMETER, IDEMPOTENCY_KEY],
        request=WebhookInput,
        description="Add a webhook: it hears of every change committed from now on that its "
        "events match, in commit order, at least once (the revision id is the webhook-id). "
        f"{WHO}",
        responses=_answers(201, WebhookAnswer, {400: "invalid: the URL, format or events"}),
    )
    def create(self, request: Request) -> Response:
        values = self.parse(WebhookInput)
        result = webhook_create(actor=self.caller.actor, agent=self.caller.agent, **values)
        response = self.render(result)
        response["Cache-Control"] = "no-store"  # it carries the secret
        return response

    @extend_schema(
        tags=["webhooks"],
        parameters=[AGENT_PARAMETER, WEBHOOK_ID],
        description=f"One webhook and its latest delivery attempts. {WHO}",
        responses=_answers(200, WebhookRead, {}),
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        self._may_manage()
        webhook = self._webhook(pk)
        record = webhook_data(webhook)
        record["deliveries"] = [
            _delivery(row) for row in delivery_log(webhook, limit=DELIVERIES_SHOWN)
        ]
        return Response({"status": str(Status.OK), "record": record})

    @extend_schema(
        tags=["webhooks"],
        parameters=[AGENT_PARAMETER, WEBHOOK_ID, IDEMPOTENCY_KEY],
        request=WebhookChange,
        description=f"Switch a webhook off, or on again after it was disabled. {WHO}",
        responses=_answers(
            200, WebhookAnswer, {400: "invalid", 422: "no_change: it already is so"}
        ),
    )
    def partial_update(self, request: Request, pk: str) -> Response:
        values = self.parse(WebhookChange)
        if "enabled" not in values:
            # Nothing to change: the webhook as it is.
            return self.retrieve(request, pk)
        return self.render(
            webhook_set_enabled(
                actor=self.caller.actor,
                agent=self.caller.agent,
                webhook_id=int(pk),
                enabled=values["enabled"],
            )
        )

    @extend_schema(
        tags=["webhooks"],
        parameters=[AGENT_PARAMETER, WEBHOOK_ID, IDEMPOTENCY_KEY],
        description=f"Remove a webhook and its delivery log. {WHO}",
        responses=_answers(200, WebhookAnswer, {}),
    )
    def destroy(self, request: Request, pk: str) -> Response:
        return self.render(
            webhook_delete(actor=self.caller.actor, agent=self.caller.agent, webhook_id=int(pk))
        )
