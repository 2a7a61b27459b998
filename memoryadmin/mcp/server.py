"""The one MCP server of memoryadmin, generated from the tool registry (`stores.tools`).

Tools: every registered tool, with its name, description and JSON Schema exactly as
`GET /api/v1/tools/` lists them, run by the same `call_tool` as `POST /api/v1/tools/<name>/`.
Resources: `memory://<id>` (a resource template; the id or the memory's alias) is the full
record as `read_record` answers it — the read before a replacement, as in oh-my-pi. Where the
transport allows it (stdio), a client may subscribe to one and hears when it changes
(memoryadmin.mcp.subscriptions).

The SDK is async and the edit service is Django ORM code: every call runs in Django's one
sync thread (`sync_to_async(thread_sensitive=True)`), framed like a Django request so stale
or broken database connections are closed before and after, as Django closes them at the
start and end of a request.

Who is calling is decided by the transport: `identify` gets the HTTP request (None on
stdio) and returns the live agent token, or None when it is unknown, revoked or expired.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from importlib.metadata import PackageNotFoundError, version
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote

import mcp_types as types
from asgiref.sync import sync_to_async
from django.core.serializers.json import DjangoJSONEncoder
from django.db import close_old_connections
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError
from starlette.requests import Request

from memoryadmin.mcp.results import refusal, tool_result
from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.sources import SOURCE_HEADER, parse_source_header
from stores.errors import ApplicationError
from stores.models import AgentToken
from stores.selectors.filters import MemoryFilters
from stores.selectors.search import recall
from stores.surfaces import MEMORY
from stores.tools import ToolArgumentError, ToolContext, all_tools, call_tool, get_tool
from stores.tools.schema import REFUSAL_ADVICE

if TYPE_CHECKING:
    from memoryadmin.mcp.subscriptions import ResourceWatcher

Identify = Callable[[Request | None], AgentToken | None]
Result = TypeVar("Result")

MEMORY_SCHEME = "memory://"
MEMORY_TEMPLATE = MEMORY_SCHEME + "{id}"
JSON = "application/json"
# JSON-RPC error code the MCP specification gives an unknown resource.
RESOURCE_NOT_FOUND = -32002
RESOURCES_PER_PAGE = 50
DEAD_TOKEN = "Unknown, revoked or expired token."

INSTRUCTIONS = (
    "memoryadmin holds this agent's memory: long-term memories, working memory, skills, "
    "scheduled-task directives and behavioural rules. Find memories with recall_memories "
    "(previews only), read one in full with read_record or the resource memory://<id>, and "
    "correct it with edit_record (an exact phrase) rather than replacing the whole text; a "
    "replacement needs the full text and the version you read." + REFUSAL_ADVICE
)


def tool_definitions() -> list[types.Tool]:
    """The registry's tools as MCP tools: the same names, descriptions and input schemas."""
    return [
        types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.parameters,
            annotations=types.ToolAnnotations(read_only_hint=not tool.writes),
        )
        for tool in all_tools()
    ]


def _input_schema(name: str) -> dict[str, Any] | None:
    tool = get_tool(name)
    return None if tool is None else tool.parameters


async def in_database_thread(function: Callable[..., Result], /, *args: Any) -> Result:
    return await sync_to_async(_as_one_request, thread_sensitive=True)(function, *args)


def _as_one_request(function: Callable[..., Result], *args: Any) -> Result:
    close_old_connections()
    try:
        return function(*args)
    finally:
        close_old_connections()


def _context(identify: Identify, request: Request | None) -> ToolContext | None:
    token = identify(request)
    if token is None:
        return None
    return ToolContext(agent=token.agent, actor=Actor.for_token(token))


def _call(
    identify: Identify, request: Request | None, name: str, arguments: Any
) -> types.CallToolResult:
    context = _context(identify, request)
    if context is None:
        return refusal(Status.FORBIDDEN, DEAD_TOKEN, code="authentication_failed")
    try:
        # The session's source, as the REST door takes it (a call's own `source` wins).
        header = request.headers.get(SOURCE_HEADER) if request is not None else None
        if header is not None:
            actor = context.actor.with_source(parse_source_header(header))
            context = ToolContext(agent=context.agent, actor=actor)
        return tool_result(call_tool(name, arguments, context))
    except ToolArgumentError as error:
        return refusal(Status.INVALID, error.message)
    except ApplicationError as error:
        return refusal(error.status, error.message, **error.details)


