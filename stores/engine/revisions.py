"""Writing a record's history: the revision of each write, built the same way whoever writes, and
the settling of one that awaits review.
"""

from __future__ import annotations

from typing import Any

from django.db.models import Q
from django.utils import timezone

from stores.engine import aftercommit
from stores.engine.actors import Actor
from stores.engine.sources import Source, naming_conversation
from stores.models import (
    Agent,
    QuarantinedConversation,
    Revision,
    VersionedRecord,
)
from stores.models.revisions import after_hash
from stores.opnames import OpName
from stores.runtime.prepared import insert_new
from stores.surfaces import SurfaceSpec


def build_revision(
    spec: SurfaceSpec,
    record: VersionedRecord,
    *,
    actor: Actor,
    op: OpName,
    text_field: str,
    version_before: int,
    before_text: str,
    after_text: str,
    before_state: dict[str, Any],
    after_state: dict[str, Any] | None = None,
    reverted_revision: int | None = None,
    held: bool = False,
) -> Revision:
    """The revision of one write that brought `record` to its current version, unsaved.

    Every writer builds its revisions here (the engine, restore, the bulk importer, which
    inserts them in batches), so who wrote, through which door, and whether a human must
    review it are recorded the same way whatever the path. `held`: the door's scan parked
    the write for review, whoever wrote it.
    """
    agent: Agent = record.agent
    source = actor.source or Source()
    needs_review = held or (
        actor.is_agent
        and (agent.review_mode == Agent.ReviewMode.ALL or held_for_review(agent, source))
    )
    return Revision(
        agent_id=record.agent_id,
        surface=spec.key,
        record_id=record.pk,
        version_before=version_before,
        version_after=record.version,
        op=op,
        field=text_field,
        actor=actor.label,
        actor_user=actor.user if actor.kind == "user" else None,
        actor_token=actor.token,
        channel=actor.channel,
        before_text=before_text,
        after_text=after_text,
        after_hash=after_hash(op, after_text),
        before_state=before_state,
        after_state=spec.snapshot(record) if after_state is None else after_state,
        review=Revision.Review.PENDING if needs_review else Revision.Review.NOT_NEEDED,
        reverted_revision=reverted_revision,
        **source.revision_columns(),
    )


def first_revision(
    spec: SurfaceSpec, record: VersionedRecord, *, actor: Actor, op: OpName, held: bool = False
) -> Revision:
    """The revision of a record's first version, unsaved: from nothing to its whole text.

    A create's and an import's new records start their history the same way.
    """
    text_field = spec.primary_text_field
    return build_revision(
        spec,
        record,
        actor=actor,
        op=op,
        text_field=text_field,
        version_before=0,
        before_text="",
        after_text=getattr(record, text_field),
        before_state={},
        held=held,
    )


def held_for_review(agent: Agent, source: Source) -> bool:
    """Whether `source`'s conversation is quarantined on `agent`: its writes wait for review.

    Any conversation the write names counts, the host's and one its arguments claimed, in any
    case; a write that names none is held when the writes without a source are (the hold of
    the empty name)."""
    # A take-back names the conversation it takes back; it is not that conversation's write.
    if source.takeback:
        return False
    named = source.conversations() or [""]
    matches = Q()
    for name in named:
        matches |= naming_conversation("conversation", name)
    return QuarantinedConversation.objects.filter(matches, agent_id=agent.pk).exists()


def settle_review(revision: Revision, verdict: str, actor: Actor) -> bool:
    """Settle a pending review as `verdict` (approved or reverted), by whom and when.

    A conditional update: of two people settling the same review at once, only one does;
    False for the other, and for a revision that awaited no review.
    """
    if revision.review != Revision.Review.PENDING:
        return False
    settled = {
        "review": verdict,
        "reviewed_by": actor.user if actor.kind == "user" else None,
        "reviewed_at": timezone.now(),
    }
    if not Revision.objects.filter(pk=revision.pk, review=Revision.Review.PENDING).update(
        **settled
    ):
        return False
    for name, value in settled.items():
        setattr(revision, name, value)
    return True


def record_revision(spec: SurfaceSpec, record: VersionedRecord, **write: Any) -> Revision:
    """Build and store the revision of one write (see `build_revision` for the arguments)."""
    return store_revision(build_revision(spec, record, **write), record)


def store_revision(revision: Revision, record: VersionedRecord) -> Revision:
    """Store a built revision of `record`'s write and tell the agent's webhooks of it."""
    insert_new(revision)
    # The agent as the caller loaded it (build_revision read it already).
    aftercommit.after_commit(revision.agent_id, agent=record.agent)
    return revision
