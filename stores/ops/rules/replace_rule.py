"""replace_rule: one rule rewritten in place, keeping its bullet."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from stores.editing import Edited
from stores.editing import rules as rule_text
from stores.ops.base import DocumentOp, Target, ToolSpec
from stores.ops.fields import RULE
from stores.ops.names import OpName


@dataclass(frozen=True)
class ReplaceRule(DocumentOp):
    def edit(self, body: str, arguments: Mapping[str, Any], max_length: int) -> str | Edited:
        return rule_text.replace_rule(
            body, arguments["rule"], arguments["new_rule"], max_length=max_length
        )


OP = ReplaceRule(
    OpName.REPLACE_RULE,
    "Rewrite one rule in place.",
    "rules_replace",
    (RULE, replace(RULE, name="new_rule", description="The rule's new text.")),
    surfaces=("rules",),
    target=Target.DOCUMENT,
    previews=True,
    tool=ToolSpec(
        "replace_rule",
        "Rewrite one behavioural rule in place (its bullet and position stay); every "
        "other line of the rules document stays byte for byte.",
    ),
)
