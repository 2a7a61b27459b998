"""prepend: text at the very start of a record's text, as whole lines before its first line."""

from __future__ import annotations

from stores.editing import prepend
from stores.opnames import OpName
from stores.ops.base import LineOp, Page, Place, ToolSpec
from stores.ops.fields import TEXT_FIELD
from stores.ops.params import Kind, Param

OP = LineOp(
    OpName.PREPEND,
    "Add text at the start of a record's text.",
    (
        Param("content", Kind.TEXT, "The text to put first.", required=True, min_length=1),
        TEXT_FIELD,
    ),
    takes_surface=True,
    tool=ToolSpec(
        "prepend_to_record",
        "Add text at the very start of a record's text; the rest stays as it is.",
    ),
    edit_with=prepend,
    # Its form stands beside insert's, in the "Insert lines" box.
    page=Page(Place.WITHIN, within=OpName.INSERT),
)
