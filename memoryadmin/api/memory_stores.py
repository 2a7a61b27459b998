"""/api/v1/memory_stores: Anthropic's memory stores API (`client.beta.memory_stores` of the
official SDK), so a program written for the hosted stores runs on memoryadmin unchanged.

A store is a folder of the token's agent's memory files; a memory is a memory file below it;
a version is one revision of such a file. Each door parses, calls one service of
`stores.services.memory_stores` and renders the API's shapes; refusals come out in the API's
error shape, `{"type": "error", "error": {"type", "message"}}`.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
from collections.abc import Callable, Mapping, Sequence
from functools import cached_property
from typing import Any

from django.db.models import QuerySet
from django.http import Http404
from django.utils.dateparse import parse_datetime
from rest_framework import exceptions
from rest_framework.authentication import SessionAuthentication, get_authorization_header
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.views import APIView

from memoryadmin.api import memory_stores_schema as schema
from memoryadmin.api.authentication import AgentPrincipal, BearerTokenAuthentication
from memoryadmin.api.callers import Caller, caller_for
from memoryadmin.api.exceptions import ApiError
from memoryadmin.api.renderers import SafeJSONRenderer
from memoryadmin.doors.tokens import live_token
from stores.editing import Status
from stores.engine.validation import moment as parse_moment
from stores.errors import ApplicationError, Invalid
from stores.models import MemoryFile, MemoryStore, Revision, text_fingerprint
from stores.models.agents import AgentToken
from stores.opnames import OpName
from stores.selectors import memory_stores as selectors
from stores.services import memory_stores as services

API_KEY_HEADER = "x-api-key"
DEFAULT_LIMIT = 20
MAX_LIMIT = 100
# A page of full texts holds at most this many, as the hosted API's does.
MAX_FULL_LIMIT = 20
PAGE_PREFIX = "o:"
FULL = "full"
BASIC = "basic"
VIEWS = (BASIC, FULL)

# The API's error types for memoryadmin's status words: the one vocabulary, spelled as the
# hosted API spells its refusals.
ERROR_TYPES: dict[Status, tuple[int, str]] = {
    Status.NOT_FOUND: (404, "not_found_error"),
    Status.FORBIDDEN: (403, "permission_error"),
    Status.DISABLED: (403, "permission_error"),
    Status.PRIVACY_RESTRICTED: (403, "permission_error"),
    Status.CONFLICT: (409, "conflict_error"),
    Status.NOT_EDITABLE: (409, "conflict_error"),
}
CONFLICT_TYPES = {
    services.PATH_CONFLICT: "memory_path_conflict_error",
    services.PRECONDITION_FAILED: "memory_precondition_failed_error",
}
INVALID = (400, "invalid_request_error")
# The operation of a version, by the op of its revision: every op between a file's create and
# its forget changes its content, its path or both.
OPERATIONS: dict[str, str] = {OpName.CREATE: "created", OpName.FORGET: "deleted"}
MODIFIED = "modified"


def error_response(code: int, error_type: str, message: str, **details: Any) -> Response:
    return Response(
        {"type": "error", "error": {"type": error_type, "message": message, **details}},
        status=code,
    )


def api_error(exc: Exception, context: Mapping[str, Any]) -> Response | None:
    """Every refusal in the API's shape, with the HTTP code the hosted API answers with."""
    if isinstance(exc, ApplicationError | ApiError):
        code, error_type = ERROR_TYPES.get(exc.status, INVALID)
        details = dict(exc.details)
        # A conflict the service named (a path in use, a stale content_sha256) has its own type.
        error_type = CONFLICT_TYPES.get(details.pop("reason", None), error_type)
        return error_response(code, error_type, exc.message, **details)
    if isinstance(exc, Http404):
        return error_response(404, "not_found_error", str(exc) or "Not found.")
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        return error_response(401, "authentication_error", str(exc.detail))
    if isinstance(exc, exceptions.PermissionDenied):
        return error_response(403, "permission_error", str(exc.detail))
    if isinstance(exc, exceptions.NotFound):
        return error_response(404, "not_found_error", str(exc.detail))
    if isinstance(exc, exceptions.Throttled):
        response = error_response(429, "rate_limit_error", str(exc.detail))
        wait = getattr(exc, "wait", None)
        if wait is not None:
            response["Retry-After"] = str(int(wait) + 1)
        return response
    if isinstance(exc, exceptions.APIException):
        return error_response(exc.status_code, INVALID[1], str(exc.detail))
    return None


