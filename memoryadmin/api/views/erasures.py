"""POST /api/v1/erasures/: staff erase text, a record, a subject or all of an agent's records,
and get the signed receipt (the same as `manage.py erase`)."""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryadmin.api.exceptions import ApiError
from memoryadmin.api.schema import answers
from memoryadmin.api.serializers.inputs import InputSerializer, StrictBoolean, StrictText
from stores.editing import Status
from stores.engine.actors import Actor
from stores.models import Agent, Channel
from stores.services.erasing import Scope, erase
from stores.services.erasure import MAX_REASON


class ErasureInput(InputSerializer):
    agent = StrictText(help_text="The agent's name.")
    text = StrictText(required=False, help_text="Exact text to erase wherever it occurs.")
    record = StrictText(required=False, help_text="A record as surface:id, e.g. memory:42.")
    subject = StrictText(required=False, help_text="A subject's external id.")
    all = StrictBoolean(required=False, default=False, help_text="Every record of the agent.")
    dry_run = StrictBoolean(required=False, default=False, help_text="Count; change nothing.")
    reason = StrictText(required=False, allow_blank=True, default="", max_length=MAX_REASON)

    def validate(self, data: dict) -> dict:
        named = [key for key in ("text", "record", "subject") if key in data] + (
            ["all"] if data.get("all") else []
        )
        if len(named) != 1:
            raise serializers.ValidationError(
                "Name exactly one thing to erase: text, record, subject or all."
            )
        return data


class ErasureView(APIView):
    @extend_schema(
        tags=["erasures"],
        operation_id="erasure_create",
        request=ErasureInput,
        responses=answers(
            OpenApiResponse(OpenApiTypes.OBJECT, "the signed receipt (or a dry run's report)"),
            {
                400: "invalid: name exactly one thing to erase",
                401: "unauthenticated",
                403: "forbidden: only staff may erase",
                404: "not_found: no such agent",
            },
        ),
        description="Staff only. Removes the text everywhere memoryadmin keeps it and answers "
        "the receipt: what was searched, counts per place, SHA-256 of what was removed, time, "
        "actor, reason, signed with the installation's key; never the erased text.",
    )
    def post(self, request: Request) -> Response:
        if not request.user.is_staff:
            raise ApiError(Status.FORBIDDEN, "Only staff may erase.")
        body = ErasureInput(data=request.data)
        body.is_valid(raise_exception=True)
        data = body.validated_data
        agent = Agent.objects.filter(name=data["agent"]).first()
        if agent is None:
            raise ApiError(Status.NOT_FOUND, f"No agent {data['agent']!r}.")
        scope = Scope(
            text=data.get("text"),
            record=Scope.parse_record(data["record"]) if "record" in data else None,
            subject=data.get("subject"),
            everything=data["all"],
        )
        receipt = erase(
            agent=agent,
            actor=Actor.for_user(request.user, channel=Channel.API),
            scope=scope,
            reason=data["reason"],
            dry_run=data["dry_run"],
        )
        return Response({"status": str(Status.OK), "receipt": receipt})
