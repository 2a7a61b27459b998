"""Suggestions: finding suspect pairs of memories, and settling them through the engine.

The pass (`suggest_for_memory` after a write, `suggest_for_agent` over a whole agent) reads
memories and writes only suggestions: it never writes a record, so it can never overwrite an
edit. Which pair is a duplicate or a conflict is the pure rule of `stores.editing.likeness`;
a pair it leaves alone that its structure does not keep apart, the pair model reads from the
two embeddings (`stores.embeddings.pairs`); a verdict read from meaning alone stands only
where the pair stands out from the memories' other neighbours; and, when one is set, a
model judge rules on the pairs all are unsure of (`stores.services.judge`, which falls back
to their verdicts).
A suggestion pins each record at the version and text it was found at; a record that moves
since makes the suggestion stale, and accepting it then is refused as a conflict.

Settling (`suggestion_accept`, `suggestion_dismiss`) writes through the ops like every other
write: a merge, an invalidation superseded by the kept memory, a replacement of its text.
Code that knows of a pair from elsewhere (an import's `contradicts` relation) records it with
`suggestion_create`. A suggestion found, proposed, accepted, dismissed or marked stale is a
change in its agent's feed (`suggestion.created`, `.accepted`, `.dismissed`, `.stale`),
written in the transaction that changed it, after the revisions an accept wrote, and sent to
the agent's webhooks.
"""

from __future__ import annotations

import functools
import hashlib
from collections import Counter
from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.db import connection, transaction
from django.utils import timezone

from stores.dbops import lock_feed
from stores.editing import Status
from stores.editing.likeness import (
    Kind,
    Likeness,
    Reading,
    Thresholds,
    by_meaning,
    compare,
    kept_apart,
    may_be_alike,
    read,
)
from stores.embeddings.base import get_backend
from stores.embeddings.pairs import PairModel, PairModelError
from stores.embeddings.pairs import load as load_pair_model
from stores.engine import aftercommit, validation
from stores.engine.actors import Actor
from stores.engine.results import WriteResult, returns_result, would_be
from stores.engine.wholetext import WholeText, check_whole_text
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
from stores.services.judge import Judge, Pair
from stores.surfaces import MEMORY

# Who the pass is, in a suggestion's `found_by`.
PASS = "pass:suggestions"
# At most this many memories in one suggestion (a proposed merge of many).
MAX_RECORDS = merge.MAX_MERGED + 1
# Stale marks are written this many suggestions to a transaction.
STALE_BATCH = 500


# A pair as the pass judged it: older memory first, its verdict, its embeddings' similarity.
Verdict = tuple[Memory, Memory, Likeness | None, float | None]


def _fingerprint(memories: Iterable[Memory]) -> str:
    """The records and their texts as one digest: the same pair with the same texts, in any
    order, has one fingerprint."""
    parts = sorted(f"{memory.pk}:{text_fingerprint(memory.content)}" for memory in memories)
    return hashlib.sha256("|".join(parts).encode()).hexdigest()


@dataclass(frozen=True)
class Found:
    """A suggestion to record: its kind, its memories as they are now, why, how sure, and
    what settling it would do."""

    kind: str
    memories: tuple[Memory, ...]
    reason: str
    score: float
    proposal: dict[str, Any]


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
    find = Found(kind, tuple(distinct.values()), reason, score, proposal or {})
    made = _record(agent, [find], found_by=found_by, channel=channel)
    return made[0] if made else None


