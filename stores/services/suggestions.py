"""Suggestions: finding suspect pairs of memories, and settling them through the engine.

The pass (`suggest_for_memory` after a write, `suggest_for_agent` over a whole agent) reads
memories and writes only suggestions: it never writes a record, so it can never overwrite an
edit. Which pair is a duplicate or a conflict is the pure rule of `stores.editing.likeness`,
and, when one is set, a model's (`stores.services.judge`, which falls back to the rule).
A suggestion pins each record at the version and text it was found at; a record that moves
since makes the suggestion stale, and accepting it then is refused as a conflict.

Settling (`suggestion_accept`, `suggestion_dismiss`) writes through the ops like every other
write: a merge, an invalidation superseded by the kept memory, a replacement of its text.
Code that knows of a pair from elsewhere (an import's `contradicts` relation) records it with
`suggestion_create`. A suggestion found, proposed, accepted or dismissed is a change in its
agent's feed (`suggestion.created`, `.accepted`, `.dismissed`), written in the transaction
that changed it, after the revisions an accept wrote, and sent to the agent's webhooks.
"""

from __future__ import annotations

import hashlib
from collections import Counter
from collections.abc import Iterable, Sequence
from typing import Any

from django.db import connection, transaction
from django.utils import timezone

from stores.dbops import lock_feed
from stores.editing import Status
from stores.editing.likeness import Likeness, compare, read
from stores.errors import Conflict, Forbidden, Invalid, NoChangeError, NotFound
from stores.models import (
    Agent,
    Change,
    Channel,
    Memory,
    SuggestedRecord,
    Suggestion,
    text_fingerprint,
)
from stores.ops.memory import invalidate, merge
from stores.ops.records import replace
from stores.selectors import suggestions as found
from stores.services import webhooks
from stores.services.actors import Actor
from stores.services.engine import returns_result
from stores.services.judge import Judge, Pair
from stores.services.results import WriteResult
from stores.surfaces import MEMORY

# Who the pass is, in a suggestion's `found_by`.
PASS = "pass:suggestions"
# At most this many memories in one suggestion (a proposed merge of many).
MAX_RECORDS = merge.MAX_MERGED + 1


def _fingerprint(memories: Iterable[Memory]) -> str:
    """The records and their texts as one digest: the same pair with the same texts, in any
    order, has one fingerprint."""
    parts = sorted(f"{memory.pk}:{text_fingerprint(memory.content)}" for memory in memories)
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


def suggestion_create(
    *,
    agent: Agent,
    kind: str,
    memories: Sequence[Memory],
    reason: str,
    found_by: str = PASS,
    channel: str = Channel.TASK,
    score: float = 0.0,
    proposal: dict[str, Any] | None = None,
) -> Suggestion | None:
    """Record a suggestion about `memories` (two or more of `agent`'s, as they are now).

    None when the same memories with the same texts were suggested before, whatever became of
    it (open, accepted, dismissed): a dismissed pair is never suggested again while both texts
    stay as they were.
    """
    if kind not in Suggestion.Kind.values:
        raise Invalid(f"kind must be one of {', '.join(Suggestion.Kind.values)}.")
    distinct = {memory.pk: memory for memory in memories}
    if len(distinct) < 2:
        raise Invalid("A suggestion is about two or more different memories.")
    if len(distinct) > MAX_RECORDS:
        raise Invalid(f"A suggestion holds at most {MAX_RECORDS} memories.")
    if any(memory.agent_id != agent.pk for memory in distinct.values()):
        raise NotFound("Every memory of a suggestion must be one of this agent's.")
    fingerprint = _fingerprint(distinct.values())
    if Suggestion.objects.filter(agent=agent, fingerprint=fingerprint).exists():
        return None
    with transaction.atomic():
        suggestion = Suggestion.objects.create(
            agent=agent,
            kind=kind,
            score=round(float(score), 3),
            reason=reason[:500],
            proposal=proposal or {},
            found_by=found_by,
            fingerprint=fingerprint,
        )
        SuggestedRecord.objects.bulk_create(
            SuggestedRecord(
                suggestion=suggestion,
                memory_id=memory.pk,
                version=memory.version,
                text_hash=text_fingerprint(memory.content),
            )
            for memory in distinct.values()
        )
        _announce(suggestion, channel)
    return suggestion


def _announce(suggestion: Suggestion, channel: str) -> None:
    """The suggestion's new status as a change in its agent's feed, in the transaction that
    set it: after the revisions that transaction wrote, before any later commit of the agent.
    Its webhooks hear of it once that commits."""
    lock_feed(connection, [suggestion.agent_id])
    Change.objects.create(
        agent_id=suggestion.agent_id,
        kind=Change.Kind.SUGGESTION,
        suggestion=suggestion,
        suggestion_status=suggestion.status,
        channel=channel,
    )
    webhooks.after_commit(suggestion.agent_id)


