"""read: one record in full, with its current version."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.lookup import RecordRef, find_record
from stores.errors import NotFound
from stores.models import Agent
from stores.opnames import OpName
from stores.ops.base import Op, Rest, ToolSpec
from stores.selectors.records import only_record_id, record_read
from stores.surfaces import SurfaceSpec


def document_ref(spec: SurfaceSpec, agent: Agent) -> int:
    """The agent's one record of `spec` (the rules document), for a door that must name it."""
    document_id = only_record_id(spec, agent)
    if document_id is None:
        raise NotFound(f"This agent has no {spec.label.lower()} document yet; add_rule starts one.")
    return document_id


@dataclass(frozen=True)
class Read(Op):
    def run(
        self, *, surface_key: str, agent: Agent, actor: Actor, ref: RecordRef | None
    ) -> dict[str, Any]:
        spec = self.spec_for(surface_key)
        if ref is None:
            if not spec.one_per_agent:
                raise NotFound(f"Give the id of the {spec.label.lower()} to read.")
            ref = document_ref(spec, agent)
        record = find_record(spec, agent=agent, ref=ref, actor=actor)
        return {"status": str(Status.OK), "record": record_read(record)}


OP = Read(
    OpName.READ,
    "The full record, with every field and its current version.",
    writes=False,
    takes_surface=True,
    rest=Rest.RETRIEVE,
    tool=ToolSpec(
        "read_record",
        "Read one record in full: its whole text, every field and its current version. "
        "Do this before replacing a text, and again after any refusal, before trying "
        "anything else.",
    ),
)