def _record(
    agent: Agent, finds: Iterable[Found], *, found_by: str = PASS, channel: str = Channel.TASK
) -> list[Suggestion]:
    """The suggestions of `finds` not made before (by their fingerprints), written and
    announced in one transaction: one statement per table, however many there are."""
    new: dict[str, Found] = {}
    for find in finds:
        new.setdefault(_fingerprint(find.memories), find)  # a pair found twice: once
    if new:
        known = Suggestion.objects.filter(agent=agent, fingerprint__in=list(new))
        for fingerprint in known.values_list("fingerprint", flat=True):
            new.pop(fingerprint, None)
    if not new:
        return []
    with transaction.atomic():
        suggestions = Suggestion.objects.bulk_create(
            Suggestion(
                agent=agent,
                kind=find.kind,
                score=round(float(find.score), 3),
                reason=find.reason[:500],
                proposal=find.proposal,
                found_by=found_by,
                fingerprint=fingerprint,
            )
            for fingerprint, find in new.items()
        )
        SuggestedRecord.objects.bulk_create(
            SuggestedRecord(
                suggestion=suggestion,
                memory_id=memory.pk,
                version=memory.version,
                text_hash=text_fingerprint(memory.content),
            )
            for suggestion, find in zip(suggestions, new.values(), strict=True)
            for memory in find.memories
        )
        _announce(suggestions, channel)
    return suggestions


def _announce(suggestions: Sequence[Suggestion], channel: str) -> None:
    """Each suggestion's new status as a change in its agent's feed, in the transaction that
    set it: after the revisions that transaction wrote, before any later commit of the agent.
    Their webhooks hear of it once that commits."""
    agents = sorted({suggestion.agent_id for suggestion in suggestions})
    lock_feed(connection, agents)
    Change.objects.bulk_create(
        Change(
            agent_id=suggestion.agent_id,
            kind=Change.Kind.SUGGESTION,
            suggestion=suggestion,
            suggestion_status=suggestion.status,
            channel=channel,
        )
        for suggestion in suggestions
    )
    for agent_id in agents:
        aftercommit.after_commit(agent_id)


# --- finding ---------------------------------------------------------------------------


def _reading(readings: dict[int, Reading], memory: Memory) -> Reading:
    """The memory's text as the rule reads it, read once however many pairs it is in."""
    known = readings.get(memory.pk)
    if known is None:
        known = readings[memory.pk] = read(memory.content)
    return known


def _similarity_entry() -> dict[str, Any]:
    """Settings SUGGEST_SIMILARITY for the configured embedding model: its own entry, else
    "*"."""
    table = settings.MEMORYADMIN["SUGGEST_SIMILARITY"]
    return table.get(get_backend().model_name, table["*"])


def thresholds() -> Thresholds:
    """The similarities the rule trusts for the configured embedding model."""
    entry = _similarity_entry()
    return Thresholds(
        negation=float(entry["NEGATION"]),
        value=float(entry["VALUE"]),
        reworded=float(entry["REWORDED"]),
        same=float(entry["SAME"]),
    )


def pair_model() -> PairModel | None:
    """The pair model set for the configured embedding model (SUGGEST_SIMILARITY's
    PAIR_MODEL: its own entry, else "*"), None when none is."""
    path = _similarity_entry().get("PAIR_MODEL", "")
    return _pair_model_at(path, get_backend().model_name) if path else None


@dataclass(frozen=True)
class Standout:
    """How much more alike than its neighbours a pair must be for an unsure verdict to stand:
    a duplicate the rule reads in words reworded throughout, nothing in them differing, and
    any other (the pair model's, or the rule's trusting the embeddings for what differs)."""

    reworded: float
    other: float

    def of(self, likeness: Likeness) -> float:
        reworded = likeness.kind is Kind.DUPLICATE and not likeness.by_model
        return self.reworded if reworded else self.other


def standout() -> Standout | None:
    """SUGGEST_SIMILARITY's STANDOUT_REWORDED (as STANDOUT unless given) and STANDOUT for the
    configured embedding model; None when it has no STANDOUT: every verdict stands."""
    entry = _similarity_entry()
    margin = entry.get("STANDOUT")
    if margin is None:
        return None
    return Standout(float(entry.get("STANDOUT_REWORDED", margin)), float(margin))


@functools.lru_cache(maxsize=4)
def _pair_model_at(path: str, embedding_model: str) -> PairModel:
    try:
        model = load_pair_model(Path(path))
    except PairModelError as error:
        raise ImproperlyConfigured(f"SUGGEST_SIMILARITY's PAIR_MODEL: {error}") from error
    if model.embedding_model != embedding_model:
        raise ImproperlyConfigured(
            f"SUGGEST_SIMILARITY's PAIR_MODEL {path} was fitted for {model.embedding_model}, "
            f"not {embedding_model}: its weights read no other model's vectors (fit one with "
            "manage.py fit_pair_model)"
        )
    return model


