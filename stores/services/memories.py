"""Ops only long-term memory has: importance, reinforcement, invalidation."""

from __future__ import annotations

from typing import Any

from django.db import transaction
from django.utils import timezone

from stores.editing import Status
from stores.errors import Conflict, NoChangeError, NotFound
from stores.models import Agent, Memory, VersionedRecord
from stores.services import validation
from stores.services.actors import Actor
from stores.services.engine import Change, RecordRef, find_record, returns_result, write
from stores.services.results import WriteResult
from stores.surfaces import MEMORY


@returns_result
def memory_set_importance(
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    importance: Any,
    expected_version: int | None = None,
) -> WriteResult:
    """Set importance, clamped to 0..1 (never refused for range; the result says it was clamped)."""
    value, clamped = validation.clamp_importance(importance)

    def build(record: VersionedRecord) -> Change:
        assert isinstance(record, Memory)
        if record.importance == value:
            raise NoChangeError(f"Importance is already {value}.")
        details: dict[str, Any] = {"importance": value, "previous_importance": record.importance}
        if clamped:
            details["clamped"] = True
        return Change(op="set_importance", values={"importance": value}, details=details)

    return write(
        MEMORY,
        agent=agent,
        ref=ref,
        actor=actor,
        op="set_importance",
        expected_version=expected_version,
        build=build,
    )


@returns_result
def memory_reinforce(
    *, agent: Agent, ref: RecordRef, actor: Actor, expected_version: int | None = None
) -> WriteResult:
    """A real new observation: the only op that moves last_seen_at and the count."""

    def build(record: VersionedRecord) -> Change:
        assert isinstance(record, Memory)
        count = record.reinforcement_count + 1
        return Change(
            op="reinforce",
            values={"last_seen_at": timezone.now(), "reinforcement_count": count},
            details={"reinforcement_count": count},
        )

    return write(
        MEMORY,
        agent=agent,
        ref=ref,
        actor=actor,
        op="reinforce",
        expected_version=expected_version,
        build=build,
    )


@returns_result
def memory_invalidate(
    *,
    agent: Agent,
    ref: RecordRef,
    actor: Actor,
    replacement_ref: RecordRef | None = None,
    expected_version: int | None = None,
) -> WriteResult:
    """Mark a memory superseded (optionally by another memory of the same agent)."""
    with transaction.atomic():
        replacement = None
        if replacement_ref not in (None, ""):
            try:
                replacement = find_record(MEMORY, agent=agent, ref=replacement_ref, actor=actor)
            except NotFound:
                raise NotFound(
                    f"replacement_id {replacement_ref} is not a memory of this agent.",
                ) from None

        def build(record: VersionedRecord) -> Change:
            assert isinstance(record, Memory)
            if replacement is not None and replacement.pk == record.pk:
                # The two ids of the request name one memory: they contradict each other.
                raise Conflict("A memory cannot supersede itself: replacement_id names it.")
            replacement_id = replacement.pk if replacement is not None else None
            if record.invalidated_at is not None and record.superseded_by_id == replacement_id:
                raise NoChangeError("The memory is already invalidated that way.")
            details = {"replacement_id": replacement_id} if replacement_id else {}
            return Change(
                op="invalidate",
                values={"invalidated_at": timezone.now(), "superseded_by_id": replacement_id},
                status=Status.INVALIDATED,
                details=details,
            )

        return write(
            MEMORY,
            agent=agent,
            ref=ref,
            actor=actor,
            op="invalidate",
            expected_version=expected_version,
            build=build,
        )
