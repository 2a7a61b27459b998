"""One home per op and per surface, read in the code's own syntax trees and templates.

An op's word belongs to its module (and the `OpName` vocabulary): written as a bare string
elsewhere, a second place knows the op. A surface's key compared in a view or a template is a
page part that belongs to the surface's own template (`templates/web/surfaces/<key>_*.html`);
one a door or a page names by its string is a second place that knows the key (the doors
read it from the surface's spec, as `MEMORY.key`).
"""

from __future__ import annotations

import ast
import importlib
import re
from pathlib import Path

from stores.opnames import OpName
from stores.ops.catalog import OPS
from stores.surfaces import SURFACES

ROOT = Path(__file__).resolve().parent.parent
OP_WORDS = frozenset(word.value for word in OpName)
SURFACE_KEYS = frozenset(SURFACES)
# The op modules and the vocabulary are where op words are written.
OP_HOMES = (ROOT / "stores" / "ops",)


def _sources(*folders: str) -> list[Path]:
    return [
        path
        for folder in folders
        for path in sorted((ROOT / folder).rglob("*.py"))
        if "migrations" not in path.parts
    ]


def _words(node: ast.AST) -> list[ast.Constant]:
    """The string constants of `node`, itself or the items of a tuple, list or set."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node]
    if isinstance(node, ast.Tuple | ast.List | ast.Set):
        return [item for element in node.elts for item in _words(element)]
    return []


def _names_op(node: ast.AST) -> bool:
    return (isinstance(node, ast.Name) and node.id == "op") or (
        isinstance(node, ast.Attribute) and node.attr == "op"
    )


def op_words_written(tree: ast.AST) -> list[tuple[int, str]]:
    """Op words written as strings where an op is named: passed as `op=`, or compared with
    something called `op`."""
    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg == "op":
            found += _words(node.value)
        elif isinstance(node, ast.Compare):
            operands = [node.left, *node.comparators]
            if any(_names_op(operand) for operand in operands):
                found += [word for operand in operands for word in _words(operand)]
    return sorted((word.lineno, word.value) for word in found if word.value in OP_WORDS)


def surface_keys_compared(tree: ast.AST) -> list[tuple[int, str]]:
    """Surface keys written as strings in a comparison."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            for operand in (node.left, *node.comparators):
                found += [(w.lineno, w.value) for w in _words(operand) if w.value in SURFACE_KEYS]
    return sorted(found)


# Where a surface is named: looked up in a registry, or passed as one.
SURFACE_LOOKUPS = frozenset({"surface", "surface_ui", "SURFACES", "SURFACE_UI"})
SURFACE_ARGUMENTS = frozenset({"surface", "surface_key"})