# --- finding ---------------------------------------------------------------------------


class _Finder:
    """The pairs of one pass, each judged by the rule; with a model judge set
    (stores.services.judge), the pairs it wants are held and judged by it a batch at a time,
    and its verdict (else the rule's) is what the pass records."""

    def __init__(self) -> None:
        self.judge = Judge.configured()
        self.held: list[tuple[Agent, Memory, Memory, Pair]] = []
        self.counts: Counter[str] = Counter()

    def consider(self, memory: Memory, other: Memory, similarity: float | None) -> None:
        # The older first, so a reason reads as what changed: "'Paris' → 'Lyon'".
        first, second = sorted((memory, other), key=lambda m: m.pk)
        likeness = compare(first.content, second.content, similarity)
        if self.judge is not None:
            pair = Pair(first.content, second.content, likeness, similarity)
            if self.judge.wants(pair) and not self._held_or_suggested(first, second):
                self.held.append((memory.agent, first, second, pair))
                if len(self.held) >= self.judge.batch_size:
                    self._hear()
                return
        self._record(memory.agent, first, second, likeness)

    def finish(self) -> Counter[str]:
        """How many new suggestions of each kind, once the pairs held are judged."""
        self._hear()
        return self.counts

    def _held_or_suggested(self, first: Memory, second: Memory) -> bool:
        # A pair can come twice in a pass (same words and near): the judge hears it once.
        if any((a.pk, b.pk) == (first.pk, second.pk) for _, a, b, _ in self.held):
            return True
        return Suggestion.objects.filter(
            agent_id=first.agent_id, fingerprint=_fingerprint([first, second])
        ).exists()

    def _hear(self) -> None:
        held, self.held = self.held, []
        if self.judge is None or not held:
            return
        verdicts = self.judge.decide([pair for *_, pair in held])
        for (agent, first, second, _), likeness in zip(held, verdicts, strict=True):
            self._record(agent, first, second, likeness)

    def _record(
        self, agent: Agent, first: Memory, second: Memory, likeness: Likeness | None
    ) -> None:
        if likeness is None:
            return
        made = suggestion_create(
            agent=agent,
            kind=str(likeness.kind),
            memories=[first, second],
            reason=likeness.reason,
            score=likeness.score,
            # The older memory is kept by default: it has the history.
            proposal={"keep": first.pk},
        )
        if made is not None:
            self.counts[made.kind] += 1


def mark_stale(memory_ids: list[int]) -> int:
    """Open suggestions whose records moved since they were found become stale."""
    moved: list[int] = []
    versions = dict(Memory.objects.filter(pk__in=memory_ids).values_list("pk", "version"))
    for suggestion in found.open_touching(memory_ids).prefetch_related("records"):
        if any(
            versions.get(record.memory_id) != record.version
            for record in suggestion.records.all()
            if record.memory_id in memory_ids
        ):
            moved.append(suggestion.pk)
    return Suggestion.objects.filter(pk__in=moved, status=Suggestion.State.OPEN).update(
        status=Suggestion.State.STALE, settled_at=timezone.now(), settled_by=PASS
    )


def suggest_for_memory(memory_id: int) -> Counter[str]:
    """The pass after a write of one memory: stale marks, then its new suggestions."""
    mark_stale([memory_id])
    memory = found.comparable_memory(memory_id)
    if memory is None:
        return Counter()
    vector = found.vector_of(memory_id)
    candidates = found.candidates_of(memory, vector)
    others = found.memories_by_id([candidate.memory_id for candidate in candidates])
    finder = _Finder()
    for candidate in candidates:
        if (other := others.get(candidate.memory_id)) is not None:
            finder.consider(memory, other, candidate.similarity)
    return finder.finish()


def suggest_for_agent(agent: Agent) -> Counter[str]:
    """The whole-agent pass: every memory against its nearest neighbours, and every group of
    memories holding the same words. Returns how many new suggestions of each kind."""
    mark_stale(found.open_memory_ids(agent))
    finder = _Finder()
    by_words: dict[tuple[int | None, frozenset[str]], int] = {}
    for memory, vector in found.agent_memories(agent):
        words = (memory.subject_id, read(memory.content).canon)
        pairs: list[tuple[int, float | None]] = []
        if words[1] and (twin := by_words.setdefault(words, memory.pk)) != memory.pk:
            pairs.append((twin, None))
        # A memory not embedded yet is compared with those holding its words instead.
        pairs += [
            (candidate.memory_id, candidate.similarity)
            for candidate in found.candidates_of(memory, vector, lexical=vector is None)
            # Each pair once: from its later memory.
            if candidate.memory_id < memory.pk
        ]
        others = found.memories_by_id([pk for pk, _ in pairs])
        for pk, similarity in pairs:
            if (other := others.get(pk)) is not None:
                finder.consider(memory, other, similarity)
    return finder.finish()


