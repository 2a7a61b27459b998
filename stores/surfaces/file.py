"""Memory files: texts named by their path under /memories."""

from __future__ import annotations

from stores.models import MemoryFile
from stores.models.files import place_problem
from stores.surfaces.base import COMMON_SORTS, VERSIONED_STATE, Column, SurfaceSpec

SURFACE = SurfaceSpec(
    key="file",
    model=MemoryFile,
    text_fields=("content",),
    updatable_fields=("path",),
    state_fields=(*VERSIONED_STATE, "path"),
    create_fields=("path", "content", "alias"),
    create_required=("path",),
    read_fields=("path", "content"),
    natural_key=("path",),
    label="Memory file",
    plural="Memory files",
    columns=(Column("path", "Path"), Column("content", "Content")),
    api_path="files",
    tool_hint="file (memory files, each named by its path under /memories)",
    search_fields=("path", "content", "alias"),
    sorts={**COMMON_SORTS, "path": ("path",)},
    nouns=("file", "files"),
    title="{path}",
    placement=place_problem,
    max_text_length=500_000,
)
