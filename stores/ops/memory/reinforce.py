"""reinforce: a real new observation, the only op that moves last_seen_at and the count."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from stores.engine.commit import Change
from stores.models import Memory, VersionedRecord
from stores.opnames import OpName
from stores.ops.base import Page, Place, ToolSpec, WriteOp
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class Reinforce(WriteOp):
    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        assert isinstance(record, Memory)
        count = record.reinforcement_count + 1
        return Change(
            op=self.name,
            values={"last_seen_at": timezone.now(), "reinforcement_count": count},
            details={"reinforcement_count": count},
        )


OP = Reinforce(
    OpName.REINFORCE,
    "A new observation: moves last_seen_at and the reinforcement count.",
    surfaces=("memory",),
    tool=ToolSpec(
        "reinforce_memory",
        "Record that a long-term memory was observed again (moves last_seen_at and the "
        "reinforcement count). Not for corrections: an edit is not a new observation.",
    ),
    page=Page(Place.PROPERTIES),
)