def _findings(
    agent: Agent,
    pairs: Iterable[tuple[Memory, Memory, float | None]],
    readings: dict[int, Reading],
    judge: Judge | None,
    neighbourhoods: dict[int, list[found.Candidate]],
) -> list[Found]:
    """What the pass finds among `pairs` (with their embeddings' similarity when known): the
    rule's verdicts, the pair model's (`pair_model`) on the alike pairs the rule leaves alone
    and does not keep apart, those read from meaning alone kept where the pair stands out
    from its neighbours (`_standing_out`; `neighbourhoods`: the nearest neighbours known of
    some memories), and, with a model judge (stores.services.judge), its verdicts on the
    pairs all are unsure of, the others' standing where it gives none."""
    trusted = thresholds()
    model = pair_model()
    # A pair this alike goes to the full rule whatever its words: its meaning may decide.
    near = min(
        trusted.negation, trusted.value, trusted.same, judge.min_similarity if judge else 1.0
    )
    verdicts: list[Verdict] = []
    meant: list[tuple[int, Memory, Memory, float]] = []  # for the pair model, where in verdicts
    for memory, other, similarity in pairs:
        # The older first, so a reason reads as what changed: "'Paris' → 'Lyon'".
        first, second = sorted((memory, other), key=lambda m: m.pk)
        read_first, read_second = _reading(readings, first), _reading(readings, second)
        close = similarity is not None and similarity >= near
        if not close and not may_be_alike(read_first, read_second):
            continue  # nothing in common: what the full rule would say, at a fraction of it
        likeness = compare(
            first.content, second.content, similarity, (read_first, read_second), trusted
        )
        if (
            likeness is None
            and model is not None
            and similarity is not None
            and similarity >= trusted.negation
            and not kept_apart(read_first, read_second)
        ):
            meant.append((len(verdicts), first, second, similarity))
        verdicts.append((first, second, likeness, similarity))
    if model is not None and meant:
        for (index, first, second, similarity), likeness in zip(
            meant, _read_by_model(model, meant, readings), strict=True
        ):
            verdicts[index] = (first, second, likeness, similarity)
    margin = standout()
    if margin is not None:
        verdicts = _standing_out(agent, verdicts, neighbourhoods, margin)
    finds: list[Found] = []
    heard: dict[tuple[int, int], tuple[Memory, Memory, Pair]] = {}
    for first, second, likeness, similarity in verdicts:
        if judge is not None:
            pair = Pair(first.content, second.content, likeness, similarity)
            if judge.wants(pair):
                heard.setdefault((first.pk, second.pk), (first, second, pair))
                continue
        if likeness is not None:
            finds.append(_found(first, second, likeness))
    if judge is not None and heard:
        # The model hears a pair once, and never one suggested before.
        asked = {_fingerprint((first, second)): key for key, (first, second, _) in heard.items()}
        known = Suggestion.objects.filter(agent=agent, fingerprint__in=list(asked))
        for fingerprint in known.values_list("fingerprint", flat=True):
            heard.pop(asked[fingerprint])
        held = list(heard.values())
        judged = judge.decide([pair for _, _, pair in held])
        finds += [
            _found(first, second, likeness)
            for (first, second, _), likeness in zip(held, judged, strict=True)
            if likeness is not None
        ]
    return finds


def _read_by_model(
    model: PairModel, pairs: list[tuple[int, Memory, Memory, float]], readings: dict[int, Reading]
) -> list[Likeness | None]:
    """The pair model's verdict on each pair, from the two memories' vectors (one query); a
    memory whose vector went meanwhile leaves its pairs unread."""
    vectors = found.vectors_of({memory.pk for _, *both, _ in pairs for memory in both})
    verdicts: list[Likeness | None] = [None] * len(pairs)
    known = [
        number
        for number, (_, first, second, _) in enumerate(pairs)
        if first.pk in vectors and second.pk in vectors
    ]
    if not known:
        return verdicts
    kinds = model.verdicts(
        np.asarray([vectors[pairs[number][1].pk] for number in known]),
        np.asarray([vectors[pairs[number][2].pk] for number in known]),
    )
    for number, kind in zip(known, kinds, strict=True):
        if kind is not None:
            _, first, second, similarity = pairs[number]
            verdicts[number] = by_meaning(
                *kind, similarity, _reading(readings, first), _reading(readings, second)
            )
    return verdicts


