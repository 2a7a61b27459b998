"""Take back a conversation: every write it made, each undone by a write of its own.

Not an op of its own: an op changes one record, and every door offers it on a surface's
records. A take-back walks what one conversation wrote across all of an agent's records and
applies the ops that already exist to each: a record the conversation created is forgotten
(an episodic memory, which may only be invalidated, is invalidated), a change it made is
undone with `undo` (its text and the fields it set, later changes of others kept), and a
record it deleted is restored by a revert to before its deletion. Each of those
writes is a revision like any other, carrying the conversation it took back
(`Source.takeback`), so the history reads as what happened and a second take-back finds
nothing left to do.

One record at a time, newest first: a record whose changes cannot all be taken back (a later
edit by someone else overlaps one) answers that refusal and is left exactly as it was. A record
the conversation created or deleted that later writes of other sources (another conversation,
a person, a write naming no source) changed is not forgotten or brought back over them: it
answers `conflict`, naming who changed it, unless the caller chose to take it back anyway.
Those later writes are looked up inside the transaction, once the records are locked, so a
writer that raced the take-back is either seen or waits for it.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Iterable
from contextlib import nullcontext
from dataclasses import dataclass, field, replace
from typing import Any

from django.db import transaction
from django.db.models import BooleanField, ExpressionWrapper, F, Q

from stores import metrics
from stores.editing import Status, TextEditError
from stores.engine.actors import Actor
from stores.engine.lookup import records_locked
from stores.engine.results import WriteResult
from stores.engine.sources import Source, naming_conversation, parse_source
from stores.errors import ApplicationError, Conflict, Forbidden, Invalid, NotFound
from stores.models import Agent, Memory, Revision, VersionedRecord
from stores.opnames import OpName
from stores.ops.catalog import CATALOG
from stores.ops.memory.merge import merge_revisions
from stores.surfaces import MEMORY, SURFACES

logger = logging.getLogger("memoryadmin.writes")

# The service's name in the write log and the metrics.
SERVICE = "conversation_takeback"
# A record is taken back or left as it was; these say it needed nothing (already gone, or
# already taken back) rather than that it was refused.
_NOTHING_LEFT = (Status.NOT_FOUND, Status.NO_CHANGE)
# What a person may do with a record left as it was: keep it as it stands, edit it by hand, or
# name it in `anyway` to take it back over the later writes.
CHOICES = ("keep", "edit", "anyway")
# How many records one take-back may be told to take back anyway.
MAX_ANYWAY = 1000
# How many later writes of others a conflict names.
_NAMED_LIMIT = 10

Record = tuple[str, int]


@dataclass(frozen=True)
class LaterWrite:
    """A write of another source after the conversation's first write of a record."""

    revision: int
    actor: str
    conversation: str
    # A merge into the record that kept its text: what it changed is that others were merged
    # into it, and removing the record brings those back, so it is in no removal's way.
    holds: bool = False

    @property
    def who(self) -> str:
        return (
            f"{self.actor} in conversation {self.conversation}"
            if self.conversation
            else (self.actor)
        )


