"""edit: replace exact phrases in a text field; several edits apply all or nothing."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from stores.editing import PhraseEdit, apply_edits
from stores.engine import validation
from stores.engine.actors import Actor
from stores.engine.checks import text_limit
from stores.engine.commit import Change
from stores.engine.fields import text_field_of
from stores.errors import Invalid
from stores.models import Agent, VersionedRecord
from stores.opnames import OpName
from stores.ops.base import REFUSAL_ADVICE, Page, Place, TextOp, ToolSpec
from stores.ops.fields import TEXT_FIELD
from stores.ops.params import PHRASE_ITEM, Kind, Param
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class Edit(TextOp):
    """Without `expected_version` the exact match is the precondition: it is checked against
    the current text under a row lock. `expected_replacements` (per edit in `edits`) says how
    many times the phrase occurs: another count is refused as ambiguous with the real one, and
    more than 1 replaces them all. With `dry_run`, every check runs and the would-be result
    (diff, new text, replacements) comes back; nothing is written."""

    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        text_field = text_field_of(spec, arguments.get("field"))
        edits: list[PhraseEdit] | None = arguments.get("edits")
        if edits is None:
            old_string, new_string = arguments.get("old_string"), arguments.get("new_string")
            if old_string is None or new_string is None:
                raise Invalid("A phrase edit needs old_string and new_string.")
            edits = [
                PhraseEdit(
                    old_string,
                    new_string,
                    arguments.get("replace_all", False),
                    arguments.get("expected_replacements"),
                )
            ]
        for edit in edits:
            validation.text(edit.old_string, "old_string")
            validation.text(edit.new_string, "new_string")
        edits = [
            edit
            if isinstance(edit.replace_all, bool)
            else replace(edit, replace_all=bool(edit.replace_all))
            for edit in edits
        ]
        return {"text_field": text_field, "edits": edits}

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        text_field = arguments["text_field"]
        applied = apply_edits(
            getattr(record, text_field), arguments["edits"], max_length=text_limit(spec)
        )
        return Change(
            op=self.name,
            values={text_field: applied.text},
            text_field=text_field,
            details={"replacements": applied.replacements, "lines": list(applied.lines)},
        )


OP = Edit(
    OpName.EDIT,
    "Phrase edit: replace an exact phrase (or a batch of them, all or nothing).",
    (
        *(replace(param, required=False, min_length=None) for param in PHRASE_ITEM),
        Param(
            "edits",
            Kind.EDITS,
            "Several phrase edits applied in order, all or nothing (instead of "
            "old_string/new_string).",
        ),
        TEXT_FIELD,
    ),
    takes_surface=True,
    one_of=(("old_string", "new_string"), ("edits",)),
    tool=ToolSpec(
        "edit_record",
        "Change part of a record's text by replacing an exact phrase: the preferred way "
        "to correct a memory, a working-memory value, a skill, a task directive or the "
        "rules. Copy old_string from a full read; the rest of the text stays byte for "
        "byte. Several edits in `edits` apply all or nothing." + REFUSAL_ADVICE,
    ),
    page=Page(Place.TEXT),
)
