"""Template filters for untrusted memory text, built into every template (settings TEMPLATES)."""

from __future__ import annotations

from typing import Any

from django import template
from django.utils.safestring import SafeData, SafeString

from memoryadmin.web.rendering import name_controls, show_controls

register = template.Library()


@register.filter(needs_autoescape=True)
def visible_controls(value: Any, mode: str = "html", autoescape: bool = True) -> str | SafeString:
    """Escape `value` and make its direction controls visible (see rendering.BIDI_CONTROLS).

    `visible_controls:"text"` writes them out without markup, for text-only places (the page
    title, an option). Already safe HTML gets the same: markup must not land in an attribute.
    """
    text = "" if value is None else str(value)
    if mode == "text" or isinstance(value, SafeData) or not autoescape:
        named = name_controls(text)
        return SafeString(named) if isinstance(value, SafeData) else named
    return show_controls(text)
