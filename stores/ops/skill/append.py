"""append: text at the end of a skill's body, or at the end of one section."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from stores.editing import Edited, sections
from stores.ops.base import DocumentOp, ToolSpec
from stores.ops.fields import HEADING
from stores.ops.names import OpName
from stores.ops.params import Kind, Param


@dataclass(frozen=True)
class Append(DocumentOp):
    def edit(self, body: str, arguments: Mapping[str, Any], max_length: int) -> str | Edited:
        return sections.append(
            body, arguments["content"], arguments.get("heading"), max_length=max_length
        )


OP = Append(
    OpName.APPEND,
    "Append to the body or to one section.",
    "skill_append",
    (
        Param("content", Kind.TEXT, "The text to add.", required=True, min_length=1),
        replace(
            HEADING,
            description="Append at the end of this section; absent: at the end of the body.",
        ),
    ),
    surfaces=("skill",),
    previews=True,
    tool=ToolSpec(
        "skill_append",
        "Add text at the end of a skill's markdown body, or at the end of one section.",
    ),
)
