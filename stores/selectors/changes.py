"""The change feed: an agent's committed changes in the order they committed, a page at a time.

A change is a write (one revision), a suggestion's event (found or proposed, accepted,
dismissed) or, when asked for, an importance decay pass.

A position is a `Change` id. The database gives those out as each write commits (see
stores.dbops), so reading `id > position` never skips a change that committed late, and a
client that keeps its cursor (`encode_cursor`) across restarts of either side misses nothing.
Each page reads the agent's head first and only rows up to it, so a page whose filters skip
rows can still move the cursor past them without passing a row it has not examined.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Any

from django.db.models import Case, F, Max, Q, When
from django.db.models.functions import Substr

from stores.editing import Status, fingerprint_of_sha256
from stores.errors import Invalid
from stores.models import Agent, Change, Revision, Suggestion
from stores.models.revisions import FORGET
from stores.opnames import OpName
from stores.selectors.revisions import moment
from stores.surfaces import MEMORY

# A feed item carries a preview of the text, never the text: at most this many characters.
PREVIEW_CHARS = 200
MAX_PAGE = 500
# `after=now`: start at the end of the feed, for a client that has just read everything.
NOW = "now"


@dataclass(frozen=True)
class FeedPage:
    items: list[dict[str, Any]]
    # The position of each item, and the one to read on from: for readers that keep their
    # own cursor (webhooks).
    positions: list[int]
    position: int
    # The agent's head when the page was read: a waiter sleeps until it moves past this.
    head: int

    @property
    def next(self) -> str:
        return encode_cursor(self.position)


# A cursor's form, which the API's schema states: a reader keeps it whole and sends it back.
CURSOR_PATTERN = r"^(now|c[0-9]{1,18})$"


def encode_cursor(position: int) -> str:
    return f"c{position}"


def decode_cursor(cursor: str, agent: Agent) -> int:
    """The position `cursor` names (`now`: the agent's head); Invalid for anything else."""
    text = cursor.strip()
    if text == NOW:
        return change_head(agent)
    if re.fullmatch(CURSOR_PATTERN, text) is None:
        raise Invalid(
            "after must be a cursor this feed gave (a `cursor` or `next` value), or 'now'; "
            "leave it out to read the feed from its start."
        )
    return int(text.removeprefix("c"))


def change_head(agent: Agent) -> int:
    """The position of the agent's latest committed change (0 before any)."""
    return change_head_of(agent.pk)


def change_head_of(agent_id: int) -> int:
    return Change.objects.filter(agent_id=agent_id).aggregate(head=Max("id"))["head"] or 0


def first_change_time(agent_id: int, after: int) -> dt.datetime | None:
    """When the agent's first write past position `after` was written (its revision's time),
    None when there is no such write."""
    return (
        Change.objects.filter(agent_id=agent_id, id__gt=after, revision__isnull=False)
        .order_by("id")
        .values_list("revision__created_at", flat=True)
        .first()
    )


def change_status(op: str, version_before: int) -> Status:
    """The status word a write of `op` answered, read back from its revision."""
    if op == FORGET:
        return Status.DELETED
    if version_before == 0:
        return Status.CREATED
    if op == OpName.INVALIDATE:
        return Status.INVALIDATED
    if op == OpName.REVERT:
        return Status.REVERTED
    return Status.UPDATED


def changes_after(
    agent: Agent,
    *,
    after: int,
    limit: int,
    include_decay: bool = False,
    surface: str | None = None,
) -> FeedPage:
    """The agent's changes after position `after`, oldest first (two indexed queries, and one
    for the records of the suggestions on the page)."""
    head = change_head(agent)
    rows = Change.objects.filter(agent=agent, id__gt=after, id__lte=head)
    if not include_decay:
        rows = rows.exclude(kind=Change.Kind.DECAY)
    if surface is not None:
        # A decay pass lowers memories, a suggestion is about memories: both belong to the
        # memory surface's changes.
        wanted = Q(revision__surface=surface)
        if surface == MEMORY.key:
            wanted |= Q(kind__in=[Change.Kind.DECAY, Change.Kind.SUGGESTION])
        rows = rows.filter(wanted)
    # A delete's preview is the text it deleted: what a person confirming it needs to see.
    shown = Case(
        When(revision__op=FORGET, then=F("revision__before_text")),
        default=F("revision__after_text"),
    )
    page = list(
        rows.select_related("revision", "decay_pass", "suggestion")
        .prefetch_related("suggestion__records")
        .defer(
            "revision__before_text",
            "revision__after_text",
            "revision__before_state",
            "revision__after_state",
        )
        .annotate(preview=Substr(shown, 1, PREVIEW_CHARS))
        .order_by("id")[: min(limit, MAX_PAGE)]
    )
    full = len(page) == min(limit, MAX_PAGE)
    position = page[-1].pk if full else max(after, head)
    return FeedPage(
        items=[change_data(row) for row in page],
        positions=[row.pk for row in page],
        position=position,
        head=head,
    )


def change_data(change: Change) -> dict[str, Any]:
    """One feed item: what changed, by whom, the new text's hash and a preview."""
    cursor = encode_cursor(change.pk)
    if change.kind == Change.Kind.DECAY:
        run = change.decay_pass
        return {
            "cursor": cursor,
            "revision": None,
            "surface": MEMORY.key,
            "id": None,
            "op": "decay",
            "status": str(Status.UPDATED),
            "version": None,
            "actor": (run.triggered_by if run is not None else "") or "task:decay",
            "channel": "task",
            "at": moment(run.finished_at or run.started_at) if run is not None else None,
            "field": "importance",
            "fingerprint": None,
            "preview": "",
            "source": None,
            "memories": change.memories,
        }
    if change.kind == Change.Kind.SUGGESTION:
        return _suggestion_change(change, cursor)
    revision = change.revision
    return {
        "cursor": cursor,
        "revision": revision.pk,
        "surface": revision.surface,
        "id": revision.record_id,
        "op": revision.op,
        "status": str(change_status(revision.op, revision.version_before)),
        "version": revision.version_after,
        "actor": revision.actor,
        "channel": revision.channel,
        "at": moment(revision.created_at),
        "field": revision.field,
        # Never the text's SHA-256 itself: that is a full read's proof, and a feed item is a
        # preview.
        "fingerprint": fingerprint_of_sha256(revision.after_hash) if revision.after_hash else None,
        "preview": getattr(change, "preview", "") or "",
        "source": _source(revision),
    }


# A suggestion's change: its op, and the key of what it names.
SUGGESTION = "suggestion"
# The events of a suggestion (`suggestion.<event>`): the statuses it takes, and `created`
# when it is found or proposed (open).
SUGGESTION_EVENTS = (
    Status.CREATED.value,
    Suggestion.State.ACCEPTED.value,
    Suggestion.State.DISMISSED.value,
    Suggestion.State.STALE.value,
)


def suggestion_event(status: str) -> str:
    return Status.CREATED.value if status == Suggestion.State.OPEN else status


def _suggestion_change(change: Change, cursor: str) -> dict[str, Any]:
    """A suggestion found or proposed (`created`), accepted, dismissed or stale: no revision, no
    record of its own; `suggestion` names it, its kind, the status it took and its records at
    the versions it pinned (and, accepted, the revisions that settled it, earlier in the feed)."""
    suggestion = change.suggestion
    assert suggestion is not None  # the row goes with its suggestion (CASCADE)
    status = change.suggestion_status
    created = status == Suggestion.State.OPEN
    return {
        "cursor": cursor,
        "revision": None,
        "surface": MEMORY.key,
        "id": None,
        "op": SUGGESTION,
        "status": str(Status.CREATED if created else Status.UPDATED),
        "version": None,
        "actor": suggestion.found_by if created else suggestion.settled_by,
        "channel": change.channel,
        "at": moment(suggestion.created_at if created else suggestion.settled_at),
        "field": "",
        "fingerprint": None,
        "preview": suggestion.reason[:PREVIEW_CHARS],
        "source": None,
        SUGGESTION: {
            "id": suggestion.pk,
            "event": suggestion_event(status),
            "kind": suggestion.kind,
            "status": status,
            "records": [
                {"id": record.memory_id, "version": record.version}
                for record in suggestion.records.all()
            ],
            "revisions": suggestion.revisions if status == Suggestion.State.ACCEPTED else [],
        },
    }


def _source(revision: Revision | None) -> dict[str, Any] | None:
    return (revision.source or None) if revision is not None else None


def newest_changes(
    agent: Agent, *, after: int, limit: int, surface: str | None = None
) -> list[Change]:
    """The agent's writes after position `after`, newest first, without their texts (one
    indexed query): what a page shows of the changes made since it was loaded."""
    rows = Change.objects.filter(agent=agent, id__gt=after, kind=Change.Kind.WRITE)
    if surface is not None:
        rows = rows.filter(revision__surface=surface)
    return list(
        rows.select_related("revision")
        .defer(
            "revision__before_text",
            "revision__after_text",
            "revision__before_state",
            "revision__after_state",
        )
        .order_by("-id")[:limit]
    )