@dataclass(frozen=True)
class RecordTakeback:
    """What taking back one record's writes did (or, in a dry run, would do)."""

    surface: str
    id: int
    op: str
    status: Status
    # The last revision the take-back wrote for the record (None in a dry run or a refusal).
    revision: int | None = None
    message: str = ""
    # Who wrote to the record after the conversation (a conflict names those in its way).
    changed_by: tuple[LaterWrite, ...] = ()

    @property
    def changed(self) -> bool:
        return self.status not in _NOTHING_LEFT and self.status.succeeded

    @property
    def refused(self) -> bool:
        return self.status not in _NOTHING_LEFT and not self.status.succeeded

    @property
    def why(self) -> str:
        """What was done to the record and why, or why not: never empty."""
        if self.message:
            return self.message
        if not self.changed:
            return "Nothing left to take back: already gone or already taken back."
        kept = f" Later writes of others kept ({_who(self.changed_by)})." if self.changed_by else ""
        done = {
            OpName.FORGET: "The conversation created it: forgotten.",
            OpName.INVALIDATE: "The conversation created it: invalidated (an episodic memory "
            "keeps its text).",
            OpName.REVERT: "The conversation deleted it: brought back as it stood before.",
        }.get(OpName(self.op), "The conversation's changes undone.")
        return done + kept

    @property
    def choices(self) -> tuple[str, ...]:
        """What the caller may choose for a record left as it was over later writes."""
        return CHOICES if self.status == Status.CONFLICT else ()

    def as_dict(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "surface": self.surface,
            "id": self.id,
            "op": self.op,
            "status": str(self.status),
            "revision": self.revision,
            "why": self.why,
            "changed_by": [
                {"revision": w.revision, "actor": w.actor, "conversation": w.conversation}
                for w in self.changed_by
            ],
        }
        if self.message:
            data["message"] = self.message
        if self.choices:
            data["choices"] = list(self.choices)
        return data


@dataclass(frozen=True)
class Takeback:
    """A take-back's answer: `count` records changed (would change, with `dry_run`)."""

    conversation: str
    dry_run: bool
    results: list[RecordTakeback] = field(default_factory=list)

    @property
    def count(self) -> int:
        return sum(1 for result in self.results if result.changed)

    @property
    def conflicts(self) -> int:
        """Records left as they were over later writes of others: a person may choose."""
        return sum(1 for result in self.results if result.choices)

    @property
    def status(self) -> Status:
        if self.count:
            return Status.UPDATED
        # Nothing changed and something was refused: the first refusal says why.
        refused = next((result for result in self.results if result.refused), None)
        return refused.status if refused is not None else Status.OK

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": str(self.status),
            "conversation": self.conversation,
            "dry_run": self.dry_run,
            "count": self.count,
            "results": [result.as_dict() for result in self.results],
        }


class _Refused(Exception):
    """One record's take-back stopped at a refusal: its earlier steps roll back."""

    def __init__(self, op: OpName, error: ApplicationError | TextEditError) -> None:
        super().__init__(error.message)
        self.op = op
        self.error = error