class ApiKeyAuthentication(BearerTokenAuthentication):
    """`Authorization: Bearer <token>`, or the token as `x-api-key`, which older SDKs and the
    hosted API's curl examples send."""

    def authenticate(self, request: Request) -> tuple[AgentPrincipal, AgentToken] | None:
        if get_authorization_header(request):
            return super().authenticate(request)
        raw = request.headers.get(API_KEY_HEADER)
        if not raw:
            return None
        token = live_token(raw.strip())
        if token is None:
            raise exceptions.AuthenticationFailed("Unknown, revoked or expired token.")
        return AgentPrincipal(token), token


def moment(value: dt.datetime | None) -> str | None:
    """RFC 3339, in UTC with a Z."""
    if value is None:
        return None
    return value.astimezone(dt.UTC).isoformat().replace("+00:00", "Z")


def actor_body(label: str) -> dict[str, str]:
    """Who wrote, as the API's actors: a token is an API key, a person a user, and a
    background job or the shell a service account; each id is memoryadmin's actor label."""
    if label.startswith("agent:"):
        return {"type": "api_actor", "api_key_id": label}
    if label.startswith("user:"):
        return {"type": "user_actor", "user_id": label}
    return {"type": "service_account_actor", "service_account_id": label}


def store_body(store: MemoryStore) -> dict[str, Any]:
    return {
        "type": "memory_store",
        "id": store.public_id,
        "name": store.name,
        "description": store.description,
        "metadata": store.metadata,
        "created_at": moment(store.created_at),
        "updated_at": moment(store.updated_at),
        "archived_at": moment(store.archived_at),
    }


def memory_body(store: MemoryStore, file: MemoryFile, version_id: int, *, full: bool) -> dict:
    return {
        "type": "memory",
        "id": selectors.memory_public_id(file.pk),
        "memory_store_id": store.public_id,
        "path": file.path[len(store.folder) :],
        "content": file.content if full else None,
        "content_sha256": text_fingerprint(file.content),
        "content_size_bytes": len(file.content.encode("utf-8", "surrogatepass")),
        "memory_version_id": selectors.version_public_id(version_id),
        "created_at": moment(file.created_at),
        "updated_at": moment(file.updated_at),
    }


def version_body(store: MemoryStore, revision: Revision, *, full: bool) -> dict[str, Any]:
    operation = OPERATIONS.get(revision.op, MODIFIED)
    deleted = operation == OPERATIONS[OpName.FORGET]
    path = (revision.before_state if deleted else revision.after_state).get("path", "")
    text = revision.after_text
    shown = {
        "type": "memory_version",
        "id": selectors.version_public_id(revision.pk),
        "memory_id": selectors.memory_public_id(revision.record_id),
        "memory_store_id": store.public_id,
        "operation": operation,
        "path": path[len(store.folder) :] if path.startswith(store.folder + "/") else path,
        "content": text if full and not deleted else None,
        "content_sha256": None if deleted else revision.after_hash,
        "content_size_bytes": None if deleted else len(text.encode("utf-8", "surrogatepass")),
        "created_at": moment(revision.created_at),
        "created_by": actor_body(revision.actor),
        "redacted_at": None,
        "redacted_by": None,
    }
    tombstone = revision.redacted.get(services.redacted_side(revision))
    if tombstone is None:
        return shown
    return {
        **shown,
        "path": None,
        "content": None,
        "content_sha256": None,
        "content_size_bytes": None,
        "redacted_at": moment(parse_datetime(tombstone["at"])),
        "redacted_by": actor_body(tombstone["by"]),
    }


def view_of(request: Request, default: str) -> str:
    view = request.query_params.get("view", default)
    if view not in VIEWS:
        raise Invalid(f"view must be one of {', '.join(VIEWS)}, not {view!r}.")
    return view


def flag(request: Request, name: str) -> bool:
    value = request.query_params.get(name, "false").lower()
    if value not in ("true", "false"):
        raise Invalid(f"{name} must be true or false.")
    return value == "true"


