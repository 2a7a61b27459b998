"""create: a new record of any surface, at version 1."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from django.db import transaction

from stores.engine import policy, validation
from stores.engine.actors import Actor
from stores.engine.commit import create
from stores.engine.fields import clean_values, subject_of
from stores.engine.results import WriteResult
from stores.errors import Invalid, NotFound
from stores.models import Agent, Memory
from stores.opnames import OpName
from stores.ops.base import Op, Rest, Target, ToolSpec
from stores.ops.fields import creatable


@dataclass(frozen=True)
class Create(Op):
    def run(
        self, *, surface_key: str, agent: Agent, actor: Actor, values: dict[str, Any]
    ) -> WriteResult:
        """Create a record of any surface at version 1."""
        spec = self.spec_for(surface_key)
        if not actor.can_see(agent):
            raise NotFound(f"No agent {agent.name!r}.")
        if isinstance(values.get("subject"), str):
            values = {**values, "subject": subject_of(agent, values["subject"])}
        cleaned = clean_values(spec, values, spec.create_fields)
        clamped = False
        if "importance" in values:
            clamped = validation.clamp_importance(values["importance"])[1]
        if spec.store_policy:
            subject = cleaned.get("subject")
            if subject is not None and subject.agent_id != agent.pk:
                raise Invalid("subject belongs to another agent.")
            store = cleaned.setdefault("store", Memory.Store.WORKING)
            policy.check_agent(agent, actor=actor, op=self.name, store=store, subject=subject)
        else:
            policy.check_agent(agent, actor=actor, op=self.name)
        with transaction.atomic():
            result = create(spec, agent=agent, actor=actor, values=cleaned)
        if clamped:
            result.details["clamped"] = True
        return result


OP = Create(
    OpName.CREATE,
    "Create a record at version 1.",
    takes_surface=True,
    target=Target.SURFACE,
    fields=creatable,
    gather="values",
    rest=Rest.CREATE,
    tool=ToolSpec(
        "create_record",
        "Create a new record: a memory (content), a working-memory entry (key, value), a "
        "skill (name, content), a task (name, schedule, directive) or the rules document. "
        "Look first (recall_memories) whether one already says it: correct that one "
        "instead of adding a duplicate.",
    ),
)
