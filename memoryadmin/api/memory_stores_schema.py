"""The memory stores API in /api/schema/: its bodies, answers and refusals as the hosted API
and the SDK's types state them, with memoryadmin's own limits where they differ (README,
"Using the memory stores API").

The shapes are written out as OpenAPI here rather than derived from serializers: the doors
build and read them by hand, as the SDK's types are plain objects, and the refusals share
one error shape whose `error.type` names the hosted API's error.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from django.conf import settings
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema

from stores.services import memory_stores as services

TAG = "memory stores"
# Control characters (Unicode's Cc) are refused in a store's name.
NO_CONTROL = "^[^\\u0000-\\u001f\\u007f-\\u009f]*$"
SHA256 = {"type": "string", "pattern": "^[0-9a-f]{64}$"}
MOMENT = {"type": "string", "format": "date-time"}


def _constant(value: str) -> dict[str, Any]:
    return {"type": "string", "enum": [value]}


def _nullable(schema: dict[str, Any]) -> dict[str, Any]:
    return {**schema, "nullable": True}


def _object(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": properties,
        "required": list(properties) if required is None else required,
    }


_METADATA_VALUE = {"type": "string", "maxLength": services.MAX_METADATA_VALUE_LENGTH}
_METADATA: dict[str, Any] = {
    "type": "object",
    "maxProperties": services.MAX_METADATA_PAIRS,
    "propertyNames": {"minLength": 1, "maxLength": services.MAX_METADATA_KEY_LENGTH},
    "additionalProperties": _METADATA_VALUE,
}
STORE = _object(
    {
        "type": _constant("memory_store"),
        "id": {"type": "string"},
        "name": {"type": "string"},
        "description": {"type": "string"},
        "metadata": _METADATA,
        "created_at": MOMENT,
        "updated_at": MOMENT,
        "archived_at": _nullable(MOMENT),
    }
)
MEMORY = _object(
    {
        "type": _constant("memory"),
        "id": {"type": "string"},
        "memory_store_id": {"type": "string"},
        "path": {"type": "string"},
        "content": _nullable({"type": "string"}),
        "content_sha256": SHA256,
        "content_size_bytes": {"type": "integer", "minimum": 0},
        "memory_version_id": {"type": "string"},
        "created_at": MOMENT,
        "updated_at": MOMENT,
    }
)
PREFIX = _object({"type": _constant("memory_prefix"), "path": {"type": "string"}})
ACTOR = {
    "oneOf": [
        _object({"type": _constant("api_actor"), "api_key_id": {"type": "string"}}),
        _object({"type": _constant("user_actor"), "user_id": {"type": "string"}}),
        _object(
            {
                "type": _constant("service_account_actor"),
                "service_account_id": {"type": "string"},
            }
        ),
    ]
}
VERSION = _object(
    {
        "type": _constant("memory_version"),
        "id": {"type": "string"},
        "memory_id": {"type": "string"},
        "memory_store_id": {"type": "string"},
        "operation": {"type": "string", "enum": ["created", "modified", "deleted"]},
        "path": _nullable({"type": "string"}),
        "content": _nullable({"type": "string"}),
        "content_sha256": _nullable(SHA256),
        "content_size_bytes": _nullable({"type": "integer", "minimum": 0}),
        "created_at": MOMENT,
        "created_by": ACTOR,
        "redacted_at": _nullable(MOMENT),
        "redacted_by": {**ACTOR, "nullable": True},
    }
)


def _page(item: dict[str, Any]) -> dict[str, Any]:
    return _object(
        {"data": {"type": "array", "items": item}, "next_page": _nullable({"type": "string"})}
    )


def _deleted(kind: str) -> dict[str, Any]:
    return _object({"type": _constant(kind), "id": {"type": "string"}})


ERROR = _object(
    {
        "type": _constant("error"),
        "error": {
            "type": "object",
            "properties": {
                "type": {
                    "type": "string",
                    "enum": [
                        "invalid_request_error",
                        "authentication_error",
                        "permission_error",
                        "not_found_error",
                        "conflict_error",
                        "memory_path_conflict_error",
                        "memory_precondition_failed_error",
                        "rate_limit_error",
                    ],
                },
                "message": {"type": "string"},
            },
            "required": ["type", "message"],
            # A path conflict names the path (and the memory holding it), others what they need.
            "additionalProperties": True,
        },
    }
)
_REFUSALS = {
    400: "invalid_request_error: a parameter or body field the API does not take, or a write "
    "the scan at the door refused (README, 'Secrets and personal data')",
    401: "authentication_error: no token, or a wrong one",
    403: "permission_error: a read-only token's write, or a write the agent may not make",
    404: "not_found_error: no such store, memory or version of the token's agent",
    409: "conflict_error (an archived store), memory_path_conflict_error or "
    "memory_precondition_failed_error",
    429: "rate_limit_error: too many requests (Retry-After says when to retry)",
}


def _answers(body: dict[str, Any], *codes: int) -> dict[int, OpenApiResponse]:
    answers = {200: OpenApiResponse(body)}
    for code in (400, 401, 404, 429, *codes):
        answers[code] = OpenApiResponse(ERROR, description=_REFUSALS[code])
    return answers


def _query(name: str, schema: dict[str, Any] | Any, description: str) -> OpenApiParameter:
    return OpenApiParameter(name, schema, OpenApiParameter.QUERY, description=description)


_LIMIT = _query(
    "limit",
    {"type": "integer", "minimum": 1, "maximum": 100},
    "At most this many items a page (20 by default; at most 20 with view=full).",
)
_PAGE = _query("page", OpenApiTypes.STR, "The next_page of the previous page.")
_CREATED = [
    _query(f"created_at[{bound}]", {"type": "string", "format": "date-time"}, f"Created {word}.")
    for bound, word in (("gte", "at or after"), ("lte", "at or before"))
]


def _view(default: str) -> OpenApiParameter:
    return _query(
        "view",
        {"type": "string", "enum": ["basic", "full"]},
        f"full includes each text ({default} by default).",
    )


def _text(max_length: int | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "string", "pattern": "^[^\\u0000]*$"}
    if max_length is not None:
        schema["maxLength"] = max_length
    return schema


def _path() -> dict[str, Any]:
    # The other rules of a memory file's path (segments, no %-encoding or backslash, Unicode
    # form C) are memoryadmin's, refused with a message naming each.
    return {"type": "string", "pattern": "^/", "maxLength": services.MAX_PATH_BYTES}


def _store_fields(required: list[str]) -> dict[str, Any]:
    name = {
        **_text(services.MAX_NAME_LENGTH),
        "minLength": 1,
        "pattern": NO_CONTROL,
    }
    return {
        **_object(
            {
                "name": name,
                "description": _text(services.MAX_DESCRIPTION_LENGTH),
                "metadata": _METADATA,
            },
            required,
        ),
        "additionalProperties": True,
    }


def _content() -> dict[str, Any]:
    return _text(settings.MEMORYADMIN["MAX_TEXT_LENGTH"]["file"])


def _precondition() -> dict[str, Any]:
    return _object({"type": _constant("content_sha256"), "content_sha256": SHA256})


STORE_CREATE = _store_fields(["name"])
STORE_UPDATE = {
    **_store_fields([]),
    "properties": {
        **_store_fields([])["properties"],
        # A null value removes its key.
        "metadata": {
            **_METADATA,
            "additionalProperties": _nullable(_METADATA_VALUE),
        },
    },
}
MEMORY_CREATE = {
    **_object({"path": _path(), "content": _content()}, ["path"]),
    "additionalProperties": True,
}
MEMORY_UPDATE = {
    **_object(
        {
            "path": _path(),
            "content": {**_content(), "minLength": 1},
            "precondition": _precondition(),
        },
        [],
    ),
    "additionalProperties": True,
}


def documented(
    operation_id: str,
    about: str,
    body: dict[str, Any],
    *,
    refusals: tuple[int, ...] = (),
    request: dict[str, Any] | None = None,
    parameters: tuple[OpenApiParameter, ...] = (),
) -> Callable[[Any], Any]:
    """One operation of the memory stores API as the schema states it."""
    return extend_schema(
        tags=[TAG],
        operation_id=operation_id,
        description=about,
        request=None if request is None else {"application/json": request},
        parameters=list(parameters),
        responses=_answers(body, *refusals),
    )


def listing(
    operation_id: str, about: str, item: dict[str, Any], *parameters: OpenApiParameter
) -> Callable[[Any], Any]:
    return documented(operation_id, about, _page(item), parameters=(_LIMIT, _PAGE, *parameters))


INCLUDE_ARCHIVED = _query("include_archived", OpenApiTypes.BOOL, "Archived stores too.")
CREATED = tuple(_CREATED)
VIEW_BASIC = _view("basic")
VIEW_FULL = _view("full")
PATH_PREFIX = _query(
    "path_prefix",
    {"type": "string", "pattern": "^/(.*/)?$"},
    "Only memories below this folder (starting and ending with /, whole segments).",
)
DEPTH = _query(
    "depth",
    {"type": "integer", "minimum": 0, "maximum": services.MAX_PATH_SEGMENTS},
    "Memories deeper than this many folders below the prefix are rolled into memory_prefix "
    "items (0: none are).",
)
MEMORY_ID = _query("memory_id", OpenApiTypes.STR, "Only this memory's versions.")
OPERATION = _query(
    "operation",
    {"type": "string", "enum": ["created", "modified", "deleted"]},
    "Only versions of this operation.",
)
ACTOR_FILTERS = tuple(
    _query(name, OpenApiTypes.STR, "Only versions written by this actor label.")
    for name in ("api_key_id", "service_account_id")
)
EXPECTED_SHA256 = _query(
    "expected_content_sha256",
    {"type": "string", "pattern": "^[0-9a-f]{64}$"},
    "Delete only if the memory's content still has this SHA-256.",
)
STORE_ANSWER = STORE
MEMORY_ANSWER = MEMORY
MEMORY_ITEM = {"oneOf": [MEMORY, PREFIX]}
VERSION_ANSWER = VERSION
STORE_DELETED = _deleted("memory_store_deleted")
MEMORY_DELETED = _deleted("memory_deleted")


class ApiKeyScheme(OpenApiAuthenticationExtension):
    """The agent token as `Authorization: Bearer`, or as `x-api-key`."""

    target_class = "memoryadmin.api.memory_stores.ApiKeyAuthentication"
    name = ["memoryStoresBearerAuth", "memoryStoresApiKeyAuth"]

    def get_security_requirement(self, auto_schema: Any) -> list[dict[str, list[str]]]:
        # Either one: a list of requirements, each met alone.
        return [{name: []} for name in self.name]

    def get_security_definition(self, auto_schema: Any) -> list[dict[str, Any]]:
        return [
            {
                "type": "http",
                "scheme": "bearer",
                "description": "An agent token: python manage.py create_agent_token AGENT",
            },
            {"type": "apiKey", "in": "header", "name": "x-api-key"},
        ]
