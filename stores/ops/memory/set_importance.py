"""set_importance: how important a memory is, clamped to 0..1 (never refused for range)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from stores.engine import validation
from stores.engine.actors import Actor
from stores.engine.commit import Change
from stores.errors import NoChangeError
from stores.models import Agent, Memory, VersionedRecord
from stores.opnames import OpName
from stores.ops.base import Page, Place, ToolSpec, WriteOp
from stores.ops.params import Kind, Param
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class SetImportance(WriteOp):
    """The result says when the value was clamped."""

    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        value, clamped = validation.clamp_importance(arguments["importance"])
        return {"importance": value, "clamped": clamped}

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        assert isinstance(record, Memory)
        value = arguments["importance"]
        if record.importance == value:
            raise NoChangeError(f"Importance is already {value}.")
        details: dict[str, Any] = {"importance": value, "previous_importance": record.importance}
        if arguments["clamped"]:
            details["clamped"] = True
        return Change(op=self.name, values={"importance": value}, details=details)


OP = SetImportance(
    OpName.SET_IMPORTANCE,
    "Set importance (clamped to 0..1).",
    (Param("importance", Kind.NUMBER, "0..1; values outside are clamped.", required=True),),
    surfaces=("memory",),
    bulk=True,
    tool=ToolSpec(
        "set_memory_importance",
        "Set how important a long-term memory is, from 0 to 1 (values outside are "
        "clamped and the answer says so).",
    ),
    page=Page(Place.PROPERTIES),
)
