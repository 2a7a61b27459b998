"""Tool-call endpoints: list the tools as function-calling definitions, and run a call.

`POST tools/<name>/` takes the model's arguments as its JSON body. The tool's answer,
whatever its status word (refusals included), comes back with HTTP 200 so an agent
framework can hand it to the model as it is; only a call that could not run answers
an HTTP error: 400 invalid (arguments that do not fit the tool's schema), 401, 404 (no
such tool) and 429.
"""

from __future__ import annotations

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import (
    OpenApiParameter,
    OpenApiResponse,
    extend_schema,
    extend_schema_serializer,
)
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.exceptions import ApiError
from memoryadmin.api.schema import AGENT_PARAMETER, IDEMPOTENCY_KEY, answers, read_responses
from memoryadmin.api.views.base import AgentViewSet
from stores.editing import Status
from stores.tools import ToolArgumentError, ToolContext, all_tools, call_tool, get_tool

TOOL_NAME = OpenApiParameter("name", OpenApiTypes.STR, OpenApiParameter.PATH)


class FunctionSerializer(serializers.Serializer):
    name = serializers.CharField()
    description = serializers.CharField()
    parameters = serializers.DictField(help_text="JSON Schema of the arguments.")


class ToolDefinitionSerializer(serializers.Serializer):
    type = serializers.ChoiceField(choices=["function"])
    function = FunctionSerializer()
    family = serializers.CharField(help_text="native, rockbot, oh-my-pi or tomori.")
    writes = serializers.BooleanField()


@extend_schema_serializer(many=False)
class ToolListSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=[Status.OK.value])
    tools = ToolDefinitionSerializer(many=True)


class ToolReadSerializer(serializers.Serializer):
    status = serializers.ChoiceField(choices=[Status.OK.value])
    tool = ToolDefinitionSerializer()


class ToolResultSerializer(serializers.Serializer):
    status = serializers.CharField(
        help_text="The tool's status word (memoryadmin's, or the reference tool's own)."
    )


class ToolViewSet(AgentViewSet):
    lookup_field = "name"
    lookup_value_regex = "[A-Za-z0-9_]+"

    @extend_schema(
        tags=["tools"], parameters=[AGENT_PARAMETER], responses=read_responses(ToolListSerializer)
    )
    def list(self, request: Request) -> Response:
        return Response(
            {"status": str(Status.OK), "tools": [tool.definition() for tool in all_tools()]}
        )

    @extend_schema(
        tags=["tools"],
        parameters=[AGENT_PARAMETER, TOOL_NAME],
        responses=read_responses(ToolReadSerializer),
    )
    def retrieve(self, request: Request, name: str) -> Response:
        tool = get_tool(name)
        if tool is None:
            raise ApiError(Status.NOT_FOUND, f"No tool {name!r}; GET tools/ lists them.")
        return Response({"status": str(Status.OK), "tool": tool.definition()})

    @extend_schema(
        tags=["tools"],
        parameters=[AGENT_PARAMETER, TOOL_NAME, IDEMPOTENCY_KEY],
        request={"application/json": OpenApiTypes.OBJECT},
        responses=answers(
            OpenApiResponse(ToolResultSerializer, "the tool's answer, whatever its status"),
            {
                400: "invalid arguments",
                401: "not authenticated",
                403: "forbidden",
                404: "no such tool",
                409: "this Idempotency-Key was used for another request",
                429: "rate limited",
            },
        ),
        description="Run a tool call: the body is the model's arguments object.",
    )
    def create_call(self, request: Request, name: str) -> Response:
        if get_tool(name) is None:
            raise ApiError(Status.NOT_FOUND, f"No tool {name!r}; GET tools/ lists them.")
        if not request.body:
            raise ApiError(
                Status.INVALID, "Send the tool's arguments as a JSON object (`{}` for none)."
            )
        context = ToolContext(agent=self.caller.agent, actor=self.caller.actor)
        try:
            return Response(call_tool(name, request.data, context))
        except ToolArgumentError as error:
            raise ApiError(Status.INVALID, error.message) from error
