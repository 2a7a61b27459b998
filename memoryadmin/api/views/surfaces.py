"""Each surface's collection and records, generated from the registry and the op catalog.

A surface's viewset serves its catalog ops where `Op.rest` says: create, list, read,
PATCH, DELETE, and every other op as POST <ref>/<op>/. Each parses the op's body (derived
from the op's parameters), calls the op, and renders its result.

The classes are made here, one per surface, named from its label (`MemoryViewSet`
serves /api/v1/memories/); `manage.py show_ops` lists each op with the URL, viewset and
request body that serve it, and `manage.py show_ops --url <path>` names what serves a path.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework.decorators import action
from rest_framework.exceptions import MethodNotAllowed
from rest_framework.request import Request
from rest_framework.response import Response

from memoryadmin.api.preconditions import etag, precondition
from memoryadmin.api.schema import (
    AGENT_PARAMETER,
    IDEMPOTENCY_KEY,
    REF_PARAMETER,
    WRITE_PARAMETERS,
    read_responses,
    write_responses,
)
from memoryadmin.api.serializers import inputs, outputs
from memoryadmin.api.views.base import AgentViewSet
from stores.editing import Status
from stores.engine.lookup import find_record
from stores.ops.catalog import Op, Rest, Target, ops_of
from stores.selectors.filters import MemoryFilters
from stores.selectors.records import record_read, record_summary, records_for_agent
from stores.selectors.revisions import records_written_by
from stores.selectors.search import recall
from stores.surfaces import SURFACES, SurfaceSpec, surface


class SurfaceViewSet(AgentViewSet):
    surface_key: ClassVar[str]
    lookup_field = "ref"
    lookup_value_regex = "[^/]+"

    @property
    def spec(self) -> SurfaceSpec:
        return surface(self.surface_key)

    def op_at(self, place: Rest) -> Op:
        """The op this surface serves at `place`, as the op declares it."""
        op = op_at(self.surface_key, place)
        if op is None:
            raise MethodNotAllowed(self.request.method or "")
        return op

    def list(self, request: Request) -> Response:
        if op_at(self.surface_key, Rest.LIST) is not None:
            return self._recall(request)
        query = self.parse(inputs.RecordPageQuery, request.query_params)
        records = records_for_agent(self.spec, self.caller.agent).order_by("-updated_at", "-id")
        if query.get("source_conversation"):
            written = records_written_by(
                self.caller.agent, self.surface_key, query["source_conversation"]
            )
            records = records.filter(pk__in=written)
        limit, offset = query["limit"], query["offset"]
        items = [record_summary(self.spec, r) for r in records[offset : offset + limit]]
        return self.page(items, records.count(), limit, offset)

    def _recall(self, request: Request) -> Response:
        query = self.parse(inputs.RecallQuery, request.query_params)
        limit, offset = query["limit"], query["offset"]
        found = recall(
            agent=self.caller.agent,
            filters=MemoryFilters.from_query(query),
            limit=limit,
            offset=offset,
        )
        return self.page([hit.as_dict() for hit in found.hits], found.total, limit, offset)

    def retrieve(self, request: Request, ref: str) -> Response:
        record = find_record(self.spec, agent=self.caller.agent, ref=ref, actor=self.caller.actor)
        return Response(
            {"status": str(Status.OK), "record": record_read(record)},
            headers={"ETag": etag(record.version)},
        )

    def create(self, request: Request) -> Response:
        response = self.run(self.op_at(Rest.CREATE))
        if response.status_code == 201:
            response["Location"] = request.build_absolute_uri(f"{response.data['id']}/")
        return response

    def partial_update(self, request: Request, ref: str) -> Response:
        return self.run(self.op_at(Rest.PARTIAL_UPDATE), ref)

    def destroy(self, request: Request, ref: str) -> Response:
        query = self.parse(inputs.AgentQuery, request.query_params)
        version = {name: query[name] for name in ("expected_version",) if name in query}
        return self.run(self.op_at(Rest.DESTROY), ref, version)

    def run(self, op: Op, ref: str | None = None, data: Any = None) -> Response:
        """Parse `op`'s body, take the version from it or If-Match, call the op, answer."""
        values = self.parse(inputs.op_input(op, self.surface_key), data)
        condition = None
        if op.target is not Target.SURFACE:
            condition = precondition(self.request, values.pop("expected_version", None))
            values["expected_version"] = condition.expected_version
        if op.target is Target.DOCUMENT:
            # The op finds the agent's one document itself; the path must still name it.
            find_record(self.spec, agent=self.caller.agent, ref=ref, actor=self.caller.actor)
        return self.render(self._call(op, values, ref), condition)

    def read(self, op: Op, ref: str) -> Response:
        """A read op of the record `ref`, its parameters in the query string."""
        values = self.parse(inputs.op_query(op, self.surface_key), self.request.query_params)
        values.pop("agent", None)
        answer = self._call(op, values, ref)
        return Response(answer, headers={"ETag": etag(answer["version"])})

    def _call(self, op: Op, values: dict[str, Any], ref: str | None) -> Any:
        """`op` on this surface, as the caller."""
        return op.call(
            agent=self.caller.agent,
            actor=self.caller.actor,
            values=values,
            surface_key=self.surface_key,
            ref=ref,
        )


