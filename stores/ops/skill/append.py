"""append: text at the end of a skill's body, or at the end of one section."""

from __future__ import annotations

from dataclasses import replace

from stores.editing import sections
from stores.opnames import OpName
from stores.ops.base import DocumentOp, Page, Place, ToolSpec
from stores.ops.fields import HEADING
from stores.ops.params import Kind, Param

OP = DocumentOp(
    OpName.APPEND,
    "Append to the body or to one section.",
    (
        Param("content", Kind.TEXT, "The text to add.", required=True, min_length=1),
        replace(
            HEADING,
            description="Append at the end of this section; absent: at the end of the body.",
        ),
    ),
    surfaces=("skill",),
    tool=ToolSpec(
        "skill_append",
        "Add text at the end of a skill's markdown body, or at the end of one section.",
    ),
    edit_with=sections.append,
    # A button of the section box, and a form of its own there for the document's end.
    page=Page(
        Place.WITHIN,
        within=OpName.REPLACE_SECTION,
        button="Preview: add to the end of the section",
    ),
)