def _standing_out(
    agent: Agent,
    verdicts: list[Verdict],
    neighbourhoods: dict[int, list[found.Candidate]],
    margin: Standout,
) -> list[Verdict]:
    """`verdicts` with each unsure one (read from meaning, at least in part) dropped unless
    its pair is at least `margin.of` it more alike than either memory is, on average, to its
    other nearest neighbours.

    An embedding model puts any two memories about one person close (e5-small: 0.82 to 0.9
    across one user's store of compatible facts), so in a store how alike a pair is means
    something only beside how alike each memory is to the rest of its neighbourhood: the
    margin of bitext mining and of CSLS (Artetxe and Schwenk 2019; Conneau et al. 2018). A
    memory with no other neighbour (a store of two) has no crowd to stand out from. The
    neighbours of memories `neighbourhoods` lacks are found in one query."""
    unsure = [
        (index, first, second, similarity, margin.of(likeness))
        for index, (first, second, likeness, similarity) in enumerate(verdicts)
        if likeness is not None and not likeness.sure and similarity is not None
    ]
    unknown = {
        memory.pk: memory
        for _, *pair, _, _ in unsure
        for memory in pair
        if memory.pk not in neighbourhoods
    }
    if unknown:
        neighbourhoods = neighbourhoods | found.neighbours_of_each(agent, list(unknown.values()))
    kept = list(verdicts)
    for index, first, second, similarity, least in unsure:
        crowds = [
            crowd
            for crowd in (
                _crowd(neighbourhoods, first.pk, second.pk),
                _crowd(neighbourhoods, second.pk, first.pk),
            )
            if crowd is not None
        ]
        if crowds and similarity - max(crowds) < least:
            kept[index] = (first, second, None, similarity)
    return kept


def _crowd(
    neighbourhoods: dict[int, list[found.Candidate]], memory_id: int, partner_id: int
) -> float | None:
    """How alike the memory is to its nearest neighbours but its partner, on average; None
    when it has no other (or none is known)."""
    alike = [
        candidate.similarity
        for candidate in neighbourhoods.get(memory_id, ())
        if candidate.memory_id != partner_id and candidate.similarity is not None
    ]
    return sum(alike) / len(alike) if alike else None


def _found(first: Memory, second: Memory, likeness: Likeness) -> Found:
    # The older memory is kept by default: it has the history.
    proposal = {"keep": first.pk}
    return Found(str(likeness.kind), (first, second), likeness.reason, likeness.score, proposal)


def _counted(suggestions: Iterable[Suggestion]) -> Counter[str]:
    return Counter(suggestion.kind for suggestion in suggestions)


def mark_stale(memory_ids: Collection[int] | None = None, *, agent: Agent | None = None) -> int:
    """Open suggestions (holding any of `memory_ids`, or of `agent`) whose records moved since
    they were found become stale, each a `suggestion.stale` change in its agent's feed."""
    moved = found.moved_open(agent=agent, memory_ids=memory_ids)
    marked = 0
    for start in range(0, len(moved), STALE_BATCH):
        with transaction.atomic():
            stale = list(
                Suggestion.objects.select_for_update()
                .filter(pk__in=moved[start : start + STALE_BATCH], status=Suggestion.State.OPEN)
                .order_by("pk")
            )
            if not stale:
                continue
            now = timezone.now()
            Suggestion.objects.filter(pk__in=[suggestion.pk for suggestion in stale]).update(
                status=Suggestion.State.STALE, settled_at=now, settled_by=PASS
            )
            for suggestion in stale:
                suggestion.status = Suggestion.State.STALE
                suggestion.settled_at, suggestion.settled_by = now, PASS
            _announce(stale, Channel.TASK)
        marked += len(stale)
    return marked