def conversation_takeback(
    *,
    agent: Agent,
    actor: Actor,
    conversation: str,
    dry_run: bool = False,
    anyway: Collection[str] = (),
) -> Takeback:
    """Take back every write `conversation` made to `agent`'s records, newest first.

    With `dry_run`, every write is made and checked as it would be, then rolled back: the
    answer says what would change, and nothing is written. Refusals of the whole (an agent
    the actor may not see or change, a conversation that wrote nothing here) are raised.
    `anyway` names records ("memory:12": surface key and id) to take back even over later
    writes of others: forgotten, brought back, or reverted to before the conversation's first
    change.
    """
    conversation = parse_source({"conversation": conversation}).conversation
    if not conversation:
        raise Invalid("Name the conversation to take back.", field="conversation")
    forced = _parse_records(anyway)
    if not actor.can_see(agent):
        raise NotFound(f"No conversation {conversation!r} wrote to this agent.")
    if not actor.can_write(agent):
        raise Forbidden(
            "This caller may read this agent but not change it: nothing was taken back."
        )
    written = _writes_of(agent, conversation)
    if not written:
        raise NotFound(f"No conversation {conversation!r} wrote to this agent.")
    taker = replace(actor, source=Source(conversation=conversation, takeback=True))
    by_record = _by_record(written)
    ids: dict[str, list[int]] = {}
    for surface_key, record_id in by_record:
        ids.setdefault(surface_key, []).append(record_id)
    results = []
    with transaction.atomic(), records_locked(agent, ids) as locked:
        # Read once the records are locked: a write that raced the take-back is seen here,
        # or waits for it to finish.
        taken_back = _taken_back(agent, conversation)
        others = _later_writes(agent, conversation, by_record)
        superseded = _superseded_by(agent, by_record)
        since = Revision.objects.order_by("-pk").values_list("pk", flat=True).first() or 0
        # Which records exist, each with its store, as the take-back begins.
        stores = {key: _store_of(record) for key, record in locked.records.items()}
        for (surface_key, record_id), revisions in by_record.items():
            key = (surface_key, record_id)
            mark = locked.mark()
            result, *restored = _take_back_record(
                agent,
                taker,
                _Target(
                    surface_key,
                    record_id,
                    stores.get(key),
                    others.get(key, ()),
                    tuple(superseded.get(record_id, ())) if surface_key == MEMORY.key else (),
                ),
                revisions,
                taken_back,
                forced=key in forced,
            )
            if result.revision is None:
                # Refused or nothing to do: whatever it wrote was rolled back.
                locked.rolled_back(mark)
            results += [result, *restored]
        results = _with_restored(agent, conversation, results, since)
        if dry_run:
            transaction.set_rollback(True)
            # The revisions it wrote are rolled back: none of them exists.
            results = [replace(result, revision=None) for result in results]
    answer = Takeback(conversation=conversation, dry_run=dry_run, results=results)
    if not dry_run:
        for result in answer.results:
            if result.changed or result.refused:
                metrics.count_write(
                    SERVICE, actor.channel, str(result.status), refused=result.refused
                )
    logger.info(
        "%s %s %s: %s records",
        "preview" if dry_run else "write",
        SERVICE,
        answer.status,
        answer.count,
        extra={
            "op": SERVICE,
            "status": str(answer.status),
            "agent": agent.name,
            "actor": actor.label,
            "channel": actor.channel,
            "dry_run": dry_run,
        },
    )
    return answer


def _superseded_by(agent: Agent, by_record: dict[Record, list[Revision]]) -> dict[int, list[int]]:
    """Per memory the conversation created, the memories superseded by it (kept over them,
    or merged into it): one query for all."""
    created = [
        record_id
        for (surface, record_id), revisions in by_record.items()
        if surface == MEMORY.key and any(revision.version_before == 0 for revision in revisions)
    ]
    superseded: dict[int, list[int]] = {}
    rows = Memory.objects.filter(agent=agent, superseded_by_id__in=created).order_by("pk")
    for pk, holder in rows.values_list("pk", "superseded_by_id"):
        superseded.setdefault(holder, []).append(pk)
    return superseded


def _parse_records(refs: Collection[str]) -> set[Record]:
    """The records `refs` name as "surface:id"; Invalid naming the first that names none."""
    if len(refs) > MAX_ANYWAY:
        raise Invalid(f"Name at most {MAX_ANYWAY} records to take back anyway.", field="anyway")
    records: set[Record] = set()
    for ref in refs:
        surface, _, number = str(ref).partition(":")
        if surface not in SURFACES or not (number.isascii() and number.isdecimal()):
            raise Invalid(
                f"{str(ref)[:40]!r} names no record: write the surface and the id, as "
                f'"memory:12" (surfaces: {", ".join(SURFACES)}).',
                field="anyway",
            )
        records.add((surface, int(number)))
    return records


def _later_writes(
    agent: Agent, conversation: str, by_record: dict[Record, list[Revision]]
) -> dict[Record, tuple[LaterWrite, ...]]:
    """Per record, the writes of other sources after the conversation's first write of it,
    oldest first: one query for all the records."""
    first = {key: min(r.pk for r in revisions) for key, revisions in by_record.items()}
    rows = (
        Revision.objects.filter(
            agent=agent,
            surface__in={surface for surface, _ in first},
            record_id__in={record_id for _, record_id in first},
            pk__gt=min(first.values()),
        )
        .exclude(naming_conversation("source_conversation", conversation))
        .annotate(
            holds=ExpressionWrapper(
                Q(op=OpName.MERGE, before_text=F("after_text")), output_field=BooleanField()
            )
        )
        .order_by("pk")
        .values_list("surface", "record_id", "pk", "actor", "source_conversation", "holds")
    )
    later: dict[Record, list[LaterWrite]] = {}
    for surface, record_id, pk, author, source, holds in rows:
        start = first.get((surface, record_id))
        if start is not None and pk > start:
            later.setdefault((surface, record_id), []).append(
                LaterWrite(pk, author, source, holds=bool(holds))
            )
    return {key: tuple(writes) for key, writes in later.items()}