def _called(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    return node.attr if isinstance(node, ast.Attribute) else None


def surface_keys_named(tree: ast.AST) -> list[tuple[int, str]]:
    """Surface keys written as strings where a surface is named: looked up in the registry,
    passed as `surface=` or `surface_key=`, or given as a mapping's "surface"."""
    found: list[ast.Constant] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in SURFACE_ARGUMENTS:
            found += _words(node.value)
        elif isinstance(node, ast.Call) and _called(node.func) in SURFACE_LOOKUPS:
            found += [word for argument in node.args for word in _words(argument)]
        elif isinstance(node, ast.Subscript) and _called(node.value) in SURFACE_LOOKUPS:
            found += _words(node.slice)
        elif isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value in SURFACE_ARGUMENTS:
                    found += _words(value)
    return sorted((word.lineno, word.value) for word in found if word.value in SURFACE_KEYS)


# A page's link to a surface named by its key: `{% url 'web:record_list' agent.name 'memory' %}`.
TEMPLATE_URL_ARGUMENTS = re.compile(r"""\{%\s*url\s+["'][^"']+["'](?P<arguments>[^%]*)%\}""")
QUOTED = re.compile(r"""["'](\w+)["']""")

# A template's comparison of a surface key: `ui.key == "skill"`, `"memory" != surface`.
TEMPLATE_COMPARISON = re.compile(
    r"""(key|surface)\s*(==|!=)\s*["'](?P<after>\w+)["']|["'](?P<before>\w+)["']\s*(==|!=)\s*\S*(key|surface)\b"""
)
# The doors: the views and what they render with, and the tools.
DOORS = (
    "memoryadmin/web",
    "memoryadmin/api",
    "memoryadmin/mcp",
    "memoryadmin/doors",
    "stores/tools",
)


def test_the_checks_find_what_they_look_for():
    tree = ast.parse(
        'write(op="edit")\nif revision.op in ("create", "x"): pass\n'
        'if ui.key == "memory": pass\nif op != "import": pass'
    )
    assert op_words_written(tree) == [(1, "edit"), (2, "create"), (4, "import")]
    assert surface_keys_compared(tree) == [(3, "memory")]
    assert TEMPLATE_COMPARISON.search('{% if ui.key == "skill" %}')
    named = ast.parse(
        'surface_ui("rules")\nSURFACE_UI["skill"]\nchanges_after(a, surface="memory")\n'
        'call_tool("read_record", {"surface": "task", "id": 1})\nrecord_edit(surface_key="file")\n'
        'request.FILES.get("file")\nspec = MEMORY.key'
    )
    assert surface_keys_named(named) == [
        (1, "rules"), (2, "skill"), (3, "memory"), (4, "task"), (5, "file")
    ]  # fmt: skip
    assert template_surface_keys("{% url 'web:record_detail' agent.name 'memory' record.id %}")
    assert not template_surface_keys("{% url 'web:record_list' agent.name ui.key %}")


def test_no_op_word_is_written_outside_the_op_modules():
    written = [
        f"{path.relative_to(ROOT)}:{line}: {word!r}"
        for path in _sources("stores", "memoryadmin")
        if not any(home in path.parents for home in OP_HOMES)
        for line, word in op_words_written(ast.parse(path.read_text(encoding="utf-8")))
    ]
    assert written == [], "use OpName (stores/opnames.py): " + "; ".join(written)


def test_no_view_compares_or_names_a_surface_key():
    written = [
        f"{path.relative_to(ROOT)}:{line}: {key!r}"
        for path in _sources(*DOORS)
        for tree in [ast.parse(path.read_text(encoding="utf-8"))]
        for line, key in [*surface_keys_compared(tree), *surface_keys_named(tree)]
    ]
    assert written == [], "read the surface's spec instead (MEMORY.key): " + "; ".join(written)


def template_surface_keys(line: str) -> list[str]:
    """The surface keys a template line's `{% url %}` tags quote as arguments."""
    return [
        key
        for tag in TEMPLATE_URL_ARGUMENTS.finditer(line)
        for key in QUOTED.findall(tag.group("arguments"))
        if key in SURFACE_KEYS
    ]


def test_no_page_links_to_a_surface_by_its_key():
    named = [
        f"{path.relative_to(ROOT)}:{number}: {key!r}"
        for path in sorted((ROOT / "templates").rglob("*.html"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        for key in template_surface_keys(line)
    ]
    assert named == [], "link with the surface the view passes (its ui.key): " + "; ".join(named)


def template_comparisons(pattern: re.Pattern[str], words: frozenset[str]) -> list[str]:
    """Where a template compares one of `words` as `pattern` finds it (its `after` or
    `before` group): each as `<path>:<line>: <word>`."""
    compared = []
    for path in sorted((ROOT / "templates").rglob("*.html")):
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            for match in pattern.finditer(line):
                word = match.group("after") or match.group("before")
                if word in words:
                    compared.append(f"{path.relative_to(ROOT)}:{number}: {word!r}")
    return compared


def test_no_template_compares_a_surface_key():
    compared = template_comparisons(TEMPLATE_COMPARISON, SURFACE_KEYS)
    assert compared == [], "use templates/web/surfaces/<key>_*.html: " + "; ".join(compared)


# A template's comparison of an op word: `revision.op == "create"`, `"forget" != entry.op`.
TEMPLATE_OP_COMPARISON = re.compile(
    r"""\bop\s*(==|!=)\s*["'](?P<after>\w+)["']|["'](?P<before>\w+)["']\s*(==|!=)\s*\S*\bop\b"""
)


def test_no_template_compares_an_op_word():
    assert TEMPLATE_OP_COMPARISON.search('{% if revision.op != "forget" %}')
    compared = template_comparisons(TEMPLATE_OP_COMPARISON, OP_WORDS)
    assert compared == [], "ask the revision (as revision.created_record): " + "; ".join(compared)


def test_each_op_is_one_module_of_its_family():
    defined_in = {}
    for path in sorted((ROOT / "stores" / "ops").glob("*/*.py")):
        module = importlib.import_module(".".join(path.relative_to(ROOT).with_suffix("").parts))
        op = getattr(module, "OP", None)
        if op is not None:
            defined_in[op.name] = module.__name__
    assert sorted(defined_in) == sorted(op.name for op in OPS)
    for name, module in defined_in.items():
        assert module.rsplit(".", 1)[1] == name.value, (name, module)