def whole_number(request: Request, name: str, default: int, low: int, high: int) -> int:
    raw = request.query_params.get(name)
    if raw is None:
        return default
    if not raw.isascii() or not raw.isdigit() or not low <= int(raw) <= high:
        raise Invalid(f"{name} must be a whole number from {low} to {high}.")
    return int(raw)


def page_of(
    items: Sequence[Any] | QuerySet[Any], request: Request, *, full: bool
) -> tuple[list[Any], str | None]:
    """One page of `items` and the `next_page` token of the rest (None on the last page)."""
    limit = whole_number(request, "limit", DEFAULT_LIMIT, 1, MAX_LIMIT)
    if full:
        limit = min(limit, MAX_FULL_LIMIT)
    start = 0
    token = request.query_params.get("page")
    if token:
        try:
            decoded = base64.urlsafe_b64decode(token.encode("ascii")).decode("ascii")
        except (binascii.Error, UnicodeError, ValueError):
            decoded = ""
        offset = decoded.removeprefix(PAGE_PREFIX)
        if not decoded.startswith(PAGE_PREFIX) or not offset.isdigit():
            raise Invalid("page must be a next_page value from a previous list.")
        start = int(offset)
    end = start + limit
    # One item past the page says whether there is a next one (a queryset reads no more).
    window = list(items[start : end + 1])
    rest = len(window) > limit
    next_page = base64.urlsafe_b64encode(f"{PAGE_PREFIX}{end}".encode()).decode() if rest else None
    return window[:limit], next_page


def listed(data: list[dict[str, Any]], next_page: str | None) -> Response:
    return Response({"data": data, "next_page": next_page})


def created_between(request: Request) -> dict[str, dt.datetime]:
    """The `created_at[gte]` and `created_at[lte]` filters, as queryset lookups."""
    lookups = {}
    for bound in ("gte", "lte"):
        raw = request.query_params.get(f"created_at[{bound}]")
        if raw:
            parsed = parse_moment(raw, f"created_at[{bound}]")
            if parsed is not None:
                lookups[f"created_at__{bound}"] = parsed
    return lookups


class MemoryStoresView(APIView):
    """A door of the memory stores API: the caller (its token's agent), the API's errors.
    Each operation's schema (memoryadmin.api.memory_stores_schema) states the hosted API's
    shapes; the tests hold the doors to them through the SDK and the schema both."""

    authentication_classes = [ApiKeyAuthentication, SessionAuthentication]
    renderer_classes = [SafeJSONRenderer]

    def get_exception_handler(self) -> Callable[[Exception, Mapping[str, Any]], Response | None]:
        return api_error

    @cached_property
    def caller(self) -> Caller:
        return caller_for(self.request)

    def store(self, memory_store_id: str) -> MemoryStore:
        return selectors.store_of(self.caller.agent, memory_store_id)

    def body(self) -> Mapping[str, Any]:
        data = self.request.data
        if not isinstance(data, Mapping):
            raise Invalid("The body must be a JSON object.")
        return data


class StoreCollection(MemoryStoresView):
    @schema.listing(
        "memory_stores_list",
        "The token's agent's memory stores, newest first.",
        schema.STORE_ANSWER,
        schema.INCLUDE_ARCHIVED,
        *schema.CREATED,
    )
    def get(self, request: Request) -> Response:
        stores = selectors.stores_of(
            self.caller.agent, include_archived=flag(request, "include_archived")
        ).filter(**created_between(request))
        page, next_page = page_of(stores, request, full=False)
        return listed([store_body(store) for store in page], next_page)

    @schema.documented(
        "memory_stores_create",
        "A new memory store: a named folder of the agent's memory files.",
        schema.STORE_ANSWER,
        refusals=(403,),
        request=schema.STORE_CREATE,
    )
    def post(self, request: Request) -> Response:
        body = self.body()
        caller = self.caller
        store = services.store_create(
            agent=caller.agent,
            actor=caller.actor,
            name=body.get("name"),
            description=body.get("description") or "",
            metadata=body.get("metadata"),
        )
        return Response(store_body(store))