def suggest_everywhere() -> Counter[str]:
    """The whole pass of every agent, and the stale marks of every open suggestion."""
    counts: Counter[str] = Counter()
    for agent in Agent.objects.order_by("pk"):
        counts += suggest_for_agent(agent)
    return counts


# --- settling --------------------------------------------------------------------------


def suggestion_of(agent: Agent, actor: Actor, suggestion_id: Any) -> Suggestion:
    """The agent's suggestion `suggestion_id` as `actor` may see it, or NotFound."""
    if not actor.can_see(agent):
        raise NotFound("No such suggestion for this agent.")
    try:
        return found.suggestions_of(agent).get(pk=int(suggestion_id))
    except (Suggestion.DoesNotExist, TypeError, ValueError):
        raise NotFound(f"No suggestion {suggestion_id} for this agent.") from None


def _check_may_settle(agent: Agent, actor: Actor) -> None:
    if not actor.can_write(agent):
        raise Forbidden("This caller may read but not settle this agent's suggestions.")
    if actor.is_agent and agent.review_mode == Agent.ReviewMode.ALL:
        raise Forbidden(
            "This agent's writes are reviewed by a person: a person settles its suggestions."
        )


def _check_open(suggestion: Suggestion, *, or_stale: bool = False) -> None:
    # A stale one goes on to the check of its records, which names the versions they moved to.
    settling = (
        {Suggestion.State.OPEN, Suggestion.State.STALE} if or_stale else {Suggestion.State.OPEN}
    )
    if suggestion.status not in settling:
        raise Conflict(
            f"Suggestion {suggestion.pk} is {suggestion.status}; only an open one is settled.",
            suggestion_status=suggestion.status,
        )


def _pinned(agent: Agent, suggestion: Suggestion) -> dict[int, Memory]:
    """The suggestion's memories under their row locks, each still as it was pinned; else
    a conflict with the current versions, and nothing written."""
    records = list(suggestion.records.all())
    memories = {
        memory.pk: memory
        for memory in Memory.objects.select_for_update()
        .filter(agent=agent, pk__in=[record.memory_id for record in records])
        .defer("embedding")
        .order_by("pk")
    }
    moved = [
        {
            "id": record.memory_id,
            "version": record.version,
            "current_version": getattr(memories.get(record.memory_id), "version", None),
        }
        for record in records
        if getattr(memories.get(record.memory_id), "version", None) != record.version
    ]
    if moved:
        raise Conflict(
            "A memory of this suggestion changed since it was found: read them again and "
            "settle on what they say now.",
            records=moved,
        )
    return memories


class _Preview(Exception):
    """Rolls back a dry run's writes, carrying their result out."""

    def __init__(self, result: WriteResult) -> None:
        self.result = result


