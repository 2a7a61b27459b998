"""undo: take back the change one revision made, keeping every change since."""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

from stores.editing import NoChange, UndoConflict, touched_by, undo_change
from stores.engine.checks import text_limit
from stores.engine.commit import Change, apply_change, atomic
from stores.engine.restoring import mark_reviewed, restorable_values, revision_of, revision_text
from stores.engine.results import WriteResult
from stores.errors import Conflict, Invalid, NoChangeError
from stores.models import Agent, Revision, VersionedRecord
from stores.opnames import OpName
from stores.ops.base import Page, Place, RecordCall, ToolSpec, WriteOp
from stores.ops.fields import REVISION_ID
from stores.ops.memory.merge import undo_merge
from stores.selectors.revisions import later_states, latest_state, text_changes_after
from stores.surfaces import SurfaceSpec

# How many later revisions an undo's conflict is traced through to name those that made it.
UNDO_TRACE_LIMIT = 100


@dataclass(frozen=True)
class Undo(WriteOp):
    def write_record(
        self, spec: SurfaceSpec, arguments: Mapping[str, Any], call: RecordCall
    ) -> WriteResult:
        """Take back the change one revision made, keeping every change since: a new revision.

        The revision's change, reversed, is merged into today's text line by line and, where
        lines meet, word by word, and the fields it set (tags, importance, an expiry...) go
        back to what they were. Where later edits touched the same words (or words right
        beside them), or changed one of those fields, the undo is refused as a conflict naming
        those revisions; where they already took the change back it is
        no_change. Distinct from a revert, which brings back a whole version. Undoing an
        agent's change settles its pending review as reverted; `dry_run` answers what the undo
        would, writing and settling nothing.
        """
        agent, actor, dry_run = call.agent, call.actor, call.dry_run
        with atomic(dry_run):
            record = call.find(spec, self.service)
            asked = revision_of(spec, agent, record.pk, arguments["revision_id"])
            if asked.op == OpName.MERGE:
                # A merge changed several records: taking it back restores them all.
                return undo_merge(spec, call, asked)
            result = apply_change(
                spec,
                record,
                actor=actor,
                op=self.name,
                expected_version=call.expected_version,
                build=functools.partial(self.taken_back, spec, agent, asked),
                dry_run=dry_run,
            )
            if not dry_run:
                mark_reviewed(asked, actor, "before")
            return result

    def taken_back(
        self, spec: SurfaceSpec, agent: Agent, revision: Revision, record: VersionedRecord
    ) -> Change:
        """The change that takes back what `revision` changed in `record`."""
        text_field, before = revision_text(spec, revision, "before")
        _, after = revision_text(spec, revision, "after")
        if not revision.before_state:
            raise Invalid(
                f"Revision {revision.pk} brought the record into being ({revision.op}); "
                "undoing it would remove the record: forget it instead."
            )
        values = _fields_taken_back(spec, agent, record, revision)
        if before != after:
            try:
                text = undo_change(
                    before, after, getattr(record, text_field), max_length=text_limit(spec)
                )
            except UndoConflict as clash:
                raise _undo_conflict(spec, agent, record, revision, text_field, clash) from None
            except NoChange:
                # The text is back already; the fields it set may not be.
                if not values:
                    raise
            else:
                if not text.strip() and text_field == spec.primary_text_field:
                    raise Invalid(
                        f"Undoing revision {revision.pk} would leave the {text_field} empty, "
                        "which would erase the record; forget it instead."
                    )
                values[text_field] = text
        if not values:
            raise NoChangeError(
                f"Revision {revision.pk} ({revision.op}) changed neither the {text_field} text "
                "nor a field an undo brings back, or those fields hold what it replaced "
                "already: there is nothing to undo."
            )
        return Change(
            op=self.name,
            values=values,
            text_field=text_field,
            details={"undone_revision": revision.pk},
            reverted_revision=revision.pk,
        )


def undoable_fields(spec: SurfaceSpec) -> tuple[str, ...]:
    """The fields beside the text an undo takes back: those a revert restores, and the expiry
    (only set_ttl moves it, so only its undo moves it back)."""
    return (*spec.revertable_fields, *(("expires_at",) if spec.expires else ()))


