"""How API answers are rendered: JSON that can always be sent, and the browsable API."""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from django.urls import Resolver404, get_script_prefix, resolve
from rest_framework import renderers
from rest_framework.renderers import JSONRenderer

from memoryadmin.doors.errors import bounded_refusal

# The URL name of the catch-all that answers unknown paths under /api/ (memoryadmin.api.urls).
UNKNOWN_PATH = "api:unknown"


class SafeJSONRenderer(JSONRenderer):
    """UTF-8 JSON, or ASCII-escaped JSON when the data holds an unpaired surrogate.

    A refusal may quote the request (an unknown field's name), and JSON can carry a lone
    surrogate as an escape that Python decodes; UTF-8 cannot encode it, so rendering the
    refusal raised and the client got a 500. The escaped form is the same JSON value. What a
    refusal quotes of the request is bounded (memoryadmin.doors.errors.bounded_refusal).
    """

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context=None):
        data = bounded_refusal(data)
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            ascii_renderer = JSONRenderer()
            ascii_renderer.ensure_ascii = True
            return ascii_renderer.render(data, accepted_media_type, renderer_context)


class BrowsableAPIRenderer(renderers.BrowsableAPIRenderer):
    """DRF's browsable API, with breadcrumbs that name only real endpoints.

    DRF lists every prefix of the path that resolves to an API view. Under /api/ the
    catch-all that answers unknown paths resolves every prefix (`/api/v1/memories`
    without its slash), so the trail read "Unknown Path / Memory List".
    """

    def get_breadcrumbs(self, request) -> list[tuple[str, str]]:
        return [
            (name, url)
            for name, url in super().get_breadcrumbs(request)
            if not _is_unknown_path(url)
        ]


def _is_unknown_path(url: str) -> bool:
    path = urlsplit(url).path
    prefix = get_script_prefix()
    if path.startswith(prefix):
        path = "/" + path[len(prefix) :]
    try:
        return resolve(path).view_name == UNKNOWN_PATH
    except Resolver404:
        return False
