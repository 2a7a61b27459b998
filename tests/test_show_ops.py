"""`manage.py show_ops`: every op with what serves it in each door, and what serves a path."""

from __future__ import annotations

import re
from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from memoryadmin.api.views.surfaces import SURFACE_VIEWSETS
from stores.ops.catalog import OPS, Rest
from stores.surfaces import SURFACES

REST_LINE = re.compile(
    r"^  REST +(?P<method>[A-Z]+) (?P<path>\S+)  (?P<served_by>\S+)  body (?P<body>\S+)$"
)


def show_ops(*arguments: str) -> str:
    out = StringIO()
    call_command("show_ops", *arguments, stdout=out)
    return out.getvalue()


def test_every_op_is_listed_with_its_names_in_every_door():
    listing = show_ops()
    blocks = {block.split(":", 1)[0]: block for block in listing.strip().split("\n\n")}
    assert list(blocks) == [op.name.value for op in OPS]
    for op in OPS:
        block = blocks[op.name]
        assert f"  service   {op.service}\n" in block
        if op.tool is not None:
            assert f"  tool      {op.tool.name}    MCP {op.tool.name}\n" in block
        rest = [REST_LINE.match(line) for line in block.splitlines() if line.startswith("  REST")]
        assert len(rest) == len(op.specs()), op.name
        assert all(match is not None for match in rest), block


def test_each_listed_url_is_served_by_the_viewset_and_op_the_listing_names():
    listing = show_ops()
    for block in listing.strip().split("\n\n"):
        word = block.split(":", 1)[0]
        for line in block.splitlines():
            match = REST_LINE.match(line)
            if match is None:
                continue
            path = match["path"].replace("<ref>", "7")
            served = show_ops("--url", path)
            assert f"  {match['method']} → {match['served_by']}" in served, (line, served)
            handler_line = next(
                text for text in served.splitlines() if text.startswith(f"  {match['method']} →")
            )
            assert f"→ op {word} " in handler_line, (line, served)
            if match["body"] != "-":
                assert handler_line.endswith(f"body {match['body']}"), (line, served)


def test_the_surface_viewsets_serve_the_ops_declared_at_each_place():
    for key in SURFACES:
        served = show_ops("--url", f"/api/v1/{SURFACES[key].api_path}/7/")
        viewset = SURFACE_VIEWSETS[key].__name__
        for op in OPS:
            if op.applies_to(key) and op.rest in (Rest.PARTIAL_UPDATE, Rest.DESTROY):
                assert f"→ {viewset}.{op.rest.value} → op {op.name} " in served, served


def test_a_path_nothing_serves_is_refused():
    with pytest.raises(CommandError, match="No view serves /nowhere/"):
        show_ops("--url", "/nowhere/")


def test_the_record_pages_op_view_names_the_op_in_its_path():
    served = show_ops("--url", "/a/agent/memory/7/ops/edit/")
    assert "record_op" in served and "POST → op edit" in served
