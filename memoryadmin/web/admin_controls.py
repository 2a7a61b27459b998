"""The Django admin's pages with direction controls written out, as the app's pages show them.

The admin renders memory text with Django's own templates, which escape it but leave U+202E
and its kin raw, so a reviewer reads the text reordered. Its pages are rewritten on the way
out with the app's text marker (⟨U+202E⟩, rendering.name_controls): a plain-text marker, so
it is safe wherever the character was, in an element, an attribute or a title.
"""

from __future__ import annotations

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse
from django.urls import reverse

from memoryadmin.web.rendering import BIDI_CONTROLS, name_controls


class AdminControlsMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        response = self.get_response(request)
        if (
            request.path.startswith(reverse("admin:index"))
            and not response.streaming
            and response.get("Content-Type", "").startswith("text/html")
        ):
            charset = response.charset or "utf-8"
            page = response.content.decode(charset, errors="replace")
            if BIDI_CONTROLS.search(page):
                response.content = name_controls(page).encode(charset)
        return response