class StoreDetail(MemoryStoresView):
    @schema.documented("memory_stores_retrieve", "One memory store.", schema.STORE_ANSWER)
    def get(self, request: Request, memory_store_id: str) -> Response:
        return Response(store_body(self.store(memory_store_id)))

    @schema.documented(
        "memory_stores_update",
        "Set a store's name, description or metadata keys (a null key is removed).",
        schema.STORE_ANSWER,
        refusals=(403, 409),
        request=schema.STORE_UPDATE,
    )
    def post(self, request: Request, memory_store_id: str) -> Response:
        store = services.store_update(
            store=self.store(memory_store_id), actor=self.caller.actor, changes=self.body()
        )
        return Response(store_body(store))

    @schema.documented(
        "memory_stores_delete",
        "Forget every memory of the store, one write each, then the store.",
        schema.STORE_DELETED,
        refusals=(403,),
    )
    def delete(self, request: Request, memory_store_id: str) -> Response:
        store = self.store(memory_store_id)
        services.store_delete(store=store, actor=self.caller.actor)
        return Response({"type": "memory_store_deleted", "id": memory_store_id})


class StoreArchive(MemoryStoresView):
    @schema.documented(
        "memory_stores_archive",
        "Archive the store: its memories become read-only (archiving again keeps the first time).",
        schema.STORE_ANSWER,
        refusals=(403,),
    )
    def post(self, request: Request, memory_store_id: str) -> Response:
        store = services.store_archive(store=self.store(memory_store_id), actor=self.caller.actor)
        return Response(store_body(store))


def memories_body(store: MemoryStore, files: list[MemoryFile], *, full: bool) -> list[dict]:
    versions = selectors.current_versions(store, [file.pk for file in files])
    return [memory_body(store, file, versions[file.pk], full=full) for file in files]


class MemoryCollection(MemoryStoresView):
    @schema.listing(
        "memory_stores_memories_list",
        "The store's memories below a folder, by path; deeper ones as memory_prefix items.",
        schema.MEMORY_ITEM,
        schema.PATH_PREFIX,
        schema.DEPTH,
        schema.VIEW_BASIC,
    )
    def get(self, request: Request, memory_store_id: str) -> Response:
        store = self.store(memory_store_id)
        full = view_of(request, BASIC) == FULL
        prefix = request.query_params.get("path_prefix") or "/"
        if not prefix.startswith("/") or not prefix.endswith("/"):
            raise Invalid("path_prefix must start and end with /, such as /notes/.")
        depth = whole_number(request, "depth", 0, 0, services.MAX_PATH_SEGMENTS)
        items, next_page = page_of(selectors.listing(store, prefix, depth), request, full=full)
        files = selectors.files_by_id(store, [file_id for _, file_id in items if file_id])
        shown = memories_body(store, list(files.values()), full=full)
        by_id = {body["id"]: body for body in shown}
        data = [
            by_id[selectors.memory_public_id(file_id)]
            if file_id
            else {"type": "memory_prefix", "path": path}
            for path, file_id in items
            if file_id is None or file_id in files
        ]
        return listed(data, next_page)

    @schema.documented(
        "memory_stores_memories_create",
        "A new memory at a path of the store: an ordinary memory file write.",
        schema.MEMORY_ANSWER,
        refusals=(403, 409),
        request=schema.MEMORY_CREATE,
        parameters=(schema.VIEW_BASIC,),
    )
    def post(self, request: Request, memory_store_id: str) -> Response:
        store = self.store(memory_store_id)
        body = self.body()
        result = services.memory_create(
            store=store,
            actor=self.caller.actor,
            path=body.get("path"),
            content=body.get("content"),
        )
        full = view_of(request, BASIC) == FULL
        return Response(memories_body(store, [result.record], full=full)[0])


