"""The shell: every op by its service name, for whoever calls the edit service from Python.

`record_edit`, `skill_append`, … are not written here: each is its op's own `execute`, found in
the catalog by the name the op derives (`Op.service`), so `stores.services.record_edit` is
`CATALOG[OpName.EDIT].execute` and an op is called one way, whatever the door. Who calls is an
`Actor` (`stores.engine.actors`); every other service (the administration of agents in
`agents`, reviews, suggestions, imports, …) is its own module.
"""

from collections.abc import Callable
from typing import Any

from stores.ops.catalog import OPS

SHELL: dict[str, Callable[..., Any]] = {op.service: op.execute for op in OPS}


def __getattr__(name: str) -> Callable[..., Any]:
    """An op by its service name (`record_edit`): the op's `execute` itself."""
    try:
        return SHELL[name]
    except KeyError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None


def __dir__() -> list[str]:
    return sorted([*globals(), *SHELL])


__all__ = ["SHELL"]
