"""OpenAPI helpers: the answers every write may give, and the `agent` parameter."""

from __future__ import annotations

import re
from typing import Any

from drf_spectacular.extensions import (
    OpenApiAuthenticationExtension,
    OpenApiSerializerExtension,
    OpenApiSerializerFieldExtension,
)
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse

from memoryadmin.api.serializers.inputs import NO_NUL
from memoryadmin.api.serializers.outputs import ResultSerializer
from stores.ops.catalog import FIELD_PARAMS, Op
from stores.ops.params import Kind, given_schema
from stores.surfaces import surface
from stores.tools import all_tools


class InputScheme(OpenApiSerializerExtension):
    """A request body as its serializer parses it, with what field types alone cannot say:
    unknown fields are refused, no text holds a NUL, and for an op's body (derived from the
    catalog) which parameters go together and which are required."""

    target_class = "memoryadmin.api.serializers.inputs.InputSerializer"
    match_subclasses = True

    def map_serializer(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema = auto_schema._map_basic_serializer(self.target, direction)
        schema["additionalProperties"] = False
        for prop in schema["properties"].values():
            for text in (prop, prop.get("items", {})):
                if text.get("type") == "string" and not {"format", "enum", "pattern"} & set(text):
                    text["pattern"] = NO_NUL
        if hasattr(self.target, "op"):
            self._constrain(schema, self.target.op, self.target.surface_key)
        return schema

    def _constrain(self, schema: dict[str, Any], op: Op, key: str) -> None:
        params = {param.name: param for param in op.params(key)}
        per_surface = {param.name for param in op.parameters if param.choices_of}
        for name, param in params.items():
            if param.kind is Kind.EDITS:
                schema["properties"][name]["minItems"] = 1
            if name in per_surface:
                # A choice that differs by surface is stated as a pattern: as an enum, each
                # surface's set would be a component of its own, with a made-up name.
                schema["properties"][name] = {
                    "type": "string",
                    "pattern": "^(" + "|".join(re.escape(c) for c in param.choices) + ")$",
                    "description": param.description,
                }
        if op.needs_version:
            schema["required"] = [*schema.get("required", []), "expected_version"]
        if op.one_of:
            schema["oneOf"] = [
                {
                    "allOf": [given_schema(params[name]) for name in group],
                    "not": {
                        "anyOf": [
                            given_schema(params[name])
                            for other in op.one_of
                            if other != group
                            for name in other
                        ]
                    },
                }
                for group in op.one_of
            ]
        if op.settable_fields:
            schema["anyOf"] = [{"required": [name]} for name in params if name in FIELD_PARAMS]
            # A text field set here replaces the whole text: the version read goes with it.
            version = {"required": ["expected_version"]}
            schema["allOf"] = [
                {"anyOf": [{"not": {"required": [name]}}, version]}
                for name in surface(key).text_fields
            ]


class QueryTextScheme(OpenApiSerializerFieldExtension):
    target_class = "memoryadmin.api.serializers.inputs.QueryText"

    def map_serializer_field(self, auto_schema: Any, direction: str) -> dict[str, Any]:
        schema = auto_schema._map_serializer_field(self.target, direction, bypass_extensions=True)
        return {**schema, "pattern": NO_NUL}


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "memoryadmin.api.authentication.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema: Any) -> dict[str, Any]:
        return {
            "type": "http",
            "scheme": "bearer",
            "description": "An agent token: python manage.py create_agent_token AGENT",
        }


AGENT_PARAMETER = OpenApiParameter(
    "agent",
    OpenApiTypes.STR,
    OpenApiParameter.QUERY,
    description="Humans (session login): the agent to act on, by name or id. Tokens act on "
    "their own agent and may omit it.",
)
REF_PARAMETER = OpenApiParameter(
    "ref",
    OpenApiTypes.STR,
    OpenApiParameter.PATH,
    description="The record's id, or the alias it had in the store it came from.",
)
IF_MATCH = OpenApiParameter(
    "If-Match",
    {"type": "string", "pattern": r'^(\*|(W/)?"?[0-9]+"?)$'},
    OpenApiParameter.HEADER,
    description='The ETag of your read, e.g. "3". A stale one answers 412 conflict.',
)
IDEMPOTENCY_KEY = OpenApiParameter(
    "Idempotency-Key",
    OpenApiTypes.STR,
    OpenApiParameter.HEADER,
    description="Any unique string; a retry with the same key gets the first answer back "
    "and the write is applied once.",
)

_REFUSALS = {
    400: "invalid",
    401: "not authenticated",
    403: "forbidden, disabled or privacy_restricted",
    404: "not_found",
    409: "conflict (expected_version) or not_editable",
    412: "conflict (If-Match)",
    422: "no_match, ambiguous, no_change, suspected_truncation or sensitive_data",
    428: "precondition_required",
    429: "rate limited",
}
_READ_REFUSALS = (400, 401, 403, 404, 429)


def answers(body: Any, refusals: dict[int, str], success: int = 200) -> dict[int, Any]:
    """`body` under the `success` code, and each refusal (code: when) as a Result."""
    refused = {code: OpenApiResponse(ResultSerializer, when) for code, when in refusals.items()}
    return {success: body, **refused}


def write_responses(success: int = 200) -> dict[int, Any]:
    return answers(OpenApiResponse(ResultSerializer, "done"), _REFUSALS, success)


def read_responses(body: Any) -> dict[int, Any]:
    return answers(body, {code: _REFUSALS[code] for code in _READ_REFUSALS})


WRITE_PARAMETERS = [AGENT_PARAMETER, IF_MATCH, IDEMPOTENCY_KEY]


def add_record_links(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict:
    """OpenAPI links from each create to what can be done with the record it made.

    They tell a client (and schemathesis' stateful runs) that the `id` of a 201 answer is
    the `ref` of the record's read, field update, delete and every op.
    """
    paths = result.get("paths", {})
    for collection, operations in paths.items():
        create = operations.get("post")
        if create is None or "201" not in create.get("responses", {}):
            continue
        links = {}
        for path, record_operations in paths.items():
            if not path.startswith(f"{collection}{{ref}}/"):
                continue
            for method, operation in record_operations.items():
                operation_id = operation["operationId"]
                links[f"{method.upper()} {path[len(collection) :]}"] = {
                    "operationId": operation_id,
                    "parameters": {"ref": "$response.body#/id"},
                }
        if links:
            create["responses"]["201"]["links"] = links
    return result


def tool_call_paths(result: dict[str, Any], generator: Any, request: Any, public: bool) -> dict:
    """One POST path per tool, its body the tool's own JSON Schema, instead of one path
    whose body could be any object: the schema then says which arguments each call takes."""
    paths = result.get("paths", {})
    template = paths.pop("/api/v1/tools/{name}/", None)
    if template is None:
        return result
    call, read = template["post"], template["get"]
    for tool in all_tools():
        read_one = {
            **read,
            "operationId": f"tools_{tool.name}_read",
            "parameters": [p for p in read["parameters"] if p["name"] != "name"],
        }
        operation = {
            **call,
            "operationId": f"tools_{tool.name}_call",
            "summary": tool.name,
            "description": tool.description,
            "parameters": [p for p in call["parameters"] if p["name"] != "name"],
            "requestBody": {
                "required": True,
                "content": {"application/json": {"schema": openapi_schema(tool.parameters)}},
            },
        }
        paths[f"/api/v1/tools/{tool.name}/"] = {"get": read_one, "post": operation}
    return result


def openapi_schema(schema: Any) -> Any:
    """A JSON Schema (2020-12, as the tools declare it) in OpenAPI 3.0's dialect, each text
    holding no NUL, as the request bodies say (every door refuses one, at any depth)."""
    if isinstance(schema, list):
        return [openapi_schema(item) for item in schema]
    if not isinstance(schema, dict):
        return schema
    converted = {key: openapi_schema(value) for key, value in schema.items()}
    types = converted.get("type")
    if isinstance(types, list):
        del converted["type"]
        converted["anyOf"] = [openapi_schema({"type": name}) for name in types]
    if types == "string" and not {"format", "enum", "pattern"} & set(converted):
        converted["pattern"] = NO_NUL
    return converted


def require_constrained_bodies(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict:
    """A body with required fields, or fields that must go together, must be sent at all."""
    schemas = result.get("components", {}).get("schemas", {})
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            body = operation.get("requestBody") if isinstance(operation, dict) else None
            if body is None:
                continue
            schema = body.get("content", {}).get("application/json", {}).get("schema", {})
            if "$ref" in schema:
                schema = schemas.get(schema["$ref"].rsplit("/", 1)[-1], {})
            if schema.get("required") or schema.get("oneOf") or schema.get("anyOf"):
                body["required"] = True
    return result


# Refusals any operation may answer, whatever its view declares: every request is
# authenticated and rate-limited, and a key the idempotency layer refuses (too long, reused
# for another request, or its first request still running) is refused before the view runs.
_EVERY_OPERATION_REFUSALS = {401: _REFUSALS[401], 429: _REFUSALS[429]}
_IDEMPOTENT_REFUSALS = {
    400: f"invalid (an {IDEMPOTENCY_KEY.name} longer than its limit, or the request)",
    409: f"conflict: this {IDEMPOTENCY_KEY.name} was used for another request, or its first "
    "request is still running",
}


def declare_door_refusals(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict:
    """Add the refusals every operation shares (`_EVERY_OPERATION_REFUSALS`, and
    `_IDEMPOTENT_REFUSALS` where it takes an idempotency key) to any that leaves them out."""
    refused = {"application/json": {"schema": {"$ref": "#/components/schemas/Result"}}}
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if not isinstance(operation, dict) or "responses" not in operation:
                continue
            names = {parameter.get("name") for parameter in operation.get("parameters", [])}
            shared = dict(_EVERY_OPERATION_REFUSALS)
            if IDEMPOTENCY_KEY.name in names:
                shared |= _IDEMPOTENT_REFUSALS
            for code, description in shared.items():
                operation["responses"].setdefault(
                    str(code), {"description": description, "content": refused}
                )
    return result


# Free-form JSON as every door takes it: any value, but no text (a key either) holding a NUL,
# which no text column can store. Recursive, as the JSON it describes.
_FREE_JSON = "FreeJson"
_FREE_JSON_REF = {"$ref": f"#/components/schemas/{_FREE_JSON}"}
_FREE_OBJECT = {
    "type": "object",
    "propertyNames": {"pattern": NO_NUL},
    "additionalProperties": _FREE_JSON_REF,
}


def _free_object(schema: Any) -> bool:
    """A free-form JSON object: any keys, any values (`metadata`)."""
    return (
        isinstance(schema, dict)
        and schema.get("type") == "object"
        and "properties" not in schema
        and schema.get("additionalProperties", {}) in ({}, True)
    )


def free_json_without_nul(
    result: dict[str, Any], generator: Any, request: Any, public: bool
) -> dict[str, Any]:
    """Each free-form JSON object (a record's `metadata`) as `_FREE_OBJECT`: the doors refuse a
    NUL in any of its texts, keys and nested values alike, and the schema says so."""

    def rewrite(schema: Any) -> Any:
        if isinstance(schema, list):
            return [rewrite(item) for item in schema]
        if not isinstance(schema, dict):
            return schema
        if _free_object(schema):
            return {**schema, **_FREE_OBJECT}
        return {key: rewrite(value) for key, value in schema.items()}

    # Only what requests carry: an answer's free-form data is the server's to shape.
    schemas = result.setdefault("components", {}).setdefault("schemas", {})
    for name in [name for name in schemas if name.endswith("Request")]:
        schemas[name] = rewrite(schemas[name])
    for operations in result.get("paths", {}).values():
        for operation in operations.values():
            if isinstance(operation, dict) and "requestBody" in operation:
                operation["requestBody"] = rewrite(operation["requestBody"])
    schemas[_FREE_JSON] = {
        "anyOf": [
            {"type": "string", "nullable": True, "pattern": NO_NUL},
            {"type": "number"},
            {"type": "boolean"},
            {"type": "array", "items": _FREE_JSON_REF},
            _FREE_OBJECT,
        ]
    }
    return result


_BLANK = {"type": "string", "maxLength": 0}


def blank_as_any_of(result: Any, generator: Any = None, request: Any = None, public: Any = None):
    """A text that may also be left blank as `anyOf`, not drf-spectacular's `oneOf`: the blank
    value often fits the text's own form too (a text holding no NUL may be empty), and
    `oneOf` would then refuse the one value both alternatives take."""
    if isinstance(result, list):
        return [blank_as_any_of(item) for item in result]
    if not isinstance(result, dict):
        return result
    converted = {key: blank_as_any_of(value) for key, value in result.items()}
    if _BLANK in converted.get("oneOf", []):
        converted["anyOf"] = converted.pop("oneOf")
    return converted
