"""History: every write of the agent's records, with the full text before and after."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.exceptions import ApiError
from memoryadmin.api.schema import AGENT_PARAMETER, WRITE_PARAMETERS, read_responses
from memoryadmin.api.schema import write_responses as write_answers
from memoryadmin.api.serializers import inputs, outputs
from memoryadmin.api.views.base import AgentViewSet
from stores.editing import Status, unified_diff
from stores.selectors.revisions import (
    REDACTED_DIFF,
    agent_revision,
    agent_revisions,
    is_redacted,
    revision_data,
)
from stores.services.erasure import revision_redact
from stores.services.reviews import revision_approve

REVISION_ID = OpenApiParameter("id", int, OpenApiParameter.PATH)


class RevisionViewSet(AgentViewSet):
    lookup_value_regex = "[0-9]+"

    @extend_schema(
        tags=["revisions"],
        parameters=[inputs.RevisionQuery],
        responses=read_responses(outputs.RevisionPage),
    )
    def list(self, request: Request) -> Response:
        query = self.parse(inputs.RevisionQuery, request.query_params)
        revisions = agent_revisions(
            self.caller.agent,
            surface=query.get("surface"),
            record_id=query.get("record_id"),
            with_body=False,
        )
        limit, offset = query["limit"], query["offset"]
        items = [revision_data(r, full=False) for r in revisions[offset : offset + limit]]
        return self.page(items, revisions.count(), limit, offset)

    @extend_schema(
        tags=["revisions"],
        parameters=[AGENT_PARAMETER, REVISION_ID],
        responses=read_responses(outputs.RevisionRead),
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        revision = agent_revision(self.caller.agent, int(pk))
        if revision is None:
            raise ApiError(Status.NOT_FOUND, f"No revision {pk}.")
        data = revision_data(revision, full=True)
        data["diff"] = (
            REDACTED_DIFF
            if is_redacted(revision)
            else unified_diff(
                revision.before_text,
                revision.after_text,
                label=f"{revision.surface}/{revision.record_id}",
            )
        )
        return Response({"status": str(Status.OK), "record": data})

    @extend_schema(
        tags=["revisions"],
        parameters=[*WRITE_PARAMETERS, REVISION_ID],
        request=None,
        responses=write_answers(),
        description="Humans: accept what an agent wrote (settles a pending review).",
    )
    @action(detail=True, methods=["post"])
    def approve(self, request: Request, pk: str) -> Response:
        return self.render(
            revision_approve(agent=self.caller.agent, revision_id=int(pk), actor=self.caller.actor)
        )

    @extend_schema(
        tags=["revisions"],
        parameters=[*WRITE_PARAMETERS, REVISION_ID],
        request=inputs.RedactInput,
        responses=write_answers(),
        description="Humans: replace a revision's text (before, after or both) with a tombstone "
        "saying who, when, why and the SHA-256 of what was removed; the same text on the "
        "neighbouring revisions goes too. Refused (conflict) while the record still holds it.",
    )
    @action(detail=True, methods=["post"])
    def redact(self, request: Request, pk: str) -> Response:
        body = self.parse(inputs.RedactInput)
        return self.render(
            revision_redact(
                agent=self.caller.agent,
                revision_id=int(pk),
                actor=self.caller.actor,
                reason=body["reason"],
                sides=body["sides"],
            )
        )