def _fields_taken_back(
    spec: SurfaceSpec, agent: Agent, record: VersionedRecord, revision: Revision
) -> dict[str, Any]:
    """The values that take back the fields `revision` changed, as model values; a Conflict
    naming the later revisions if one of those fields was changed since.

    A three-way merge of each field, as the text's is of its lines: the base is what the
    revision set, today is what the record's last revision holds (not the row: the decay pass
    lowers importance without a revision, and that is no one's edit). A field still as the
    revision set it goes back; one already back needs nothing; any other was changed since.
    """
    before, after = revision.before_state, revision.after_state
    if not isinstance(before, dict) or not isinstance(after, dict):
        return {}
    changed = [
        name
        for name in undoable_fields(spec)
        if name in before and name in after and before[name] != after[name]
    ]
    if not changed:
        return {}
    today = latest_state(agent, spec.key, record.pk) or after
    moved = [name for name in changed if today.get(name) not in (after[name], before[name])]
    if moved:
        raise _fields_conflict(spec, agent, record, revision, moved)
    back = tuple(name for name in changed if today.get(name) == after[name])
    return restorable_values(spec, before, back, agent=agent, record_id=record.pk)


def _fields_conflict(
    spec: SurfaceSpec,
    agent: Agent,
    record: VersionedRecord,
    revision: Revision,
    fields: list[str],
) -> Conflict:
    """The refusal of an undo whose fields were changed since, naming the revisions that did."""
    set_by_it = {name: revision.after_state[name] for name in fields}
    named: list[int] = []
    for pk, state in later_states(agent, spec.key, record.pk, revision.version_after)[
        :UNDO_TRACE_LIMIT
    ]:
        if state and any(state.get(name) != set_by_it[name] for name in fields):
            named.append(pk)
            set_by_it.update((name, state.get(name)) for name in fields)
    who = (
        f"later revision {named[0]}"
        if len(named) == 1
        else f"later revisions {', '.join(map(str, named))}"
        if named
        else "later edits"
    )
    return Conflict(
        f"Revision {revision.pk} cannot be undone on its own: {who} changed "
        f"{', '.join(fields)} since. Set {'it' if len(fields) == 1 else 'them'} by hand, or "
        f"undo those revisions first, newest first.",
        revisions=named,
        fields=fields,
        current_version=record.version,
    )


def _undo_conflict(
    spec: SurfaceSpec,
    agent: Agent,
    record: VersionedRecord,
    revision: Revision,
    text_field: str,
    clash: UndoConflict,
) -> Conflict:
    """The refusal of an undo that meets later edits, naming the later revisions that made
    them: the conflict's lines are followed through each later change of the text."""
    later = text_changes_after(agent, spec.key, record.pk, text_field, revision.version_after)
    ids = list(later.values_list("pk", flat=True)[: UNDO_TRACE_LIMIT + 1])
    traced = ids[:UNDO_TRACE_LIMIT]
    # Streamed, so the texts of many long revisions are never all held at once.
    texts = (
        (change.before_text, change.after_text)
        for change in later.filter(pk__in=traced)
        .only("before_text", "after_text")
        .iterator(chunk_size=10)
    )
    # A history the changes do not chain through (an import wrote it) may lose the trail:
    # then every later change is named.
    named = [traced[position] for position in touched_by(clash.regions, texts)] or traced
    where = ", ".join(str(a) if a == b else f"{a}-{b}" for a, b in clash.lines)
    lines = "lines" if len(clash.lines) > 1 or clash.lines[0][0] != clash.lines[0][1] else "line"
    if not named:
        who, them = "later edits", "them"
    elif len(named) == 1:
        who, them = f"later revision {named[0]}", "it"
    else:
        who, them = f"later revisions {', '.join(map(str, named))}", "them"
    if len(ids) > UNDO_TRACE_LIMIT:
        who += f" (of the {UNDO_TRACE_LIMIT} revisions after it; later ones were not searched)"
    return Conflict(
        f"Revision {revision.pk} cannot be undone on its own: {who} changed the same lines "
        f"(today's {lines} {where}). Undo {them} first, newest first, then undo revision "
        f"{revision.pk} again; or edit today's text by hand.",
        revisions=named,
        lines=[list(span) for span in clash.lines],
        current_version=record.version,
    )


OP = Undo(
    OpName.UNDO,
    "Take back the change one revision made, keeping every change since.",
    (replace(REVISION_ID, description="The revision whose change to take back."),),
    takes_surface=True,
    previews=True,
    tool=ToolSpec(
        "undo_change",
        "Take back what one revision changed in a record's text and fields, keeping every "
        "change made since (unlike revert_record, which restores a whole version). Refused "
        "as conflict, naming the revisions, when a later edit touched the same words (or "
        "words right beside them) or fields.",
    ),
    page=Page(Place.HISTORY, went_back="took back", names_change=True),
)
