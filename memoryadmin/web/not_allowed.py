"""A page's answer to a method it does not take: a page saying what to do, not a blank 405.

Django's `require_http_methods` answers an empty 405 with an Allow header; a person who
opened the address a form posts to (a bookmark, a reload, a link shared) saw a blank page.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse, HttpResponseNotAllowed
from django.shortcuts import render

API_PREFIX = "/api/"


class MethodNotAllowedPage:
    """An empty 405 of a page rendered as a page naming the methods it takes (Allow kept)."""

    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            not isinstance(response, HttpResponseNotAllowed)
            or response.content
            or request.path.startswith(API_PREFIX)
        ):
            return response
        allowed = [method.strip() for method in response["Allow"].split(",") if method.strip()]
        page = render(
            request,
            "405.html",
            {"method": request.method, "allowed": allowed, "takes_form": "POST" in allowed},
            status=405,
        )
        page["Allow"] = response["Allow"]
        return page
