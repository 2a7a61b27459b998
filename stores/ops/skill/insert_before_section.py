"""insert_before_section: whole lines just above one section's heading line of a skill."""

from __future__ import annotations

from dataclasses import replace

from stores.editing import sections
from stores.opnames import OpName
from stores.ops.base import DocumentOp, Page, Place, ToolSpec
from stores.ops.fields import HEADING, INSERTED_LINES

OP = DocumentOp(
    OpName.INSERT_BEFORE_SECTION,
    "Insert text as a block of its own just above a section's heading.",
    (replace(HEADING, required=True), INSERTED_LINES),
    surfaces=("skill",),
    tool=ToolSpec(
        "skill_insert_before_section",
        "Insert text as whole lines just above one section's heading line of a skill, as a "
        "block of its own: a blank line sets it apart from a paragraph above it.",
    ),
    edit_with=sections.insert_before_section,
    page=Page(
        Place.WITHIN,
        within=OpName.REPLACE_SECTION,
        button="Preview: insert above its heading",
    ),
)
