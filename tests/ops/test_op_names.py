"""One name per op: its word, its name in the shell and its tool's name, tied for every op.

The shell's name is derived from the word (`Op.service`) and is the op itself; a tool's name is
public (agents call it) and stays as the op declares it, but holds every word of the op's word;
the README's table of the three is the catalog's.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import stores.services
from stores.opnames import OpName
from stores.ops.catalog import CATALOG, OPS

README = Path(__file__).resolve().parents[2] / "README.md"
TABLE_HEADING = "### The names of each op"


def _words(name: str) -> set[str]:
    return set(name.split("_"))


def names_table() -> str:
    """The README's table of each op's names, as the catalog gives them."""
    rows = [
        f"| `{op.name}` | `{op.service}` | {f'`{op.tool.name}`' if op.tool else '—'} |"
        for op in OPS
    ]
    return "\n".join(["| op | shell | tool |", "|---|---|---|", *rows])


def readme_table() -> str:
    text = README.read_text(encoding="utf-8")
    section = text.split(TABLE_HEADING, 1)[1]
    return "\n".join(re.findall(r"^\|.*\|$", section.split("\n#", 1)[0], flags=re.MULTILINE))


@pytest.mark.parametrize("op", OPS, ids=lambda op: str(op.name))
def test_the_shell_calls_an_op_one_way_its_own(op):
    shell_function = getattr(stores.services, op.service)
    assert shell_function is op.execute is CATALOG[op.name].execute
    assert op.service in dir(stores.services)


def test_a_name_the_shell_does_not_have_is_refused_as_python_refuses_one():
    with pytest.raises(AttributeError, match="record_frobnicate"):
        assert stores.services.record_frobnicate is None
    with pytest.raises(ImportError):
        from stores.services import record_frobnicate  # noqa: F401


@pytest.mark.parametrize("op", [op for op in OPS if op.tool], ids=lambda op: str(op.name))
def test_a_tool_name_holds_every_word_of_its_op(op):
    assert op.tool is not None
    assert _words(op.name.value) <= _words(op.tool.name), (op.name, op.tool.name)


def test_no_two_ops_share_a_shell_name_or_a_tool_name():
    services = [op.service for op in OPS]
    tools = [op.tool.name for op in OPS if op.tool]
    assert len(set(services)) == len(services)
    assert len(set(tools)) == len(tools)


def test_every_op_word_a_door_offers_has_an_op():
    bookkeeping = {OpName.IMPORT, OpName.UNLINK, OpName.ERASE}
    assert set(CATALOG) == set(OpName) - bookkeeping


def test_the_readme_table_is_the_catalogs():
    assert readme_table() == names_table(), (
        f"README.md, under '{TABLE_HEADING}', should read:\n\n{names_table()}"
    )
