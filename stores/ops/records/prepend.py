"""prepend: text at the very start of a record's text."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stores.editing import prepend
from stores.models import VersionedRecord
from stores.ops.base import LineOp, ToolSpec
from stores.ops.fields import TEXT_FIELD
from stores.ops.names import OpName
from stores.ops.params import Kind, Param
from stores.services.engine import Change, text_limit
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class Prepend(LineOp):
    """`content` as whole lines before the first line of the text."""

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        text_field = arguments["text_field"]
        text = prepend(
            getattr(record, text_field), arguments["content"], max_length=text_limit(spec)
        )
        return Change(op=self.name, values={text_field: text}, text_field=text_field)


OP = Prepend(
    OpName.PREPEND,
    "Add text at the start of a record's text.",
    "record_prepend",
    (
        Param("content", Kind.TEXT, "The text to put first.", required=True, min_length=1),
        TEXT_FIELD,
    ),
    takes_surface=True,
    previews=True,
    tool=ToolSpec(
        "prepend_to_record",
        "Add text at the very start of a record's text; the rest stays as it is.",
    ),
)
