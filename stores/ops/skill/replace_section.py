"""replace_section: what stands under one heading of a skill; the rest stays as is.

The heading line stays once: content that opens with that same heading has it dropped,
and the result says so (`dropped_heading`). Its subsections go too, unless
`keep_subsections` keeps them and replaces only the text before the first one.
"""

from __future__ import annotations

from dataclasses import replace

from stores.editing import sections
from stores.opnames import OpName
from stores.ops.base import DocumentOp, Page, Place, ToolSpec
from stores.ops.fields import HEADING
from stores.ops.params import Kind, Param

OP = DocumentOp(
    OpName.REPLACE_SECTION,
    "Replace one section's body.",
    (
        replace(HEADING, required=True),
        Param("content", Kind.TEXT, "The section's new body.", required=True),
        Param(
            "keep_subsections",
            Kind.BOOLEAN,
            "true: replace only the section's own text, up to its first subheading, and "
            "keep the subsections.",
            default=False,
        ),
    ),
    surfaces=("skill",),
    tool=ToolSpec(
        "skill_replace_section",
        "Replace the body of one section (under its heading) of a skill; the rest stays as is.",
    ),
    edit_with=sections.replace_section,
    page=Page(Place.TEXT),
)
