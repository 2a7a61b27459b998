"""update: set fields (PATCH); a text field here is a full replacement with its rules."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stores.engine import validation
from stores.engine.actors import Actor
from stores.engine.commit import Change
from stores.engine.fields import check_replacement, clean_values
from stores.engine.wholetext import WholeText
from stores.errors import Invalid, NoChangeError
from stores.models import Agent, VersionedRecord
from stores.opnames import OpName
from stores.ops.base import Page, Place, Rest, ToolSpec, WriteOp
from stores.ops.fields import ALLOW_SHORTER, EXPECTED_SHA256, settable
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class Update(WriteOp):
    """`expected_sha256` and `allow_shorter` are replace's. A door's one hash proves the read of
    the one text it sets; a caller holding the whole record (an import) gives one per text
    field."""

    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        changes: dict[str, Any] = arguments.get("changes") or {}
        if not changes:
            raise Invalid("No fields to change.")
        cleaned = clean_values(spec, changes, settable(spec))
        return {
            "cleaned": cleaned,
            "expected_sha256": arguments.get("expected_sha256"),
            "allow_shorter": validation.flag(
                arguments.get("allow_shorter", False), "allow_shorter"
            ),
            "text_changes": [name for name in cleaned if name in spec.text_fields],
            "clamped": "importance" in changes
            and validation.clamp_importance(changes["importance"])[1],
        }

    def version_needed(self, arguments: Mapping[str, Any]) -> str:
        if not arguments["text_changes"]:
            return ""
        return (
            f"Replacing {', '.join(arguments['text_changes'])} needs the version you read "
            "(expected_version or If-Match)."
        )

    def word(self, arguments: Mapping[str, Any]) -> OpName:
        return self._word(arguments["cleaned"], arguments["text_changes"])

    @staticmethod
    def _word(changed: Mapping[str, Any], text_changes: list[str]) -> OpName:
        # What the change is, as the policy weighs it and the history names it.
        if text_changes:
            return OpName.REPLACE
        return OpName.SET_IMPORTANCE if set(changed) == {"importance"} else OpName.UPDATE

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        cleaned, text_changes = arguments["cleaned"], arguments["text_changes"]
        for name in text_changes:
            check_replacement(spec, record, name, cleaned[name])
        changed = {name: value for name, value in cleaned.items() if getattr(record, name) != value}
        if not changed:
            raise NoChangeError("Every field already has that value; nothing to change.")
        details: dict[str, Any] = {"fields": sorted(changed)}
        if arguments["clamped"]:
            details["clamped"] = True
        op = OpName.REPLACE if text_changes else OpName.UPDATE
        if set(changed) == {"importance"}:
            op = OpName.SET_IMPORTANCE
        return Change(
            op=op,
            values=changed,
            text_field=text_changes[0] if text_changes else None,
            details=details,
            # The write held the record to the version read before building this change.
            whole_text=WholeText(
                record.version, arguments["expected_sha256"], arguments["allow_shorter"]
            )
            if text_changes
            else None,
        )


OP = Update(
    OpName.UPDATE,
    "Set fields. A text field here is a full replacement: it needs expected_version or If-Match.",
    (EXPECTED_SHA256, ALLOW_SHORTER),
    takes_surface=True,
    fields=settable,
    gather="changes",
    rest=Rest.PARTIAL_UPDATE,
    tool=ToolSpec(
        "update_record",
        "Set some of a record's fields (category, tags, pinned, name, schedule, "
        "enabled, ...). A text field given here replaces the whole text, as "
        "replace_record does, and needs expected_version (and expected_sha256 when the "
        "text is longer than 500 characters).",
    ),
    page=Page(Place.PROPERTIES),
)