class MemoryDetail(MemoryStoresView):
    @schema.documented(
        "memory_stores_memories_retrieve",
        "One memory, with its content by default.",
        schema.MEMORY_ANSWER,
        parameters=(schema.VIEW_FULL,),
    )
    def get(self, request: Request, memory_store_id: str, memory_id: str) -> Response:
        store = self.store(memory_store_id)
        file = selectors.file_in(store, memory_id)
        full = view_of(request, FULL) == FULL
        return Response(memories_body(store, [file], full=full)[0])

    @schema.documented(
        "memory_stores_memories_update",
        "Set a memory's content or path, if its content still has the precondition's SHA-256.",
        schema.MEMORY_ANSWER,
        refusals=(403, 409),
        request=schema.MEMORY_UPDATE,
        parameters=(schema.VIEW_BASIC,),
    )
    def post(self, request: Request, memory_store_id: str, memory_id: str) -> Response:
        store = self.store(memory_store_id)
        body = self.body()
        precondition = body.get("precondition")
        expected = None
        if precondition is not None:
            if (
                not isinstance(precondition, Mapping)
                or precondition.get("type") != "content_sha256"
            ):
                raise Invalid(
                    'precondition must be {"type": "content_sha256", "content_sha256": …}.'
                )
            expected = precondition.get("content_sha256")
            if not isinstance(expected, str):
                raise Invalid("precondition.content_sha256 must be a string.")
        file = services.memory_update(
            store=store,
            actor=self.caller.actor,
            memory_id=memory_id,
            content=body.get("content"),
            path=body.get("path"),
            expected_sha256=expected,
        )
        full = view_of(request, BASIC) == FULL
        return Response(memories_body(store, [file], full=full)[0])

    @schema.documented(
        "memory_stores_memories_delete",
        "Forget a memory (its versions stay listed).",
        schema.MEMORY_DELETED,
        refusals=(403, 409),
        parameters=(schema.EXPECTED_SHA256,),
    )
    def delete(self, request: Request, memory_store_id: str, memory_id: str) -> Response:
        store = self.store(memory_store_id)
        services.memory_delete(
            store=store,
            actor=self.caller.actor,
            memory_id=memory_id,
            expected_sha256=request.query_params.get("expected_content_sha256"),
        )
        return Response({"type": "memory_deleted", "id": memory_id})


class VersionCollection(MemoryStoresView):
    @schema.listing(
        "memory_stores_memory_versions_list",
        "Versions (revisions) of the store's memories, newest first.",
        schema.VERSION_ANSWER,
        schema.MEMORY_ID,
        schema.OPERATION,
        schema.VIEW_BASIC,
        *schema.ACTOR_FILTERS,
        *schema.CREATED,
    )
    def get(self, request: Request, memory_store_id: str) -> Response:
        store = self.store(memory_store_id)
        full = view_of(request, BASIC) == FULL
        memory_id = request.query_params.get("memory_id")
        file_id = None
        if memory_id:
            file_id = selectors.number_in(memory_id, selectors.MEMORY_ID_PREFIX) or 0
        versions = selectors.versions_of(store, file_id=file_id).filter(**created_between(request))
        operation = request.query_params.get("operation")
        if operation:
            versions = self.of_operation(versions, operation)
        for parameter in ("api_key_id", "service_account_id"):
            if request.query_params.get(parameter):
                versions = versions.filter(actor=request.query_params[parameter])
        page, next_page = page_of(versions, request, full=full)
        return listed([version_body(store, revision, full=full) for revision in page], next_page)

    @staticmethod
    def of_operation(versions: Any, operation: str) -> Any:
        ops = {name: op for op, name in OPERATIONS.items()}
        if operation in ops:
            return versions.filter(op=ops[operation])
        if operation == MODIFIED:
            return versions.exclude(op__in=list(OPERATIONS))
        raise Invalid("operation must be created, modified or deleted.")


class VersionDetail(MemoryStoresView):
    @schema.documented(
        "memory_stores_memory_versions_retrieve",
        "One version.",
        schema.VERSION_ANSWER,
        parameters=(schema.VIEW_FULL,),
    )
    def get(self, request: Request, memory_store_id: str, memory_version_id: str) -> Response:
        store = self.store(memory_store_id)
        revision = selectors.version_in(store, memory_version_id)
        return Response(version_body(store, revision, full=view_of(request, FULL) == FULL))


class VersionRedact(MemoryStoresView):
    @schema.documented(
        "memory_stores_memory_versions_redact",
        "Remove a version's text from the history: the erasure's redaction.",
        schema.VERSION_ANSWER,
        refusals=(403,),
    )
    def post(self, request: Request, memory_store_id: str, memory_version_id: str) -> Response:
        store = self.store(memory_store_id)
        revision = services.version_redact(
            store=store, actor=self.caller.actor, version_id=memory_version_id
        )
        return Response(version_body(store, revision, full=False))
