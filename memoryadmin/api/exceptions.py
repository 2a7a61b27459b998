"""Every error the API raises comes out as JSON with a status word, like a service refusal."""

from __future__ import annotations

from typing import Any

from django.core.exceptions import PermissionDenied as DjangoPermissionDenied
from django.core.exceptions import RequestDataTooBig
from django.http import Http404
from rest_framework import exceptions
from rest_framework.response import Response
from rest_framework.views import exception_handler as drf_exception_handler

from memoryadmin.doors import statuses
from memoryadmin.doors.errors import error_body, too_large_body
from stores.editing import Status
from stores.errors import ApplicationError


class ApiError(Exception):
    """A refusal found by the API layer itself (bad headers, unknown agent, replayed key)."""

    def __init__(self, status: Status, message: str, **details: Any) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.details = details


def exception_handler(exc: Exception, context: dict[str, Any]) -> Response | None:
    """DRF's handler, with each DRF error given its status word and a `code`."""
    if isinstance(exc, RequestDataTooBig):
        # Django's own answer is an HTML error page; an API client needs JSON.
        return Response(too_large_body(), status=statuses.REQUEST_TOO_LARGE)
    if isinstance(exc, ApiError):
        return Response(
            error_body(exc.status, exc.message, **exc.details),
            status=statuses.http_code(exc.status),
        )
    if isinstance(exc, ApplicationError):
        # A refusal of the service raised outside a service call (e.g. a read's not_found).
        return Response(
            error_body(exc.status, exc.message, **exc.details),
            status=statuses.http_code(exc.status),
        )
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(str(exc) or "Not found.")
    elif isinstance(exc, DjangoPermissionDenied):
        exc = exceptions.PermissionDenied(str(exc) or None)
    response = drf_exception_handler(exc, context)
    if response is None or not isinstance(exc, exceptions.APIException):
        return response
    status, code = _status_of(exc)
    body: dict[str, Any] = {"status": str(status), "code": code}
    if isinstance(exc, exceptions.ValidationError):
        body["message"] = _first_message(exc.detail)
        body["errors"] = exc.detail
    else:
        body["message"] = str(exc.detail)
    # The limit a refusal names (e.g. max_depth of a body nested too deep).
    body.update(getattr(exc, "details", {}))
    if isinstance(exc, exceptions.Throttled) and exc.wait is not None:
        body["retry_after"] = int(exc.wait) + 1
    if isinstance(exc, exceptions.MethodNotAllowed):
        allowed = _allowed_methods(context)
        body["allowed"] = allowed
        body["message"] = f"{body['message']} This address takes {', '.join(allowed)}."
    response.data = body
    return response


def _allowed_methods(context: dict[str, Any]) -> list[str]:
    view = context.get("view")
    return [method for method in getattr(view, "allowed_methods", []) if method != "OPTIONS"]


def _status_of(exc: exceptions.APIException) -> tuple[Status, str]:
    if isinstance(exc, exceptions.Throttled):
        return statuses.RATE_LIMITED_STATUS, "rate_limited"
    if isinstance(exc, exceptions.NotAuthenticated | exceptions.AuthenticationFailed):
        return statuses.UNAUTHENTICATED_STATUS, exc.default_code
    if isinstance(exc, exceptions.PermissionDenied):
        return Status.FORBIDDEN, exc.default_code
    if isinstance(exc, exceptions.NotFound):
        return Status.NOT_FOUND, exc.default_code
    # Parse errors, validation errors, wrong method, media type or Accept header.
    return Status.INVALID, exc.default_code


def _first_message(detail: Any, path: str = "") -> str:
    """One readable sentence naming the first offending field."""
    if isinstance(detail, dict):
        for name, value in detail.items():
            prefix = path if name == "non_field_errors" else f"{path}{name}"
            return _first_message(value, f"{prefix}: " if prefix else "")
    if isinstance(detail, list) and detail:
        return _first_message(detail[0], path)
    return f"{path}{detail}"
