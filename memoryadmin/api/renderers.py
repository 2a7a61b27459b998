"""JSON that can always be sent, whatever a client put in the request it echoes."""

from __future__ import annotations

from typing import Any

from rest_framework.renderers import JSONRenderer


class SafeJSONRenderer(JSONRenderer):
    """UTF-8 JSON, or ASCII-escaped JSON when the data holds an unpaired surrogate.

    A refusal may quote the request (an unknown field's name), and JSON can carry a lone
    surrogate as an escape that Python decodes; UTF-8 cannot encode it, so rendering the
    refusal raised and the client got a 500. The escaped form is the same JSON value.
    """

    def render(self, data: Any, accepted_media_type: str | None = None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            ascii_renderer = JSONRenderer()
            ascii_renderer.ensure_ascii = True
            return ascii_renderer.render(data, accepted_media_type, renderer_context)
