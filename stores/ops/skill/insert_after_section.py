"""insert_after_section: whole lines just below one section's heading line of a skill,
before the section's own text."""

from __future__ import annotations

from dataclasses import replace

from stores.editing import sections
from stores.opnames import OpName
from stores.ops.base import DocumentOp, Page, Place, ToolSpec
from stores.ops.fields import HEADING, INSERTED_LINES

OP = DocumentOp(
    OpName.INSERT_AFTER_SECTION,
    "Insert text as a block of its own just below a section's heading.",
    (replace(HEADING, required=True), INSERTED_LINES),
    surfaces=("skill",),
    tool=ToolSpec(
        "skill_insert_after_section",
        "Insert text as whole lines just below one section's heading line of a skill, as a "
        "block of its own: a blank line sets it apart from the paragraph below it.",
    ),
    edit_with=sections.insert_after_section,
    page=Page(
        Place.WITHIN,
        within=OpName.REPLACE_SECTION,
        button="Preview: insert below its heading",
    ),
)
