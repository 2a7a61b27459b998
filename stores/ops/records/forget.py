"""forget: hard-delete a record; its last text stays in history and a revert restores it."""

from __future__ import annotations

from dataclasses import dataclass

from django.db import transaction

from stores.models import Agent
from stores.ops.base import Op, Rest, ToolSpec
from stores.ops.names import OpName
from stores.services import policy
from stores.services.actors import Actor
from stores.services.engine import RecordRef, check_expected_version, delete, find_record
from stores.services.results import WriteResult


@dataclass(frozen=True)
class Forget(Op):
    def run(
        self,
        *,
        surface_key: str,
        agent: Agent,
        ref: RecordRef,
        actor: Actor,
        expected_version: int | None = None,
    ) -> WriteResult:
        """Hard-delete a record. Its last text stays in history and can be restored by a
        revert."""
        spec = self.spec_for(surface_key)
        with transaction.atomic():
            record = find_record(spec, agent=agent, ref=ref, actor=actor, lock=True)
            policy.check(record, actor=actor, op=self.name)
            check_expected_version(record, expected_version)
            return delete(spec, record, actor=actor)


OP = Forget(
    OpName.FORGET,
    "Forget (hard delete; the revision keeps the last text).",
    "record_forget",
    takes_surface=True,
    rest=Rest.DESTROY,
    tool=ToolSpec(
        "forget_record",
        "Delete a record for good (its last text stays in the history and can be "
        "restored with revert_record). Only when it is wrong and worthless as history.",
    ),
)
