"""The surface registry: each surface one module here, collected into `SURFACES`.

A new surface is its module (a `SURFACE = SurfaceSpec(...)`) and its model; the registry
finds the module, and every layer and door walks the registry.
"""

from __future__ import annotations

import importlib
import pkgutil

from stores.models import VersionedRecord
from stores.surfaces.base import COMMON_SORTS, RELEVANCE, Column, SurfaceSpec

# The order the doors list surfaces in (the navigation's); one not named here comes after
# these, in the order of its key.
_FIRST = ("memory", "working", "skill", "task", "rules", "file")


def _collect() -> dict[str, SurfaceSpec]:
    found: dict[str, SurfaceSpec] = {}
    for member in pkgutil.iter_modules(__path__):
        spec = getattr(importlib.import_module(f"{__name__}.{member.name}"), "SURFACE", None)
        if isinstance(spec, SurfaceSpec):
            if spec.key in found:
                raise ImportError(
                    f"Two surface modules define {spec.key}: one surface, one module."
                )
            found[spec.key] = spec

    def place(key: str) -> tuple[int, str]:
        return (_FIRST.index(key) if key in _FIRST else len(_FIRST), key)

    return {key: found[key] for key in sorted(found, key=place)}


SURFACES: dict[str, SurfaceSpec] = _collect()

MEMORY = SURFACES["memory"]
WORKING = SURFACES["working"]
SKILL = SURFACES["skill"]
TASK = SURFACES["task"]
RULES = SURFACES["rules"]
FILE = SURFACES["file"]


def surface(key: str) -> SurfaceSpec:
    try:
        return SURFACES[key]
    except KeyError:
        raise KeyError(f"Unknown surface {key!r}; one of {', '.join(SURFACES)}.") from None


_BY_MODEL: dict[type[VersionedRecord], SurfaceSpec] = {
    spec.model: spec for spec in SURFACES.values()
}


def surface_of(record: VersionedRecord) -> SurfaceSpec:
    """The surface a record belongs to (a proxy model's record: its concrete model's)."""
    model = record._meta.concrete_model
    assert model is not None and issubclass(model, VersionedRecord)
    return _BY_MODEL[model]


__all__ = [
    "COMMON_SORTS",
    "FILE",
    "MEMORY",
    "RELEVANCE",
    "RULES",
    "SKILL",
    "SURFACES",
    "TASK",
    "WORKING",
    "Column",
    "SurfaceSpec",
    "surface",
    "surface_of",
]
