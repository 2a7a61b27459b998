"""invalidate: mark a memory superseded, optionally by another memory of the same agent."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction
from django.utils import timezone

from stores.editing import Status
from stores.engine.actors import Actor
from stores.engine.commit import Change
from stores.engine.lookup import find_record
from stores.engine.results import WriteResult
from stores.errors import Conflict, NoChangeError, NotFound
from stores.models import Agent, Memory, VersionedRecord
from stores.opnames import OpName
from stores.ops.base import Page, Place, ToolSpec, WriteOp
from stores.ops.params import Kind, Param
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class Invalidate(WriteOp):
    def run(self, **arguments: Any) -> WriteResult:
        # The replacement is found in the write's own transaction.
        with transaction.atomic():
            return super().run(**arguments)

    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        replacement_ref = arguments.get("replacement_ref")
        if replacement_ref in (None, ""):
            return {"replacement": None}
        try:
            replacement = find_record(spec, agent=agent, ref=replacement_ref, actor=actor)
        except NotFound:
            raise NotFound(
                f"replacement_id {replacement_ref} is not a memory of this agent.",
            ) from None
        return {"replacement": replacement}

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        assert isinstance(record, Memory)
        replacement = arguments["replacement"]
        if replacement is not None and replacement.pk == record.pk:
            # The two ids of the request name one memory: they contradict each other.
            raise Conflict("A memory cannot supersede itself: replacement_id names it.")
        replacement_id = replacement.pk if replacement is not None else None
        if record.invalidated_at is not None and record.superseded_by_id == replacement_id:
            raise NoChangeError("The memory is already invalidated that way.")
        details = {"replacement_id": replacement_id} if replacement_id else {}
        return Change(
            op=self.name,
            values={"invalidated_at": timezone.now(), "superseded_by_id": replacement_id},
            status=Status.INVALIDATED,
            details=details,
        )


OP = Invalidate(
    OpName.INVALIDATE,
    "Mark superseded, optionally by another memory.",
    (
        Param(
            "replacement_id",
            Kind.REF,
            "The id (or alias) of the memory that replaces this one.",
            argument="replacement_ref",
        ),
    ),
    surfaces=("memory",),
    bulk=True,
    tool=ToolSpec(
        "invalidate_memory",
        "Mark a long-term memory as no longer true (superseded) while keeping it as "
        "history; optionally name the memory that replaces it. Prefer this to "
        "forgetting when the old memory still tells something about the past.",
    ),
    page=Page(Place.PROPERTIES),
)
