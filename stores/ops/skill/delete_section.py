"""delete_section: one section of a skill, its heading and body."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from stores.editing import Edited, sections
from stores.ops.base import DocumentOp, ToolSpec
from stores.ops.fields import HEADING
from stores.ops.names import OpName


@dataclass(frozen=True)
class DeleteSection(DocumentOp):
    def edit(self, body: str, arguments: Mapping[str, Any], max_length: int) -> str | Edited:
        return sections.delete_section(body, arguments["heading"])


OP = DeleteSection(
    OpName.DELETE_SECTION,
    "Delete one section.",
    "skill_delete_section",
    (replace(HEADING, required=True),),
    surfaces=("skill",),
    previews=True,
    tool=ToolSpec(
        "skill_delete_section",
        "Delete one section (its heading and body) of a skill.",
    ),
)
