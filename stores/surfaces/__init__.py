"""The surface registry: each surface one module here, collected into `SURFACES`.

A new surface is its module (a `SURFACE = SurfaceSpec(...)`), its line in `_MODULES`, and its
model; every layer and door walks the registry.
"""

from __future__ import annotations

from stores.models import VersionedRecord
from stores.surfaces import file, memory, rules, skill, task, working
from stores.surfaces.base import COMMON_SORTS, RELEVANCE, Column, SurfaceSpec

# In the order the doors list them.
_MODULES = (memory, working, skill, task, rules, file)

SURFACES: dict[str, SurfaceSpec] = {module.SURFACE.key: module.SURFACE for module in _MODULES}

MEMORY = memory.SURFACE
WORKING = working.SURFACE
SKILL = skill.SURFACE
TASK = task.SURFACE
RULES = rules.SURFACE
FILE = file.SURFACE


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