def _with_restored(
    agent: Agent, conversation: str, results: list[RecordTakeback], since: int
) -> list[RecordTakeback]:
    """`results`, a record whose own steps had nothing left to do but which a take-back write
    of this run changed all the same (a merge's undo brings back every memory of the merge)
    answered with that write."""
    # A refusal stays one: its record was left as it was, whatever else a write did to it.
    idle = {(result.surface, result.id) for result in results if result.status in _NOTHING_LEFT}
    if not idle:
        return results
    restored: dict[tuple[str, int], tuple[int, str]] = {}
    for surface, record_id, pk, op in (
        Revision.objects.filter(
            naming_conversation("source_conversation", conversation),
            agent=agent,
            source_takeback=True,
            pk__gt=since,
        )
        .order_by("pk")
        .values_list("surface", "record_id", "pk", "op")
    ):
        if (surface, record_id) in idle:
            restored[(surface, record_id)] = (pk, op)
    return [
        replace(result, op=written[1], status=Status.UPDATED, revision=written[0], message="")
        if (written := restored.get((result.surface, result.id))) is not None
        else result
        for result in results
    ]


def _writes_of(agent: Agent, conversation: str) -> list[Revision]:
    """The conversation's own revisions of `agent`'s records, newest first, without texts."""
    return list(
        Revision.objects.filter(
            naming_conversation("source_conversation", conversation),
            agent=agent,
            source_takeback=False,
        )
        .only("surface", "record_id", "op", "version_before", "version_after")
        .order_by("-id")
    )


def _taken_back(agent: Agent, conversation: str) -> set[int]:
    """Which of the conversation's revisions were taken back already: by a take-back, or by
    anyone's undo (a revert may have gone back to the version a revision made, so only a
    take-back's revert counts)."""
    own = Revision.objects.filter(
        naming_conversation("source_conversation", conversation),
        agent=agent,
        source_takeback=False,
    ).values("pk")
    undone = Revision.objects.filter(agent=agent, reverted_revision__in=own).filter(
        Q(op=OpName.UNDO) | Q(source_takeback=True)
    )
    return {pk for pk in undone.values_list("reverted_revision", flat=True) if pk is not None}


def _by_record(written: Iterable[Revision]) -> dict[tuple[str, int], list[Revision]]:
    """The revisions per record, records in the order of their newest revision."""
    records: dict[tuple[str, int], list[Revision]] = {}
    for revision in written:
        records.setdefault((revision.surface, revision.record_id), []).append(revision)
    return records


def _store_of(record: VersionedRecord) -> str:
    """The record's store ("" on a surface without stores)."""
    return record.store if isinstance(record, Memory) else ""


@dataclass(frozen=True)
class _Target:
    """A record to take back: `store` None when it is gone; `others` the later writes of
    other sources."""

    surface: str
    id: int
    store: str | None
    others: tuple[LaterWrite, ...]
    # The memories superseded by it: brought back to life before it is removed.
    superseded: tuple[int, ...] = ()


