"""Suggestions of the agent: GET /api/v1/suggestions/, POST a proposal, accept or dismiss one."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.decorators import action
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.schema import AGENT_PARAMETER, IDEMPOTENCY_KEY, read_responses
from memoryadmin.api.schema import write_responses as write_answers
from memoryadmin.api.serializers import suggestions as bodies
from memoryadmin.api.views.base import AgentViewSet
from stores.editing import Status
from stores.selectors.suggestions import suggestion_rows, suggestions_of
from stores.services.suggestions import (
    suggestion_accept,
    suggestion_dismiss,
    suggestion_of,
    suggestion_propose,
)

SUGGESTION_ID = OpenApiParameter("id", int, OpenApiParameter.PATH)


class SuggestionViewSet(AgentViewSet):
    lookup_value_regex = "[0-9]+"

    @extend_schema(
        tags=["suggestions"],
        operation_id="v1_suggestions_list",
        parameters=[bodies.SuggestionQuery],
        description="The agent's suggestions (open ones unless `status` says otherwise), "
        "newest first: duplicates and conflicts the pass found, and merges proposed. Each "
        "names its records with the version each was found at and the version it is at now.",
        responses=read_responses(None),
    )
    def list(self, request: Request) -> Response:
        query = self.parse(bodies.SuggestionQuery, request.query_params)
        found = suggestions_of(
            self.caller.agent, kind=query.get("kind") or None, status=query.get("status") or None
        )
        limit, offset = query["limit"], query["offset"]
        rows = suggestion_rows(list(found[offset : offset + limit]))
        return self.page(rows, found.count(), limit, offset)

    @extend_schema(
        tags=["suggestions"],
        parameters=[AGENT_PARAMETER, SUGGESTION_ID],
        responses=read_responses(None),
    )
    def retrieve(self, request: Request, pk: str) -> Response:
        suggestion = suggestion_of(self.caller.agent, self.caller.actor, pk)
        return Response({"status": str(Status.OK), "record": suggestion_rows([suggestion])[0]})

    @extend_schema(
        tags=["suggestions"],
        parameters=[AGENT_PARAMETER, IDEMPOTENCY_KEY],
        request=bodies.ProposalInput,
        description="Propose instead of overwrite: the memories wait, pinned to the versions "
        "they are at now, for a person (or, where the agent's review mode allows, the agent "
        "itself) to accept. Nothing of them is written.",
        responses=write_answers(201),
    )
    def create(self, request: Request) -> Response:
        values = self.parse(bodies.ProposalInput)
        return self.render(
            suggestion_propose(agent=self.caller.agent, actor=self.caller.actor, **values)
        )

    @extend_schema(
        tags=["suggestions"],
        parameters=[AGENT_PARAMETER, SUGGESTION_ID, IDEMPOTENCY_KEY],
        request=bodies.AcceptInput,
        description="Settle a suggestion by keeping one record: a duplicate or a merge folds "
        "the others into it (the merge op); a conflict invalidates the others, superseded by "
        "it, after setting its text to `content` if given. Refused as 409 conflict, with the "
        "current versions and nothing written, when any record moved since it was found.",
        responses=write_answers(),
    )
    @action(detail=True, methods=["post"])
    def accept(self, request: Request, pk: str) -> Response:
        values = self.parse(bodies.AcceptInput)
        return self.render(
            suggestion_accept(
                agent=self.caller.agent, actor=self.caller.actor, suggestion_id=pk, **values
            )
        )

    @extend_schema(
        tags=["suggestions"],
        parameters=[AGENT_PARAMETER, SUGGESTION_ID, IDEMPOTENCY_KEY],
        request=None,
        description="The records are fine as they are: the suggestion is closed, and the same "
        "records are not suggested again while their texts stay as they were.",
        responses=write_answers(),
    )
    @action(detail=True, methods=["post"])
    def dismiss(self, request: Request, pk: str) -> Response:
        return self.render(
            suggestion_dismiss(agent=self.caller.agent, actor=self.caller.actor, suggestion_id=pk)
        )
