"""set_ttl: the only op that moves `expires_at`: a TTL from now, an exact time, or never."""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from stores.engine import validation
from stores.engine.actors import Actor
from stores.engine.commit import Change
from stores.errors import Invalid, NoChangeError
from stores.models import Agent, VersionedRecord, WorkingMemoryEntry
from stores.opnames import OpName
from stores.ops.base import Page, Place, ToolSpec, WriteOp
from stores.ops.fields import TEN_YEARS
from stores.ops.params import Kind, Param
from stores.surfaces import SurfaceSpec


@dataclass(frozen=True)
class SetTtl(WriteOp):
    def prepare(
        self, spec: SurfaceSpec, arguments: dict[str, Any], agent: Agent, actor: Actor
    ) -> dict[str, Any]:
        ttl, expires_at = arguments.get("ttl"), arguments.get("expires_at")
        clear = arguments.get("clear", False)
        given = sum(1 for option in (ttl is not None, expires_at is not None, clear) if option)
        if given != 1:
            raise Invalid("Give exactly one of ttl (seconds from now), expires_at, or clear.")
        if ttl is not None:
            new_expiry: dt.datetime | None = timezone.now() + dt.timedelta(
                seconds=validation.ttl_seconds(ttl)
            )
        elif clear:
            new_expiry = None
        else:
            new_expiry = validation.moment(expires_at, "expires_at")
        return {"expires_at": new_expiry}

    def build(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], record: VersionedRecord
    ) -> Change:
        assert isinstance(record, WorkingMemoryEntry)
        new_expiry = arguments["expires_at"]
        # Checked once the entry is found: a missing one answers not_found whatever the time.
        if new_expiry is not None and new_expiry <= timezone.now():
            raise Invalid("expires_at is in the past; forget the entry instead.")
        if record.expires_at == new_expiry:
            raise NoChangeError("The entry already expires then.")
        return Change(
            op=self.name,
            values={"expires_at": new_expiry},
            details={"expires_at": new_expiry.isoformat() if new_expiry else None},
        )


OP = SetTtl(
    OpName.SET_TTL,
    "Change the expiry (ttl seconds, expires_at, or clear).",
    (
        Param(
            "ttl",
            Kind.INTEGER,
            "Seconds from now.",
            minimum=1,
            maximum=TEN_YEARS,
            label="Expire in (seconds)",
        ),
        Param("expires_at", Kind.MOMENT, "An exact time in the future."),
        Param("clear", Kind.BOOLEAN, "true: never expire.", default=False),
    ),
    surfaces=("working",),
    one_of=(("ttl",), ("expires_at",), ("clear",)),
    tool=ToolSpec(
        "set_working_memory_ttl",
        "Change when a working-memory entry expires: ttl seconds from now, an exact "
        "expires_at, or clear=true for never. Editing a value never extends its life; "
        "only this does.",
    ),
    page=Page(Place.PROPERTIES),
)