def _take_back_record(
    agent: Agent,
    actor: Actor,
    target: _Target,
    revisions: list[Revision],
    taken_back: set[int],
    *,
    forced: bool,
) -> list[RecordTakeback]:
    """Take back one record's changes, all or none: a record the conversation deleted is
    brought back first, then its edits are undone. One it created or deleted that others
    wrote to since is left as it was (a conflict), unless `forced`; so is one whose changes
    later edits overlap, which `forced` reverts to before the conversation's first change.

    A memory it created that others were superseded by (a person kept it over theirs, or
    merged theirs into it) is removed only with those brought back first, so no fact is left
    with no live holder: the answer is its own result, then one per memory brought back."""
    surface_key, record_id, store = target.surface, target.id, target.store
    steps: list[tuple[OpName, Revision | None]]
    created = any(revision.version_before == 0 for revision in revisions)
    if created:
        op = _removal(store)
        steps = [(op, None)]
    else:
        steps = [(_reversal(r), r) for r in revisions if r.pk not in taken_back]
        op = steps[0][0] if steps else OpName.UNDO
    deleted_by_it = bool(steps) and _deleted(steps[0][1])
    if not steps or (store is None and not deleted_by_it):
        return [RecordTakeback(surface_key, record_id, op, Status.NO_CHANGE)]
    if created:
        in_the_way = tuple(w for w in target.others if not w.holds)
    else:
        # A deletion's revert brings back the record as it stood: writes after it are in its way.
        deletion = steps[0][1].pk if deleted_by_it and steps[0][1] else 0
        in_the_way = tuple(w for w in target.others if w.revision > deletion)
    if (created or deleted_by_it) and in_the_way and not forced:
        return [_over_others(replace(target, others=in_the_way), op, created=created)]
    restored: list[RecordTakeback] = []
    try:
        try:
            if created and target.superseded:
                with transaction.atomic():
                    # Read again: a memory of the list may have gone since (taken back too).
                    superseded = Memory.objects.filter(agent=agent, superseded_by_id=record_id)
                    restored = [
                        _bring_back(agent, actor, pk, target)
                        for pk in superseded.order_by("pk").values_list("pk", flat=True)
                    ]
                    last = _apply_all(agent, actor, target, steps)
            else:
                last = _apply_all(agent, actor, target, steps)
        except _Refused as refused:
            if not (forced and refused.error.status == Status.CONFLICT and not created):
                raise
            # Taken back anyway: the record goes back to before the conversation's first
            # change, later edits of others with it, as the caller chose.
            steps = [(OpName.REVERT, revisions[-1])]
            last = _apply_all(agent, actor, target, steps)
    except _Refused as refused:
        if refused.error.status in _NOTHING_LEFT:
            return [RecordTakeback(surface_key, record_id, refused.op, refused.error.status)]
        return [
            RecordTakeback(
                surface_key,
                record_id,
                refused.op,
                refused.error.status,
                message=_with_choices(refused.error.message, refused.error.status),
                changed_by=_named(target.others, refused.error),
            )
        ]
    for _, revision in steps:
        if revision is not None and revision.op == OpName.MERGE:
            # Its undo restored every record of the merge: their revisions of it are taken
            # back too.
            taken_back.update(r.pk for r in merge_revisions(agent, revision))
    own = RecordTakeback(
        surface_key, record_id, steps[-1][0], last.status, last.revision, changed_by=target.others
    )
    return [own, *restored]


def _bring_back(agent: Agent, actor: Actor, memory_id: int, holder: _Target) -> RecordTakeback:
    """Make a memory superseded by `holder` live again, by undoing the write that superseded
    it (a merge's undo brings back every memory of the merge)."""
    superseding = (
        Revision.objects.filter(
            agent=agent,
            surface=MEMORY.key,
            record_id=memory_id,
            after_state__superseded_by=holder.id,
        )
        # The write that set it, not a later one that kept it so.
        .exclude(before_state__superseded_by=holder.id)
        .only("op", "before_state", "after_state", "version_after")
        .order_by("-pk")
        .first()
    )
    if superseding is None:
        raise _Refused(
            OpName.UNDO,
            Conflict(
                f"Memory {memory_id} is superseded by memory {holder.id}, and no revision says "
                "how: bring it back by hand before taking this one back.",
                record=memory_id,
            ),
        )
    written = _apply(OpName.UNDO, agent, actor, MEMORY.key, memory_id, superseding)
    return RecordTakeback(
        MEMORY.key,
        memory_id,
        OpName.UNDO,
        written.status,
        written.revision,
        message=f"It was superseded by memory {holder.id}, which this take-back removes: "
        "live again, so the fact it holds keeps a live holder.",
    )


