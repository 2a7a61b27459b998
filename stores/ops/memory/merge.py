"""merge: fold memories that say the same thing into one, keeping the others as its history.

A merge is reinforcement: the kept memory was observed as often as all of them together
(`reinforcement_count` the sum), last when any of them was (`last_seen_at` the latest), and
matters as much as the most important (`importance` the highest); its tags are the union, and
its text the merged text when one is given. Each merged-away memory is invalidated with
`superseded_by` the kept one, as the invalidate op would (so an episodic memory may be merged
away, a fact may not). Every record is a revision of op `merge`, written in one transaction,
the kept one's last; undoing any of them restores every record the merge touched.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from django.utils import timezone

from stores.editing import Status
from stores.engine import policy, validation
from stores.engine.actors import Actor
from stores.engine.checks import check_expected_version
from stores.engine.commit import Change, atomic, commit
from stores.engine.lookup import RecordRef, find_record
from stores.engine.restoring import restorable_values
from stores.engine.results import WriteResult
from stores.engine.wholetext import WholeText
from stores.errors import Conflict, Invalid, NotFound
from stores.models import Agent, Memory, Revision
from stores.opnames import OpName
from stores.ops.base import Op, Page, Place, RecordCall, ToolSpec
from stores.ops.fields import ALLOW_SHORTER, EXPECTED_SHA256
from stores.ops.params import Kind, Param
from stores.surfaces import SurfaceSpec

# At most this many memories are merged into one in one write.
MAX_MERGED = 50
# What an undo of a merge brings back besides the text: everything the merge set.
_RESTORED = ("tags", "importance", "superseded_by", "invalidated_at")
_RESTORED_COUNTS = ("last_seen_at", "reinforcement_count")
# A form's line of refs: "12, 15", "12 15" or "[12, 15]".
_REFS_SEPARATOR = re.compile(r"[\s,\[\]\"']+")


def merge_refs(value: Any, *, most: int = MAX_MERGED, field: str = "from") -> list[RecordRef]:
    """The refs of `from` (or of another `field` naming at most `most` memories): a list of
    ids or aliases, or (from a form) one line of them."""
    items = (
        [part for part in _REFS_SEPARATOR.split(value) if part] if isinstance(value, str) else value
    )
    if not isinstance(items, list | tuple) or not items:
        raise Invalid(f"{field} must name at least one memory.")
    if len(items) > most:
        raise Invalid(f"{field} names {len(items)} memories; it takes at most {most}.")
    refs: list[RecordRef] = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int | str) or item == "":
            raise Invalid(f"{field} holds ids (numbers) or aliases (strings) only.")
        refs.append(item)
    return refs


@dataclass(frozen=True)
class Merge(Op):
    def run(
        self,
        *,
        agent: Agent,
        actor: Actor,
        ref: RecordRef,
        merge_from: Any,
        content: str | None = None,
        expected_version: int | None = None,
        expected_sha256: str | None = None,
        allow_shorter: bool = False,
        dry_run: bool = False,
    ) -> WriteResult:
        spec = self.spec_for(None)
        refs = merge_refs(merge_from)
        whole_text = None
        if content is not None:
            content = validation.text(content, "content")
            if not content.strip():
                raise Invalid("content may not be empty: leave it out to keep the kept text.")
            # The merged text replaces the kept one whole: the engine asks for a full read.
            whole_text = WholeText(
                expected_version,
                expected_sha256,
                validation.flag(allow_shorter, "allow_shorter"),
            )
        dry_run = validation.flag(dry_run, "dry_run")
        with atomic(dry_run):
            kept, merged = _lock_all(spec, agent, actor, ref, refs, lock=not dry_run)
            policy.check(kept, actor=actor, op=self.name)
            check_expected_version(kept, expected_version)
            for memory in merged:
                # Merged away is invalidated: what an episodic memory allows, a fact does not.
                policy.check(memory, actor=actor, op=OpName.INVALIDATE)
            moment = timezone.now()
            written = [] if dry_run else [_merge_away(spec, m, kept, actor, moment) for m in merged]
            return commit(
                spec,
                kept,
                actor=actor,
                change=_kept_change(kept, merged, content, written, whole_text),
                dry_run=dry_run,
            )


def _lock_all(
    spec: SurfaceSpec,
    agent: Agent,
    actor: Actor,
    ref: RecordRef,
    refs: list[RecordRef],
    *,
    lock: bool,
) -> tuple[Memory, list[Memory]]:
    """The kept memory and the merged ones, each locked, in id order (two merges of the same
    memories then wait for each other instead of deadlocking)."""
    kept_id = find_record(spec, agent=agent, ref=ref, actor=actor).pk
    ids: list[int] = []
    for other in refs:
        try:
            found = find_record(spec, agent=agent, ref=other, actor=actor).pk
        except NotFound:
            raise NotFound(f"from names {other}, which is not a memory of this agent.") from None
        if found == kept_id:
            raise Conflict("A memory cannot be merged into itself: from names the kept one.")
        if found not in ids:
            ids.append(found)
    locked: dict[int, Memory] = {}
    for pk in sorted([kept_id, *ids]):
        record = find_record(spec, agent=agent, ref=pk, actor=actor, lock=lock)
        assert isinstance(record, Memory)
        locked[pk] = record
    return locked[kept_id], [locked[pk] for pk in ids]


def _merge_away(
    spec: SurfaceSpec, memory: Memory, kept: Memory, actor: Actor, moment: Any
) -> dict[str, Any]:
    result = commit(
        spec,
        memory,
        actor=actor,
        change=Change(
            op=OpName.MERGE,
            values={"invalidated_at": moment, "superseded_by_id": kept.pk},
            status=Status.INVALIDATED,
        ),
    )
    return {"id": memory.pk, "version": result.version, "revision": result.revision}


def _kept_change(
    kept: Memory,
    merged: list[Memory],
    content: str | None,
    written: list[Any],
    whole_text: WholeText | None,
) -> Change:
    everyone = [kept, *merged]
    tags = list(kept.tags)
    for memory in merged:
        tags += [tag for tag in memory.tags if tag not in tags]
    values: dict[str, Any] = {
        "reinforcement_count": sum(memory.reinforcement_count for memory in everyone),
        "last_seen_at": max(memory.last_seen_at for memory in everyone),
        "importance": max(memory.importance for memory in everyone),
        "tags": tags,
    }
    if content is not None:
        values["content"] = content
    merged_away = written or [{"id": memory.pk, "version": memory.version} for memory in merged]
    return Change(
        op=OpName.MERGE,
        values=values,
        text_field="content",
        message=f"Merged {len(merged)} memor{'y' if len(merged) == 1 else 'ies'} into this one.",
        details={"merged": merged_away},
        whole_text=whole_text,
    )


def undo_merge(spec: SurfaceSpec, call: RecordCall, revision: Revision) -> WriteResult:
    """Restore every record a merge touched, each to how it stood before, as revisions of
    op `undo` (`call` names one of them); refused as a conflict, with nothing written, if any
    of them moved since."""
    agent, actor, dry_run = call.agent, call.actor, call.dry_run
    revisions = merge_revisions(agent, revision)
    kept_revision = revisions[-1]
    with atomic(dry_run):
        records: dict[int, Memory] = {}
        for merge_revision in sorted(revisions, key=lambda r: r.record_id):
            record = find_record(
                spec, agent=agent, ref=merge_revision.record_id, actor=actor, lock=not dry_run
            )
            assert isinstance(record, Memory)
            records[merge_revision.record_id] = record
            policy.check(record, actor=actor, op=OpName.UNDO)
            if record.version != merge_revision.version_after:
                raise Conflict(
                    f"Memory {record.pk} changed since the merge (it is at version "
                    f"{record.version}, the merge left it at {merge_revision.version_after}); "
                    "undo or revert the later changes first.",
                    current_version=record.version,
                    record=record.pk,
                )
        check_expected_version(records[kept_revision.record_id], call.expected_version)
        restored: list[dict[str, Any]] = []
        result: WriteResult | None = None
        for merge_revision in revisions:
            record = records[merge_revision.record_id]
            values = {
                "content": validation.text(merge_revision.before_text, "content"),
                **restorable_values(
                    spec,
                    merge_revision.before_state,
                    (*_RESTORED, *_RESTORED_COUNTS),
                    agent=agent,
                    record_id=record.pk,
                ),
            }
            change = Change(
                op=OpName.UNDO,
                values={k: v for k, v in values.items() if getattr(record, k) != v},
                text_field="content",
                details={"undone_revision": merge_revision.pk},
                reverted_revision=merge_revision.pk,
            )
            result = commit(spec, record, actor=actor, change=change, dry_run=dry_run)
            if merge_revision is not kept_revision:
                restored.append({"id": record.pk, "version": result.version})
        assert result is not None
        result.details["restored"] = restored
        return result


def merge_revisions(agent: Agent, revision: Revision) -> list[Revision]:
    """The revisions one merge wrote, the merged-away ones first and the kept one's last.

    They are found from any of them: the merged-away revisions' state names the kept memory,
    and the merge wrote them in its transaction just before the kept one's, after the kept
    memory's previous revision (its row lock kept any other merge into it out). A merged-away
    revision is told by what the merge changed on it (its successor, its invalidation): the
    kept memory may itself be superseded, and its revision leaves that as it was.
    """
    superseded_by = revision.after_state.get("superseded_by")
    kept = revision
    if any(
        revision.after_state.get(name) != revision.before_state.get(name)
        for name in ("superseded_by", "invalidated_at")
    ):
        found = (
            Revision.objects.filter(
                agent=agent,
                surface=revision.surface,
                record_id=superseded_by,
                op=OpName.MERGE,
                pk__gt=revision.pk,
            )
            .order_by("pk")
            .first()
        )
        if found is None:
            raise NotFound(f"The merge of revision {revision.pk} is not in this agent's history.")
        kept = found
    previous = (
        Revision.objects.filter(
            agent=agent,
            surface=kept.surface,
            record_id=kept.record_id,
            version_after=kept.version_before,
        )
        .values_list("pk", flat=True)
        .first()
    ) or 0
    merged_away = Revision.objects.filter(
        agent=agent,
        surface=kept.surface,
        op=OpName.MERGE,
        pk__gt=previous,
        pk__lt=kept.pk,
        after_state__superseded_by=kept.record_id,
    ).order_by("pk")
    return [*merged_away, kept]


OP = Merge(
    OpName.MERGE,
    "Merge other memories into this one: the others are invalidated, superseded by it.",
    (
        Param(
            "from",
            Kind.REFS,
            "The ids (or aliases) of the memories to merge into this one; each is invalidated "
            "with superseded_by this memory.",
            required=True,
            max_length=MAX_MERGED,
            argument="merge_from",
        ),
        Param(
            "content",
            Kind.TEXT,
            "The merged text, replacing this memory's whole text, made from a full read of it "
            "(never a preview): it needs expected_version, and expected_sha256 when the text "
            "is longer than 500 characters. Leave it out to keep this memory's text.",
            min_length=1,
        ),
        EXPECTED_SHA256,
        ALLOW_SHORTER,
    ),
    surfaces=("memory",),
    previews=True,
    tool=ToolSpec(
        "merge_memories",
        "Merge memories that say the same thing into one (this one): its reinforcement "
        "count becomes the sum, last_seen_at the latest, importance the highest, tags the "
        "union, and the others are invalidated, superseded by it. Give content to set the "
        "merged text: it replaces this memory's whole text, so first read_record this memory "
        "and send the version and content_sha256 you read (expected_version, expected_sha256). "
        "Prefer propose_merge when a person should decide.",
    ),
    page=Page(Place.TEXT),
)