def _accept(
    *,
    agent: Agent,
    actor: Actor,
    suggestion_id: Any,
    keep: Any = None,
    content: str | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Settle an open suggestion by keeping `keep` (a record id of it).

    A duplicate or a merge proposal merges the others into it (its merged `content`, if
    given). A conflict invalidates the others, superseded by it, after replacing its text
    with `content` if given. With `dry_run` every write is made and rolled back: the answer
    is what accepting would do.
    """
    suggestion = suggestion_of(agent, actor, suggestion_id)
    _check_may_settle(agent, actor)
    _check_open(suggestion, or_stale=True)
    keep = keep if keep not in (None, "") else suggestion.proposal.get("keep")
    ids = [record.memory_id for record in suggestion.records.all()]
    kept_id = ids[0] if keep is None else _kept_among(agent, keep, ids, "its memories")
    if content is None and suggestion.kind == Suggestion.Kind.MERGE:
        content = suggestion.proposal.get("content")
    try:
        with transaction.atomic():
            Suggestion.objects.select_for_update().filter(pk=suggestion.pk).first()
            memories = _pinned(agent, suggestion)
            others = [pk for pk in ids if pk != kept_id]
            result = _settle_writes(suggestion, agent, actor, memories[kept_id], others, content)
            if dry_run:
                raise _Preview(result)
            Suggestion.objects.filter(pk=suggestion.pk).update(
                status=Suggestion.State.ACCEPTED,
                settled_at=timezone.now(),
                settled_by=actor.label,
                revisions=result.details.get("revisions", []),
            )
            suggestion.status = Suggestion.State.ACCEPTED
            _announce(suggestion, actor.channel)
    except _Preview as preview:
        result = preview.result
        result.details["dry_run"] = True
    result.details["suggestion"] = suggestion.pk
    return result


def _settle_writes(
    suggestion: Suggestion,
    agent: Agent,
    actor: Actor,
    kept: Memory,
    others: list[int],
    content: str | None,
) -> WriteResult:
    written: list[int] = []
    if suggestion.kind != Suggestion.Kind.CONFLICT:
        result: WriteResult = merge.OP.run(
            agent=agent,
            actor=actor,
            ref=kept.pk,
            merge_from=others,
            content=content,
            expected_version=kept.version,
        )
        written = [result.revision or 0, *(m["revision"] for m in result.details["merged"])]
    else:
        replaced: WriteResult | None = None
        if content is not None and content != kept.content:
            replaced = replace.OP.run(
                surface_key=MEMORY.key,
                agent=agent,
                actor=actor,
                ref=kept.pk,
                text=content,
                allow_shorter=True,
                expected_version=kept.version,
            )
            written.append(replaced.revision or 0)
        for other in others:
            result = invalidate.OP.run(agent=agent, actor=actor, ref=other, replacement_ref=kept.pk)
            written.append(result.revision or 0)
        # The kept record's answer when its text changed, else the last one invalidated.
        result = replaced or result
    result.details["revisions"] = sorted(pk for pk in written if pk)
    return result


def _dismiss(*, agent: Agent, actor: Actor, suggestion_id: Any) -> WriteResult:
    """Dismiss an open suggestion: the pair is fine as it is, and is not suggested again
    while both texts stay as they were."""
    suggestion = suggestion_of(agent, actor, suggestion_id)
    _check_may_settle(agent, actor)
    _check_open(suggestion)
    with transaction.atomic():
        settled = Suggestion.objects.filter(pk=suggestion.pk, status=Suggestion.State.OPEN).update(
            status=Suggestion.State.DISMISSED, settled_at=timezone.now(), settled_by=actor.label
        )
        if not settled:
            raise Conflict(f"Suggestion {suggestion.pk} was settled at the same moment.")
        suggestion.status = Suggestion.State.DISMISSED
        _announce(suggestion, actor.channel)
    return WriteResult(
        status=Status.UPDATED,
        message="Dismissed: the memories stay as they are.",
        details={"suggestion": suggestion.pk},
    )


def _kept_among(agent: Agent, keep: Any, ids: list[int], among: str) -> int:
    """The memory `keep` names (an id or an alias), looked up among `ids`: one that is not
    there is not found, as a record no one can see is."""
    memory = found.memory_of(agent, keep)
    if memory is None or memory.pk not in ids:
        raise NotFound(f"keep names {keep}, which is not one of {among}: {ids}.")
    return memory.pk


def _propose(
    *,
    agent: Agent,
    actor: Actor,
    kind: str,
    records: Any,
    content: str | None = None,
    reason: str = "",
    keep: Any = None,
) -> WriteResult:
    """An actor's proposal (an agent's consolidation): recorded open, pinned to the versions
    the memories are at now, for a person (or the agent, where its review mode allows) to
    accept. Nothing of the memories is written."""
    if not actor.can_write(agent):
        raise Forbidden("This caller may read but not propose changes to this agent's memory.")
    refs = merge.merge_refs(records, most=MAX_RECORDS, field="records")
    memories: list[Memory] = []
    for ref in refs:
        memory = found.memory_of(agent, ref)
        if memory is None:
            raise NotFound(f"records names {ref}, which is not a memory of this agent.")
        if memory not in memories:
            memories.append(memory)
    if len(memories) < 2:
        raise NoChangeError(
            f"records name one memory ({memories[0].pk}): there is nothing to merge it with or "
            "set beside it. Name two or more different memories."
        )
    ids = [memory.pk for memory in memories]
    kept_id = ids[0] if keep in (None, "") else _kept_among(agent, keep, ids, "the records")
    proposal: dict[str, Any] = {"keep": kept_id}
    if content is not None:
        proposal["content"] = content
    suggestion = suggestion_create(
        agent=agent,
        kind=kind,
        memories=memories,
        reason=reason or f"proposed by {actor.label}",
        found_by=actor.label,
        channel=actor.channel,
        score=1.0,
        proposal=proposal,
    )
    if suggestion is None:
        raise Conflict("These memories, as they are now, were suggested before.")
    return WriteResult(
        status=Status.CREATED,
        message="Proposed: it waits for someone to accept it.",
        details={"suggestion": suggestion.pk},
    )


suggestion_accept = returns_result(_accept, name="suggestion_accept")
suggestion_dismiss = returns_result(_dismiss, name="suggestion_dismiss")
suggestion_propose = returns_result(_propose, name="suggestion_propose")
