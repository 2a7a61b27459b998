"""remove_rule: the one rule that reads as given, its bullet and continuation lines."""

from __future__ import annotations

from stores.editing import rules as rule_text
from stores.opnames import OpName
from stores.ops.base import DocumentOp, Page, Place, Target, ToolSpec
from stores.ops.fields import RULE

OP = DocumentOp(
    OpName.REMOVE_RULE,
    "Remove one rule.",
    (RULE,),
    surfaces=("rules",),
    target=Target.DOCUMENT,
    tool=ToolSpec(
        "remove_rule",
        "Remove the one behavioural rule that reads `rule` (as written in the "
        "document). Nothing else in the document changes.",
        family="rockbot",
    ),
    edit_with=rule_text.remove_rule,
    removes=True,
    page=Page(Place.WITHIN, within=OpName.ADD_RULE, button="Preview removal", danger=True),
)
