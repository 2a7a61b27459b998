"""The change feed: GET /api/v1/changes/, every committed change of the agent in commit order."""

from __future__ import annotations

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.longpoll import SCOPE_KEY, WAIT_HEADER, wait_marker
from memoryadmin.api.schema import read_responses
from memoryadmin.api.serializers.changes import INCLUDE_DECAY, ChangePage, ChangeQuery
from memoryadmin.api.serializers.outputs import ResultSerializer
from memoryadmin.api.views.base import AgentViewSet
from stores.editing import Status
from stores.selectors.changes import changes_after, decode_cursor

DESCRIPTION = """Every committed write of the agent (creates, edits, deletes, reverts, imports,
expiry and other background writes), and each suggestion found, proposed, accepted or
dismissed (`suggestion`: no revision), in the order they committed, oldest first; `next` is
the cursor of the following page. A cursor never skips or repeats a change, also when writers'
transactions commit in another order than they began, and it stays valid across restarts.

With `wait` and nothing after the cursor yet, the request is held until a change commits (on
any web process or host) or the seconds are up, then answers empty; ask again with `next`.
Each answer (and each wake-up of a held request) counts against the rate limit."""


def _long_poll_held(request: Request) -> bool:
    """Whether the ASGI long-poll wrapper serves this request (it holds it, not the view)."""
    return bool(request.META.get("asgi.scope", {}).get(SCOPE_KEY))


class ChangeViewSet(AgentViewSet):
    @extend_schema(
        tags=["changes"],
        operation_id="changes_list",
        parameters=[ChangeQuery],
        description=DESCRIPTION,
        responses={
            **read_responses(ChangePage),
            503: OpenApiResponse(
                ResultSerializer, "unavailable: the database cannot be reached; retry shortly"
            ),
        },
    )
    def list(self, request: Request) -> Response:
        query = self.parse(ChangeQuery, request.query_params)
        agent = self.caller.agent
        after = decode_cursor(query["after"], agent) if "after" in query else 0
        page = changes_after(
            agent,
            after=after,
            limit=query["limit"],
            include_decay=query.get("include") == INCLUDE_DECAY,
            surface=query.get("surface"),
        )
        response = Response({"status": str(Status.OK), "results": page.items, "next": page.next})
        response["Cache-Control"] = "no-store"
        if not page.items and query["wait"] and _long_poll_held(request):
            response[WAIT_HEADER] = wait_marker(
                agent.pk, page.head, query["wait"], self.caller.owner
            )
        return response
