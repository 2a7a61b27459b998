"""replace_rule: one rule rewritten in place, keeping its bullet."""

from __future__ import annotations

from dataclasses import replace

from stores.editing import rules as rule_text
from stores.opnames import OpName
from stores.ops.base import DocumentOp, Page, Place, Target, ToolSpec
from stores.ops.fields import RULE

OP = DocumentOp(
    OpName.REPLACE_RULE,
    "Rewrite one rule in place.",
    (RULE, replace(RULE, name="new_rule", description="The rule's new text.")),
    surfaces=("rules",),
    target=Target.DOCUMENT,
    tool=ToolSpec(
        "replace_rule",
        "Rewrite one behavioural rule in place (its bullet and position stay); every "
        "other line of the rules document stays byte for byte.",
    ),
    edit_with=rule_text.replace_rule,
    # Each rule's form, drawn by add_rule's list of the rules.
    page=Page(Place.WITHIN, within=OpName.ADD_RULE),
)
