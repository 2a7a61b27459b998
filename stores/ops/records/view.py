"""view: some lines of a record's text, numbered."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stores.editing import Status, TextEditError
from stores.engine.actors import Actor
from stores.engine.lookup import RecordRef, find_record
from stores.errors import refusal_of
from stores.models import Agent
from stores.opnames import OpName
from stores.ops.base import Op, ToolSpec
from stores.ops.fields import TEXT_FIELD
from stores.ops.params import Kind, Param
from stores.ops.records.read import document_ref
from stores.selectors.records import record_lines


@dataclass(frozen=True)
class View(Op):
    def run(
        self,
        *,
        surface_key: str,
        agent: Agent,
        actor: Actor,
        ref: RecordRef | None,
        field: str | None = None,
        start: int = 1,
        end: int | None = None,
    ) -> dict[str, Any]:
        spec = self.spec_for(surface_key)
        record = find_record(spec, agent=agent, ref=ref or document_ref(spec, agent), actor=actor)
        try:
            view = record_lines(record, field=field, start=start, end=end)
        except TextEditError as error:
            raise refusal_of(error) from error
        return {"status": str(Status.OK), **view}


OP = View(
    OpName.VIEW,
    "Lines of a record's text, numbered as Anthropic's memory tool numbers them.",
    (
        TEXT_FIELD,
        Param(
            "start",
            Kind.INTEGER,
            "First line to show, from 1.",
            default=1,
            minimum=1,
            maximum=10**7,
        ),
        Param(
            "end",
            Kind.INTEGER,
            "Last line to show (included); -1: the last line.",
            minimum=-1,
            maximum=10**7,
        ),
    ),
    writes=False,
    takes_surface=True,
    tool=ToolSpec(
        "view_record",
        "Read some lines of a record's text, each numbered (its number, a tab, the "
        "line), to find the line an insert_lines call needs. The whole record with its "
        "version is read_record's.",
    ),
)