def suggest_for_memory(memory_id: int) -> Counter[str]:
    """The pass after a write of one memory: stale marks, then its new suggestions."""
    mark_stale([memory_id])
    memory = found.comparable_memory(memory_id)
    if memory is None:
        return Counter()
    candidates = found.candidates_of(memory, found.vector_of(memory_id))
    others = found.memories_by_id([candidate.memory_id for candidate in candidates])
    pairs = [
        (memory, other, candidate.similarity)
        for candidate in candidates
        if (other := others.get(candidate.memory_id)) is not None
    ]
    finds = _findings(memory.agent, pairs, {}, Judge.configured(), {memory.pk: candidates})
    return _counted(_record(memory.agent, finds))


def suggest_for_agent(agent: Agent) -> Counter[str]:
    """The whole-agent pass: every memory against its nearest neighbours, and every group of
    memories holding the same words. Returns how many new suggestions of each kind.

    It streams the agent a batch at a time (found.CHUNK memories): one statement finds the
    batch's neighbours, one reads the texts of the memories they pair with, one transaction
    writes the batch's suggestions. Between batches it keeps one small entry per distinct set
    of words, so its memory is bounded by the batch, not by the agent's texts.
    """
    mark_stale(agent=agent)
    counts: Counter[str] = Counter()
    # The first memory holding each (bank, words), by their hash: a collision only adds a
    # pair for the rule to judge.
    first_with: dict[int, int] = {}
    judge = Judge.configured()
    for batch in found.agent_batches(agent):
        counts += _counted(_record(agent, _batch_findings(agent, batch, first_with, judge)))
    return counts


def _batch_findings(
    agent: Agent, batch: list[Memory], first_with: dict[int, int], judge: Judge | None
) -> list[Found]:
    """What the pass finds of `batch` (the agent's next memories), each pair from its later
    memory: with the earlier one holding the same words, and with its nearest neighbours."""
    readings: dict[int, Reading] = {}
    neighbours = found.neighbours_of_each(agent, batch)
    pairs: list[tuple[Memory, int, float | None]] = []
    for memory in batch:
        words = _reading(readings, memory).canon
        if words:
            twin = first_with.setdefault(hash((memory.subject_id, words)), memory.pk)
            if twin != memory.pk:
                pairs.append((memory, twin, None))
        # A memory not embedded yet is compared with those holding its words instead.
        candidates = neighbours.get(memory.pk)
        if candidates is None:
            candidates = found.candidates_of(memory, None)
        pairs += [
            (memory, candidate.memory_id, candidate.similarity)
            for candidate in candidates
            if candidate.memory_id < memory.pk
        ]
    memories = {memory.pk: memory for memory in batch}
    memories |= found.memories_by_id({pk for _, pk, _ in pairs} - memories.keys())
    known_pairs = [
        (memory, other, similarity)
        for memory, pk, similarity in pairs
        if (other := memories.get(pk)) is not None
    ]
    return _findings(agent, known_pairs, readings, judge, neighbours)


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
    expected_sha256: str | None = None,
    dry_run: bool = False,
) -> WriteResult:
    """Settle an open suggestion by keeping `keep` (a record id of it).

    A duplicate or a merge proposal merges the others into it (its merged `content`, if
    given). A conflict invalidates the others, superseded by it, after replacing its text
    with `content` if given. A `content` replaces the kept text whole, so it comes with the
    proof of a full read of it (`expected_sha256`): the caller's, or the proposal's for the
    content it carries. With `dry_run` every write is made and rolled back: the answer is
    what accepting would do.
    """
    suggestion = suggestion_of(agent, actor, suggestion_id)
    _check_may_settle(agent, actor)
    _check_open(suggestion, or_stale=True)
    keep = keep if keep not in (None, "") else suggestion.proposal.get("keep")
    ids = [record.memory_id for record in suggestion.records.all()]
    kept_id = ids[0] if keep is None else _kept_among(agent, keep, ids, "its memories")
    if content is None and suggestion.kind == Suggestion.Kind.MERGE:
        content = suggestion.proposal.get("content")
        expected_sha256 = suggestion.proposal.get("expected_sha256")
    try:
        with transaction.atomic():
            Suggestion.objects.select_for_update().filter(pk=suggestion.pk).first()
            memories = _pinned(agent, suggestion)
            others = [pk for pk in ids if pk != kept_id]
            result = _settle_writes(
                suggestion, agent, actor, memories[kept_id], others, (content, expected_sha256)
            )
            if dry_run:
                # What the kept memory would read, read before the writes roll back.
                text = Memory.objects.filter(pk=kept_id).values_list("content", flat=True).first()
                raise _Preview(_previewed(suggestion, memories[kept_id], others, result, text))
            Suggestion.objects.filter(pk=suggestion.pk).update(
                status=Suggestion.State.ACCEPTED,
                settled_at=timezone.now(),
                settled_by=actor.label,
                revisions=result.details.get("revisions", []),
            )
            suggestion.status = Suggestion.State.ACCEPTED
            _announce([suggestion], actor.channel)
    except _Preview as preview:
        result = preview.result
    result.details["suggestion"] = suggestion.pk
    return result