def _apply_all(
    agent: Agent, actor: Actor, target: _Target, steps: list[tuple[OpName, Revision | None]]
) -> WriteResult:
    """Apply `steps` in order, together or not at all; the last write's result."""
    last: WriteResult | None = None
    # Several changes of one record go back together or not at all; one is one write already.
    together = transaction.atomic() if len(steps) > 1 else nullcontext()
    with together:
        for step, revision in steps:
            last = _apply(step, agent, actor, target.surface, target.id, revision)
    assert last is not None
    return last


def _over_others(target: _Target, op: OpName, *, created: bool) -> RecordTakeback:
    """The conflict of a record the conversation created or deleted that others wrote since."""
    what = "created it" if created else "deleted it"
    undoing = "forgetting it" if created else "bringing it back as it stood"
    pks = ", ".join(str(w.revision) for w in target.others[:_NAMED_LIMIT])
    message = (
        f"The conversation {what}, and later writes by others changed it since "
        f"({_who(target.others)}; revision{'s' if len(target.others) > 1 else ''} {pks}): "
        f"{undoing} would lose them. It is left as it is."
    )
    return RecordTakeback(
        target.surface,
        target.id,
        op,
        Status.CONFLICT,
        message=_with_choices(message, Status.CONFLICT),
        changed_by=target.others,
    )


def _named(
    others: tuple[LaterWrite, ...], error: ApplicationError | TextEditError
) -> tuple[LaterWrite, ...]:
    """The later writes a refusal names (all the later writes of others when it names none)."""
    named = set(error.details.get("revisions") or ())
    return tuple(w for w in others if w.revision in named) or others


def _with_choices(message: str, status: Status) -> str:
    if status != Status.CONFLICT:
        return message
    return (
        f"{message} Keep it as it stands, edit it by hand, or take it back anyway "
        "(over those later writes)."
    )


def _who(writes: Iterable[LaterWrite]) -> str:
    """The authors of `writes`, each once, in the order they wrote."""
    return ", ".join(dict.fromkeys(w.who for w in writes))


def _removal(store: str | None) -> OpName:
    """How a record the conversation created is taken back: forgotten, or invalidated where
    the store allows nothing else (an episodic memory)."""
    return OpName.INVALIDATE if store == Memory.Store.EPISODIC else OpName.FORGET


def _reversal(revision: Revision) -> OpName:
    """How a change is taken back: undone, its text and fields (later edits of others kept),
    or, for a deletion, the record brought back by a revert to before it."""
    return OpName.REVERT if _deleted(revision) else OpName.UNDO


def _deleted(revision: Revision | None) -> bool:
    return revision is not None and revision.op == OpName.FORGET


def _apply(
    step: OpName,
    agent: Agent,
    actor: Actor,
    surface_key: str,
    record_id: int,
    revision: Revision | None,
) -> WriteResult:
    """One write of the take-back, through the op's own path; a refusal raises `_Refused`."""
    op = CATALOG[step]
    where: dict[str, Any] = {"agent": agent, "actor": actor, "ref": record_id}
    try:
        if step is OpName.INVALIDATE:
            return op.run(**where)
        if step is OpName.FORGET:
            return op.run(surface_key=surface_key, **where)
        assert revision is not None
        if step is OpName.REVERT:
            return op.run(surface_key=surface_key, revision_id=revision.pk, to="before", **where)
        return op.run(surface_key=surface_key, revision_id=revision.pk, **where)
    except (ApplicationError, TextEditError) as error:
        raise _Refused(step, error) from None
