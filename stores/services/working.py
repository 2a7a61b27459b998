"""Ops only working memory has: its lifetime."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.utils import timezone

from stores.errors import Invalid, NoChangeError
from stores.models import Agent, VersionedRecord, WorkingMemoryEntry
from stores.services import validation
from stores.services.actors import Actor
from stores.services.engine import Change, RecordRef, returns_result, write
from stores.services.results import WriteResult
from stores.surfaces import WORKING


@returns_result
def working_set_ttl(
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    ttl: Any = None,
    expires_at: Any = None,
    clear: bool = False,
    expected_version: int | None = None,
) -> WriteResult:
    """The only op that moves `expires_at`: a TTL from now, an exact time, or no expiry."""
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

    def build(record: VersionedRecord) -> Change:
        assert isinstance(record, WorkingMemoryEntry)
        # Checked once the entry is found: a missing one answers not_found whatever the time.
        if new_expiry is not None and new_expiry <= timezone.now():
            raise Invalid("expires_at is in the past; forget the entry instead.")
        if record.expires_at == new_expiry:
            raise NoChangeError("The entry already expires then.")
        return Change(
            op="set_ttl",
            values={"expires_at": new_expiry},
            details={"expires_at": new_expiry.isoformat() if new_expiry else None},
        )

    return write(
        WORKING,
        agent=agent,
        ref=ref,
        actor=actor,
        op="set_ttl",
        expected_version=expected_version,
        build=build,
    )
