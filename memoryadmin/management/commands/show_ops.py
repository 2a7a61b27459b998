"""Every op and where each door serves it; or, for a path, what serves it.

The REST viewsets and the request bodies are classes made from the catalog and the registry,
so no file defines them by name: this is where a person finds what serves a URL.
"""

from __future__ import annotations

import sys
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.urls import Resolver404, resolve

from memoryadmin.api.serializers.inputs import op_input, op_query
from memoryadmin.api.views.surfaces import SURFACE_VIEWSETS, SurfaceViewSet, op_serving, served_at
from memoryadmin.mcp.server import tool_definitions
from memoryadmin.web.ops import form_place
from stores.ops.catalog import OPS, Op, Rest

# Places whose request has no body of the op's: a page, a read, a delete's query string.
_NO_BODY = frozenset({Rest.LIST, Rest.RETRIEVE, Rest.DESTROY})


def module_of(op: Op) -> str:
    """The op's own module, which defines it (`stores/ops/<family>/<op>.py`)."""
    return next(
        name
        for name, module in list(sys.modules.items())
        if name.startswith("stores.ops.") and getattr(module, "OP", None) is op
    )


def body_name(op: Op, surface_key: str) -> str:
    """The class of what `op` takes on `surface_key`: its body, or a read's query string."""
    made = op_input(op, surface_key) if op.writes else op_query(op, surface_key)
    return made.__name__


class Command(BaseCommand):
    help = (
        "List every op: its word, module, surfaces, REST method and URL with the viewset and "
        "request body serving it, tool and MCP names, and web form. With --url, name what "
        "serves that path."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--url", help="A path, e.g. /api/v1/memories/42/edit/.")

    def handle(self, *args: Any, **options: Any) -> None:
        if options["url"]:
            self._serving(options["url"])
            return
        mcp = {tool.name for tool in tool_definitions()}
        for op in OPS:
            self._op(op, mcp)

    def _op(self, op: Op, mcp: set[str]) -> None:
        write = self.stdout.write
        write(f"{op.name}: {op.summary}")
        write(f"  module    {module_of(op)}")
        write(f"  service   {op.service}")
        write(f"  surfaces  {', '.join(spec.key for spec in op.specs())}")
        tool = op.tool.name if op.tool else "-"
        write(f"  tool      {tool}    MCP {tool if tool in mcp else '-'}")
        write(f"  web       {form_place(op)}")
        for spec in op.specs():
            method, path, handler = served_at(op, spec)
            viewset = SURFACE_VIEWSETS[spec.key].__name__
            body = "-" if op.rest in _NO_BODY else body_name(op, spec.key)
            write(f"  REST      {method} {path}  {viewset}.{handler}  body {body}")
        write("")

    def _serving(self, path: str) -> None:
        try:
            match = resolve(path)
        except Resolver404 as error:
            raise CommandError(f"No view serves {path}.") from error
        view: type | None = getattr(match.func, "cls", None) or getattr(
            match.func, "view_class", None
        )
        name = f"{view.__module__}.{view.__name__}" if view else match._func_path
        self.stdout.write(f"{path}: {name} (URL name {match.view_name})")
        if (word := match.kwargs.get("op")) is not None:
            # The record page's one view of every op names the op in its path.
            self.stdout.write(f"  POST → op {word}")
        if view is None:
            return
        actions: dict[str, str] = getattr(match.func, "actions", None) or {}
        for method, handler in actions.items():
            served = ""
            if issubclass(view, SurfaceViewSet) and (op := op_serving(view, handler)):
                served = f" → op {op.name} ({module_of(op)})"
                if op.rest not in _NO_BODY:
                    served += f", body {body_name(op, view.surface_key)}"
            self.stdout.write(f"  {method.upper()} → {view.__name__}.{handler}{served}")
