"""delete_section: one section of a skill, its heading and body."""

from __future__ import annotations

from dataclasses import replace

from stores.editing import sections
from stores.opnames import OpName
from stores.ops.base import DocumentOp, Page, Place, ToolSpec
from stores.ops.fields import HEADING

OP = DocumentOp(
    OpName.DELETE_SECTION,
    "Delete one section.",
    (replace(HEADING, required=True),),
    surfaces=("skill",),
    tool=ToolSpec(
        "skill_delete_section",
        "Delete one section (its heading and body) of a skill.",
    ),
    edit_with=sections.delete_section,
    removes=True,
    page=Page(
        Place.WITHIN,
        within=OpName.REPLACE_SECTION,
        button="Preview: delete the section",
        danger=True,
    ),
)
