"""What every agent API view shares: the caller, idempotent writes, rendering results."""

from __future__ import annotations

from typing import Any

from django.http import HttpRequest, HttpResponseBase
from rest_framework import serializers
from rest_framework.request import Request
from rest_framework.response import Response
from rest_framework.utils.urls import remove_query_param, replace_query_param
from rest_framework.viewsets import ViewSet

from memoryadmin.api import idempotency
from memoryadmin.api.callers import Caller, caller_for
from memoryadmin.api.preconditions import Precondition, etag
from memoryadmin.doors import statuses
from stores.editing import Status
from stores.engine.results import WriteResult

WRITE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})


class _Replay(Exception):
    """The stored first answer to a retried Idempotency-Key."""

    def __init__(self, response: Response) -> None:
        self.response = response


class AgentViewSet(ViewSet):
    """A view on behalf of one agent: a token's own, or the one a human chose (?agent=)."""

    caller: Caller
    _reservation: idempotency.Reservation | None = None

    def initial(self, request: Request, *args: Any, **kwargs: Any) -> None:
        super().initial(request, *args, **kwargs)
        self.caller = caller_for(request)
        if request.method in WRITE_METHODS:
            outcome = idempotency.begin(request, self.caller.owner)
            if isinstance(outcome, Response):
                raise _Replay(outcome)
            self._reservation = outcome

    def handle_exception(self, exc: Exception) -> Response:
        if isinstance(exc, _Replay):
            return exc.response
        return super().handle_exception(exc)

    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        try:
            return super().dispatch(request, *args, **kwargs)
        except Exception:
            # An unexpected error: free the key so the client's retry runs again.
            if self._reservation is not None:
                idempotency.release(self._reservation)
            raise

    def finalize_response(
        self, request: Request, response: HttpResponseBase, *args: Any, **kwargs: Any
    ) -> HttpResponseBase:
        response = super().finalize_response(request, response, *args, **kwargs)
        if self._reservation is not None and isinstance(response, Response):
            idempotency.finish(self._reservation, response)
            self._reservation = None
        return response

    # --- helpers for the actions -----------------------------------------------------

    def parse(self, serializer_class: type[serializers.Serializer], data: Any = None) -> dict:
        serializer = serializer_class(data=self.request.data if data is None else data)
        serializer.is_valid(raise_exception=True)
        return dict(serializer.validated_data)

    def render(self, result: WriteResult, condition: Precondition | None = None) -> Response:
        """The service's result as the answer: its status word, its HTTP code, an ETag."""
        code = statuses.http_code(
            result.status,
            precondition_from_header=condition is not None and condition.from_header,
        )
        response = Response(result.as_dict(), status=code)
        if result.ok and result.version is not None and result.status is not Status.DELETED:
            response["ETag"] = etag(result.version)
        return response

    def page(self, items: list[dict[str, Any]], total: int, limit: int, offset: int) -> Response:
        url = self.request.build_absolute_uri()
        following = None
        if offset + limit < total:
            following = replace_query_param(url, "offset", offset + limit)
        preceding = None
        if offset > 0:
            preceding = (
                remove_query_param(url, "offset")
                if offset - limit <= 0
                else replace_query_param(url, "offset", offset - limit)
            )
        return Response(
            {
                "status": str(Status.OK),
                "count": total,
                "next": following,
                "previous": preceding,
                "results": items,
            }
        )
