"""replace: a whole text field, with the version read; truncated previews are refused."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stores.engine import validation
from stores.engine.actors import Actor
from stores.engine.commit import Change
from stores.engine.fields import check_replacement, text_field_of
from stores.engine.wholetext import WholeText
from stores.models import Agent, VersionedRecord
from stores.opnames import OpName
from stores.ops.base import REFUSAL_ADVICE, Page, Place, TextOp, ToolSpec
from stores.ops.fields import ALLOW_SHORTER, EXPECTED_SHA256, TEXT_FIELD
from stores.ops.params import Kind, Param
from stores.surfaces import SURFACES, SurfaceSpec

OTHER_TEXT_NAMES = tuple(
    sorted({spec.primary_text_field for spec in SURFACES.values()} - {"content"})
)


@dataclass(frozen=True)
class Replace(TextOp):
    """A text longer than a preview is replaced only with `expected_sha256`, the SHA-256 of
    the current text as a full read gives it. A shorter text that looks cut from a preview of
    the current one is refused as suspected_truncation unless `allow_shorter` says the caller
    means to drop the rest. `dry_run` answers what the write would, writing nothing."""

    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        text_field = text_field_of(spec, arguments.get("field"))
        return {
            "text_field": text_field,
            "text": validation.text(arguments["text"], text_field),
            "expected_sha256": arguments.get("expected_sha256"),
            "allow_shorter": validation.flag(
                arguments.get("allow_shorter", False), "allow_shorter"
            ),
        }

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        text_field, text = arguments["text_field"], arguments["text"]
        check_replacement(spec, record, text_field, text)
        return Change(
            op=self.name,
            values={text_field: text},
            text_field=text_field,
            # The write held the record to the version read before building this change.
            whole_text=WholeText(
                record.version, arguments["expected_sha256"], arguments["allow_shorter"]
            ),
        )


OP = Replace(
    OpName.REPLACE,
    "Full replacement of a text field; needs expected_version or If-Match.",
    (
        # `content`, as create names a record's text; `text` is what it was called first, and
        # a surface whose text create names otherwise (a working entry's `value`) is replaced
        # under that name too.
        Param(
            "content",
            Kind.TEXT,
            "The complete new text, merged from a full read (never a preview).",
            required=True,
            argument="text",
            aliases=("text", *OTHER_TEXT_NAMES),
        ),
        TEXT_FIELD,
        EXPECTED_SHA256,
        ALLOW_SHORTER,
    ),
    takes_surface=True,
    needs_version=True,
    tool=ToolSpec(
        "replace_record",
        "Replace a record's whole text. Use only when most of the text changes; "
        "otherwise use edit_record. First read_record, merge your change into the FULL "
        "text you read, and send it with the version and the text's sha256 you read "
        "(expected_sha256; required when the text is longer than 500 characters). A recall "
        "preview is not the full text: a shorter replacement that looks cut from a preview "
        "is refused (suspected_truncation) unless allow_shorter is true." + REFUSAL_ADVICE,
    ),
    page=Page(Place.TEXT),
)
