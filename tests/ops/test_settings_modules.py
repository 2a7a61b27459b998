"""The settings package: each setting is built in one statement of one concern module, so a
reader finds all of a list (MIDDLEWARE, INSTALLED_APPS, MEMORYADMIN) in one place."""

from __future__ import annotations

import ast
from collections import defaultdict
from pathlib import Path

from django.conf import settings

SETTINGS_DIR = Path(__file__).resolve().parents[2] / "memoryadmin" / "settings"
# Calls that change a list or a dict after it was built.
MUTATORS = {"append", "extend", "insert", "setdefault", "update", "remove", "pop"}


def concern_modules() -> dict[str, ast.Module]:
    return {
        path.stem: ast.parse(path.read_text())
        for path in sorted(SETTINGS_DIR.glob("*.py"))
        if path.name != "__init__.py"
    }


def module_level(tree: ast.Module) -> list[ast.stmt]:
    """The statements run at import: the module's own and those inside its top-level ifs."""
    pending, found = list(tree.body), []
    while pending:
        statement = pending.pop(0)
        found.append(statement)
        if isinstance(statement, ast.If | ast.Try):
            pending.extend(ast.iter_child_nodes(statement))
    return [statement for statement in found if isinstance(statement, ast.stmt)]


def test_every_setting_is_defined_in_one_module():
    defined: dict[str, set[str]] = defaultdict(set)
    for module, tree in concern_modules().items():
        for statement in module_level(tree):
            if isinstance(statement, ast.Assign):
                names = {
                    target.id
                    for target in statement.targets
                    if isinstance(target, ast.Name) and target.id.isupper()
                }
            elif isinstance(statement, ast.AnnAssign) and isinstance(statement.target, ast.Name):
                names = {statement.target.id} if statement.target.id.isupper() else set()
            else:
                continue
            for name in names:
                defined[name].add(module)

    assert len(defined) > 50
    assert {name: modules for name, modules in defined.items() if len(modules) > 1} == {}
    # What the modules define is what Django reads: nothing is left out of the package.
    assert set(defined) <= {name for name in dir(settings) if name.isupper()}


def test_no_setting_is_changed_after_it_is_built():
    changed = []
    for module, tree in concern_modules().items():
        for statement in module_level(tree):
            if isinstance(statement, ast.FunctionDef):
                continue  # a function builds a value of its own, assigned once
            for node in ast.walk(statement):
                if isinstance(node, ast.AugAssign):
                    changed.append(f"{module}: {ast.unparse(node)}")
                elif isinstance(node, ast.Assign | ast.AnnAssign):
                    targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                    changed += [
                        f"{module}: {ast.unparse(node)}"
                        for target in targets
                        if isinstance(target, ast.Subscript | ast.Attribute)
                        and ast.unparse(target).split("[")[0].split(".")[0].isupper()
                    ]
                elif (
                    isinstance(node, ast.Call)
                    and isinstance(node.func, ast.Attribute)
                    and node.func.attr in MUTATORS
                    and isinstance(node.func.value, ast.Name | ast.Subscript)
                    and ast.unparse(node.func.value).split("[")[0].isupper()
                ):
                    changed.append(f"{module}: {ast.unparse(node)}")

    assert changed == []
