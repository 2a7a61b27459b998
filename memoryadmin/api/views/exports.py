"""GET /api/v1/export/pam/: the token's agent's long-term memories as a PAM memory store."""

from __future__ import annotations

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework.request import Request

from memoryadmin.api.schema import AGENT_PARAMETER, read_responses
from memoryadmin.api.views.base import AgentViewSet
from memoryadmin.doors.exports import pam_download


class ExportViewSet(AgentViewSet):
    @extend_schema(
        tags=["export"],
        operation_id="export_pam",
        description=(
            "The agent's long-term memories as one Portable AI Memory (PAM v1.0) memory store, "
            "downloaded as `<agent>-memory-store.json`: every memory's original id (its alias, "
            "else its id here), content hashes and the integrity block, valid under the PAM "
            "SDK's validator. Read-only tokens may export."
        ),
        parameters=[AGENT_PARAMETER],
        responses=read_responses(OpenApiResponse(OpenApiTypes.OBJECT, "the PAM memory store")),
    )
    def pam(self, request: Request) -> FileResponse:
        return pam_download(self.caller.agent)