def op_at(surface_key: str, place: Rest) -> Op | None:
    """The op of `surface_key` that declares it is served at `place` (None: no op is)."""
    return next((op for op in ops_of(surface_key) if op.rest is place), None)


# The method and the path (under the surface's collection) of each place but an action.
_ROUTES: dict[Rest, tuple[str, str]] = {
    Rest.CREATE: ("POST", ""),
    Rest.LIST: ("GET", ""),
    Rest.RETRIEVE: ("GET", "<ref>/"),
    Rest.PARTIAL_UPDATE: ("PATCH", "<ref>/"),
    Rest.DESTROY: ("DELETE", "<ref>/"),
}


def served_at(op: Op, spec: SurfaceSpec) -> tuple[str, str, str]:
    """Where REST serves `op` on records of `spec`: the method, the path, and the viewset's
    method that serves it."""
    if op.rest is Rest.ACTION:
        method, path, handler = "POST" if op.writes else "GET", f"<ref>/{op.name}/", op.name.value
    else:
        (method, path), handler = _ROUTES[op.rest], op.rest.value
    return method, f"/api/v1/{spec.api_path}/{path}", handler


def op_serving(viewset: type[SurfaceViewSet], handler: str) -> Op | None:
    """The op a surface viewset's method `handler` serves (None: the method serves none)."""
    for op in ops_of(viewset.surface_key):
        if served_at(op, surface(viewset.surface_key))[2] == handler:
            return op
    return None


def viewset_name(spec: SurfaceSpec) -> str:
    """The name of the viewset serving `spec`'s collection: its label, in one word (the
    browsable API titles its pages with it)."""
    return "".join(part.title() for part in spec.label.replace("-", " ").split()) + "ViewSet"


def _action(op: Op) -> Callable[..., Response]:
    def serve(self: SurfaceViewSet, request: Request, ref: str) -> Response:
        if op.writes:
            return self.run(op, ref)
        return self.read(op, ref)

    serve.__name__ = serve.__qualname__ = op.name
    serve.__doc__ = op.summary
    method = "post" if op.writes else "get"
    return action(detail=True, methods=[method], url_path=op.name)(serve)


def _viewset(spec: SurfaceSpec) -> type[SurfaceViewSet]:
    actions = {op.name.value: _action(op) for op in ops_of(spec.key) if op.rest is Rest.ACTION}
    name = viewset_name(spec)
    viewset = type(
        name, (SurfaceViewSet,), {"__module__": __name__, "surface_key": spec.key, **actions}
    )
    _document(viewset, spec)
    return viewset


def _document(viewset: type[SurfaceViewSet], spec: SurfaceSpec) -> None:
    tag = spec.api_path
    on_record = [AGENT_PARAMETER, REF_PARAMETER]
    lists = op_at(spec.key, Rest.LIST)
    recalls = lists is not None
    views: dict[str, Any] = {
        "list": extend_schema(
            tags=[tag],
            summary=lists.summary if lists is not None else None,
            parameters=[inputs.RecallQuery if recalls else inputs.RecordPageQuery],
            responses=read_responses(outputs.RecallPage if recalls else outputs.page_output(spec)),
        ),
        "retrieve": extend_schema(
            tags=[tag],
            parameters=on_record,
            responses=read_responses(outputs.read_output(spec)),
            description='The full record, with `ETag: "<version>"`.',
        ),
    }
    for op in ops_of(spec.key):
        if op.rest in (Rest.LIST, Rest.RETRIEVE):
            continue
        if not op.writes:
            views[op.name.value] = extend_schema(
                tags=[tag],
                summary=op.summary,
                parameters=[REF_PARAMETER, inputs.op_query(op, spec.key)],
                responses={
                    **read_responses(outputs.LinesRead),
                    422: OpenApiResponse(outputs.ResultSerializer, "no_match: no such lines"),
                },
            )
            continue
        parameters = [*WRITE_PARAMETERS, REF_PARAMETER]
        if op.target is Target.SURFACE:
            # A create names no record, so it has no version to match.
            parameters = [AGENT_PARAMETER, IDEMPOTENCY_KEY]
        if op.rest is Rest.DESTROY:
            parameters.append(inputs.AgentQuery)
        views[op.rest.value if op.rest is not Rest.ACTION else op.name.value] = extend_schema(
            tags=[tag],
            summary=op.summary,
            parameters=parameters,
            request=None if op.rest is Rest.DESTROY else inputs.op_input(op, spec.key),
            responses=write_responses(201 if op.rest is Rest.CREATE else 200),
        )
    extend_schema_view(**views)(viewset)


# Each surface's viewset, by surface key; the router mounts each at its `api_path`.
SURFACE_VIEWSETS: dict[str, type[SurfaceViewSet]] = {
    key: _viewset(spec) for key, spec in SURFACES.items()
}
