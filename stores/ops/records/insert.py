"""insert: lines into a record's text after line N (0: before the first).

A line number outside [0, lines] is refused as invalid naming that range. The new lines take
the text's own line ending, and the text ends with one afterwards, as the Anthropic memory
tool's insert leaves a file. Without `expected_version` the line number is read against the
current text under the row lock, as a phrase edit's match is.
"""

from __future__ import annotations

from stores.editing import insert_lines
from stores.opnames import OpName
from stores.ops.base import REFUSAL_ADVICE, LineOp, Page, Place, ToolSpec
from stores.ops.fields import TEXT_FIELD
from stores.ops.params import Kind, Param

OP = LineOp(
    OpName.INSERT,
    "Insert lines after line N (0: before the first).",
    (
        Param(
            "insert_line",
            Kind.INTEGER,
            "Insert after this line; 0 puts it before the first line.",
            required=True,
            minimum=0,
            maximum=10**7,
        ),
        Param(
            "content",
            Kind.TEXT,
            "The lines to insert. One final line break is optional.",
            required=True,
        ),
        TEXT_FIELD,
    ),
    takes_surface=True,
    tool=ToolSpec(
        "insert_lines",
        "Insert lines into a record's text after a given line (0: at the very top); "
        "every other line stays byte for byte. view_record shows the line numbers."
        + REFUSAL_ADVICE,
    ),
    edit_with=insert_lines,
    page=Page(Place.TEXT),
)
