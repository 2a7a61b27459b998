"""forget: hard-delete a record; its last text stays in history and a revert restores it."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.db import transaction

from stores.engine import policy
from stores.engine.checks import check_expected_version
from stores.engine.deleting import delete
from stores.engine.results import WriteResult
from stores.opnames import OpName
from stores.ops.base import Page, Place, RecordCall, Rest, ToolSpec, WriteOp
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class Forget(WriteOp):
    def write_record(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], call: RecordCall
    ) -> WriteResult:
        """Hard-delete a record. Its last text stays in history and can be restored by a
        revert."""
        with transaction.atomic():
            record = call.find(spec, self.service)
            policy.check(record, actor=call.actor, op=self.name)
            check_expected_version(record, call.expected_version)
            return delete(spec, record, actor=call.actor)


OP = Forget(
    OpName.FORGET,
    "Forget (hard delete; the revision keeps the last text).",
    takes_surface=True,
    rest=Rest.DESTROY,
    tool=ToolSpec(
        "forget_record",
        "Delete a record for good (its last text stays in the history and can be "
        "restored with revert_record). Only when it is wrong and worthless as history.",
    ),
    page=Page(Place.LAST),
)
