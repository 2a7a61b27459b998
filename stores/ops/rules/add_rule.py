"""add_rule: one rule after the last rule (of a section), in the document's own bullet style.

As RockBot's rules store does: after the last bullet, so prose below the list stays
below it; a rule already there in another letter case is not added again (no_change). The
result's message and details (`lines`, `placed`) say where the rule went.
"""

from __future__ import annotations

from dataclasses import replace

from stores.editing import rules as rule_text
from stores.opnames import OpName
from stores.ops.base import DocumentOp, Page, Place, Target, ToolSpec
from stores.ops.fields import RULE
from stores.ops.params import Kind, Param

OP = DocumentOp(
    OpName.ADD_RULE,
    "Add one rule; the rest of the document stays byte for byte.",
    (
        replace(RULE, description="The rule to add."),
        Param("section", Kind.STRING, "Add under this heading.", max_length=500),
    ),
    surfaces=("rules",),
    target=Target.DOCUMENT,
    tool=ToolSpec(
        "add_rule",
        "Add one behavioural rule to the rules document, after the last rule (of "
        "`section`), in the document's own bullet style. Nothing else in the document "
        "changes. A rule already there, in any letter case, is left alone (no_change).",
        family="rockbot",
    ),
    edit_with=rule_text.add_rule,
    page=Page(Place.TEXT),
)