def memory_ref(uri: str) -> str | None:
    if not uri.startswith(MEMORY_SCHEME):
        return None
    ref = unquote(uri.removeprefix(MEMORY_SCHEME).strip("/"))
    return ref or None


def _read_memory(identify: Identify, request: Request | None, uri: str) -> types.ReadResourceResult:
    ref = memory_ref(uri)
    if ref is None:
        raise MCPError(RESOURCE_NOT_FOUND, f"No resource {uri}; read memory://<id>.", {"uri": uri})
    context = _context(identify, request)
    if context is None:
        raise MCPError(RESOURCE_NOT_FOUND, DEAD_TOKEN, {"uri": uri, "status": "forbidden"})
    answer = call_tool("read_record", {"surface": MEMORY.key, "id": ref}, context)
    if answer["status"] != Status.OK:
        raise MCPError(
            RESOURCE_NOT_FOUND, answer["message"], {"uri": uri, "status": answer["status"]}
        )
    text = json.dumps(answer["record"], ensure_ascii=False, cls=DjangoJSONEncoder)
    return types.ReadResourceResult(
        contents=[types.TextResourceContents(uri=uri, mime_type=JSON, text=text)]
    )


def _list_memories(
    identify: Identify, request: Request | None, cursor: str | None
) -> types.ListResourcesResult:
    """The agent's memories as resources, newest first, a page at a time."""
    context = _context(identify, request)
    if context is None:
        return types.ListResourcesResult(resources=[])
    offset = int(cursor) if cursor and cursor.isdecimal() else 0
    page = recall(
        agent=context.agent, filters=MemoryFilters(), limit=RESOURCES_PER_PAGE, offset=offset
    )
    resources = [
        types.Resource(
            uri=f"{MEMORY_SCHEME}{hit.memory.pk}",
            name=f"memory {hit.memory.pk}",
            title=_first_line(hit.memory.content),
            mime_type=JSON,
        )
        for hit in page.hits
    ]
    following = offset + RESOURCES_PER_PAGE
    return types.ListResourcesResult(
        resources=resources, next_cursor=str(following) if following < page.total else None
    )


def _first_line(text: str, length: int = 80) -> str:
    line = text.strip().splitlines()[0] if text.strip() else ""
    return line if len(line) <= length else line[: length - 1] + "…"


def _version() -> str:
    try:
        return version("memoryadmin")
    except PackageNotFoundError:
        return ""


def build_server(identify: Identify, watcher: ResourceWatcher | None = None) -> Server:
    """The MCP server; `identify` (run in the database thread) says whose memory it serves.

    With a `watcher` (a transport that can send unasked, stdio) it also serves resource
    subscriptions and so advertises them; without one it does neither.
    """

    async def list_tools(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tool_definitions())

    async def call(
        ctx: ServerRequestContext, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if get_tool(params.name) is None:
            # An unknown tool is a protocol error in MCP, as it is a 404 in the REST door.
            raise MCPError(types.INVALID_PARAMS, f"Unknown tool: {params.name}")
        arguments = {} if params.arguments is None else params.arguments
        return await in_database_thread(_call, identify, ctx.request, params.name, arguments)

    async def list_resources(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        cursor = params.cursor if params is not None else None
        return await in_database_thread(_list_memories, identify, ctx.request, cursor)

    async def list_resource_templates(
        ctx: ServerRequestContext, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        return types.ListResourceTemplatesResult(
            resource_templates=[
                types.ResourceTemplate(
                    uri_template=MEMORY_TEMPLATE,
                    name="memory",
                    title="A long-term memory in full",
                    description="Every field of one long-term memory with its whole text and "
                    "version (the id recall gave, or the memory's alias). Read it before "
                    "replacing a text: a recall preview is not the full text.",
                    mime_type=JSON,
                )
            ]
        )

    async def read_resource(
        ctx: ServerRequestContext, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        return await in_database_thread(_read_memory, identify, ctx.request, str(params.uri))

    return Server(
        "memoryadmin",
        version=_version(),
        title="memoryadmin",
        instructions=INSTRUCTIONS,
        get_tool_input_schema=_input_schema,
        on_list_tools=list_tools,
        on_call_tool=call,
        on_list_resources=list_resources,
        on_list_resource_templates=list_resource_templates,
        on_read_resource=read_resource,
        on_subscribe_resource=watcher.subscribe if watcher is not None else None,
        on_unsubscribe_resource=watcher.unsubscribe if watcher is not None else None,
        on_subscriptions_listen=watcher.listen if watcher is not None else None,
    )
