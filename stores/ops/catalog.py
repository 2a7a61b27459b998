"""The op registry: every op module of `stores/ops/<family>/`, collected once, for every door.

Each module defines one op (`OP`, an `Op`); a family is a package here (records, memory,
working, skill, rules). The REST actions (`memoryadmin.api`), the tools and so the MCP tools
(`stores.tools.native`) and the web page's op forms (`memoryadmin.web.ops`) are built by
walking `OPS`; none of them lists an op or a parameter of its own.
"""

from __future__ import annotations

import importlib
import pkgutil

import stores.ops
from stores.opnames import OpName
from stores.ops.base import REFUSAL_ADVICE, Op, Page, Place, Rest, Target, ToolSpec
from stores.ops.fields import FIELD_PARAMS
from stores.ops.records.read import document_ref


def _collect() -> tuple[Op, ...]:
    found: dict[OpName, Op] = {}
    for family in pkgutil.iter_modules(stores.ops.__path__):
        if not family.ispkg:
            continue
        package = importlib.import_module(f"stores.ops.{family.name}")
        for member in pkgutil.iter_modules(package.__path__):
            module = importlib.import_module(f"{package.__name__}.{member.name}")
            op = getattr(module, "OP", None)
            if isinstance(op, Op):
                if op.name in found:
                    raise ImportError(f"Two op modules define {op.name}: one op, one module.")
                found[op.name] = op
    order = list(OpName)
    return tuple(sorted(found.values(), key=lambda op: order.index(op.name)))


OPS: tuple[Op, ...] = _collect()
CATALOG: dict[OpName, Op] = {op.name: op for op in OPS}


def ops_of(key: str) -> list[Op]:
    """The ops records of surface `key` have, in catalog order."""
    return [op for op in OPS if op.applies_to(key)]


__all__ = [
    "CATALOG",
    "FIELD_PARAMS",
    "OPS",
    "REFUSAL_ADVICE",
    "Op",
    "Page",
    "Place",
    "Rest",
    "Target",
    "ToolSpec",
    "document_ref",
    "ops_of",
]