def _previewed(
    suggestion: Suggestion, kept: Memory, others: list[int], written: WriteResult, text: str | None
) -> WriteResult:
    """Accepting's answer as every dry run gives it (`engine.would_be`): the status the write
    would answer, the kept memory at the version it is at now (the one accepting expects), its
    would-be text and diff, and no revision, since none was kept."""
    becomes = "invalidated" if suggestion.kind == Suggestion.Kind.CONFLICT else "merged"
    others_named = ", ".join(str(pk) for pk in others)
    return would_be(
        MEMORY,
        kept,
        status=written.status,
        text_field="content",
        before_text=kept.content,
        after_text=kept.content if text is None else text,
        message=(
            f"Preview, nothing written: accepting keeps memory {kept.pk} with this text, and "
            f"{others_named} would be {becomes}."
        ),
        details={"kept": kept.pk, "others": others, "others_become": becomes},
    )


def _settle_writes(
    suggestion: Suggestion,
    agent: Agent,
    actor: Actor,
    kept: Memory,
    others: list[int],
    text: tuple[str | None, str | None],
) -> WriteResult:
    """`text`: the kept memory's new content, if any, with the SHA-256 of a full read of it."""
    written: list[int] = []
    content, expected_sha256 = text
    # A write on the kept memory holds it to the version the suggestion pinned; a person
    # settling it has seen what is merged, so a shorter text is theirs to choose.
    on_kept: dict[str, Any] = {
        "agent": agent,
        "actor": actor,
        "ref": kept.pk,
        "expected_version": kept.version,
        "expected_sha256": expected_sha256,
        "allow_shorter": True,
    }
    if suggestion.kind != Suggestion.Kind.CONFLICT:
        result: WriteResult = merge.OP.run(**on_kept, merge_from=others, content=content)
        written = [result.revision or 0, *(m["revision"] for m in result.details["merged"])]
    else:
        replaced: WriteResult | None = None
        if content is not None and content != kept.content:
            replaced = replace.OP.run(**on_kept, surface_key=MEMORY.key, text=content)
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
        _announce([suggestion], actor.channel)
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
    expected_sha256: str | None = None,
    reason: str = "",
    keep: Any = None,
) -> WriteResult:
    """An actor's proposal (an agent's consolidation): recorded open, pinned to the versions
    the memories are at now, for a person (or the agent, where its review mode allows) to
    accept. Nothing of the memories is written. A merged `content` replaces the kept text
    whole when accepted, so it is proposed with the proof of a full read of the kept memory
    (`expected_sha256`), checked now and again when it is accepted."""
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
        kept = next(memory for memory in memories if memory.pk == kept_id)
        # Refused now, not when someone accepts: the proposer is the one who can read first.
        check_whole_text(
            MEMORY,
            kept,
            {"content": validation.text(content, "content")},
            WholeText(kept.version, expected_sha256, allow_shorter=True),
        )
        proposal["content"] = content
        if expected_sha256 is not None:
            proposal["expected_sha256"] = expected_sha256
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
