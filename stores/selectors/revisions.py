"""Reading revisions: a record's history, an agent's recent changes, the review queue.

Every door reads revisions through these functions, so each read has one ordering, loads
only the columns its page shows and runs a fixed number of queries, whatever the number of
rows. Lists that show no diff leave the texts and states in the database: they are the
bulk of a revision row.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import Any

from django.db.models import Count, F, OuterRef, Q, QuerySet, Subquery

from stores.models import Agent, Revision
from stores.models.revisions import ERASURE_TOMBSTONE
from stores.runtime.prepared import PreparedQuery
from stores.surfaces import SURFACES

PENDING = Revision.Review.PENDING
# The heavy columns: a list that shows no diff does not read them.
BODY = ("before_text", "after_text", "before_state", "after_state")
NEWEST_FIRST = ("-created_at", "-id")
OLDEST_FIRST = ("created_at", "id")


def moment(value: dt.datetime | None) -> str | None:
    """A moment as every read gives it: ISO 8601, or None."""
    return value.isoformat() if value is not None else None


def revision_data(revision: Revision, *, full: bool) -> dict[str, Any]:
    """A revision; `full` adds the whole text before and after and the states."""
    data: dict[str, Any] = {
        "id": revision.pk,
        "surface": revision.surface,
        "record_id": revision.record_id,
        "version_before": revision.version_before,
        "version_after": revision.version_after,
        "op": revision.op,
        "field": revision.field,
        "actor": revision.actor,
        "channel": revision.channel,
        "created_at": moment(revision.created_at),
        "review": revision.review,
        "source": revision.source or None,
        "redacted": revision.redacted or None,
    }
    if full:
        data.update(
            before_text=revision.before_text,
            after_text=revision.after_text,
            before_state=revision.before_state,
            after_state=revision.after_state,
        )
    return data


REDACTED_DIFF = "redacted"


def is_redacted(revision: Revision) -> bool:
    """Whether a side of the revision's text was redacted: its diff is then not drawn."""
    return "before" in revision.redacted or "after" in revision.redacted


def erased_revisions(revision_ids: Iterable[int | None]) -> set[int]:
    """Which of the revisions an erasure took text out of (one query)."""
    ids = [pk for pk in revision_ids if pk is not None]
    if not ids:
        return set()
    return set(
        Revision.objects.filter(pk__in=ids, redacted__has_key=ERASURE_TOMBSTONE).values_list(
            "pk", flat=True
        )
    )


def records_written_by(
    agent: Agent, surface_key: str, conversation: str
) -> QuerySet[Revision, int]:
    """The ids of `agent`'s records of a surface that `conversation` created or changed (a
    take-back's writes, which name the conversation they took back, are not its own)."""
    return Revision.objects.filter(
        agent=agent, surface=surface_key, source_conversation=conversation, source_takeback=False
    ).values_list("record_id", flat=True)


def _record_write(order: str) -> PreparedQuery[Revision]:
    return PreparedQuery(
        lambda surface_key, record_id: (
            Revision.objects.filter(surface=surface_key, record_id=record_id)
            .defer(*BODY)
            .order_by(order)[:1]
        ),
        str,
        int,
    )


# Every full read of a record asks both (compiled once: they are most of a read's Python).
_FIRST_WRITE = _record_write("version_after")
_LAST_WRITE = _record_write("-version_after")


def record_origin(surface_key: str, record_id: int) -> dict[str, Any]:
    """Which write created a record and which last changed it, each with its actor, channel,
    moment and source (two indexed reads, without the texts)."""
    first = _FIRST_WRITE.run(surface_key, record_id)
    last = _LAST_WRITE.run(surface_key, record_id)
    return {
        "created_by": _origin(first[0] if first else None),
        "last_changed_by": _origin(last[0] if last else None),
    }


def _origin(revision: Revision | None) -> dict[str, Any] | None:
    if revision is None:
        return None
    return {
        "revision": revision.pk,
        "op": revision.op,
        "actor": revision.actor,
        "channel": revision.channel,
        "at": moment(revision.created_at),
        "source": revision.source or None,
    }


# --- one revision ----------------------------------------------------------------------


def agent_revision(agent: Agent, revision_id: int) -> Revision | None:
    """Revision `revision_id` if it is one of `agent`'s (another agent's is not found)."""
    return Revision.objects.filter(agent=agent, pk=revision_id).first()


def record_revision_of(
    agent: Agent, surface_key: str, record_id: int, revision_id: int
) -> Revision | None:
    """Revision `revision_id` if it is a revision of that very record."""
    if not 0 < revision_id <= _MAX_ID:
        return None  # no id is out of a big integer's range, and the database would refuse it
    found = _RECORD_REVISION.run(agent.pk, surface_key, record_id, revision_id)
    return found[0] if found else None


_MAX_ID = 2**63 - 1
# Every undo and revert reads the revision it goes back to: compiled once (a take-back of a
# conversation runs it once a record).
_RECORD_REVISION: PreparedQuery[Revision] = PreparedQuery(
    lambda agent_id, surface_key, record_id, revision_id: Revision.objects.filter(
        agent_id=agent_id, surface=surface_key, record_id=record_id, pk=revision_id
    ).order_by()[:1],
    int,
    str,
    int,
    int,
)


def _of_record(
    agent: Agent, surface_key: str, record_id: int, **conditions: Any
) -> QuerySet[Revision]:
    """The record's revisions (those of them `conditions` keep)."""
    return Revision.objects.filter(
        agent=agent, surface=surface_key, record_id=record_id, **conditions
    )


def last_revision(agent: Agent, surface_key: str, record_id: int) -> Revision | None:
    """The record's latest revision; for a forgotten record, the forget that holds its text."""
    return _of_record(agent, surface_key, record_id).order_by("-version_after").first()


def latest_version_of(agent: Agent, surface_key: str, record_id: int) -> int | None:
    """The version the record's latest revision produced (one indexed query, no row read)."""
    return (
        _of_record(agent, surface_key, record_id)
        .order_by("-version_after")
        .values_list("version_after", flat=True)
        .first()
    )


def latest_state(agent: Agent, surface_key: str, record_id: int) -> dict[str, Any] | None:
    """The state the record's latest revision left it in (None: no revision)."""
    return (
        _of_record(agent, surface_key, record_id)
        .order_by("-version_after")
        .values_list("after_state", flat=True)
        .first()
    )


def later_states(
    agent: Agent, surface_key: str, record_id: int, version: int
) -> QuerySet[Revision, tuple[int, dict[str, Any]]]:
    """The (id, state after) of the record's revisions after `version`, oldest first. Lazy."""
    return (
        _of_record(agent, surface_key, record_id, version_after__gt=version)
        .order_by("version_after")
        .values_list("pk", "after_state")
    )


def revision_texts(revision_id: int) -> Revision | None:
    """Only the texts before and after of a revision: what a write's diff is drawn from."""
    return (
        Revision.objects.filter(pk=revision_id)
        .only("before_text", "after_text", "redacted")
        .first()
    )


# --- a record's history ----------------------------------------------------------------


def history_of(
    agent: Agent, surface_key: str, record_id: int, *, limit: int, offset: int = 0
) -> list[Revision]:
    """The record's revisions, newest version first, with who reviewed each (one query);
    `offset` skips the newest ones (a later page)."""
    return list(
        _of_record(agent, surface_key, record_id)
        .select_related("reviewed_by")
        .order_by("-version_after", "-id")[offset : offset + limit]
    )


def revision_versions(agent: Agent, revision_ids: list[int]) -> dict[int, tuple[int, int]]:
    """Each of the agent's revisions `revision_ids` as (version before, version after): how a
    person finds a revision named by id in a record's history."""
    rows = Revision.objects.filter(agent=agent, pk__in=revision_ids).values_list(
        "pk", "version_before", "version_after"
    )
    return {pk: (before, after) for pk, before, after in rows}


def has_history(agent: Agent, surface_key: str, record_id: int) -> bool:
    """Whether the record was ever written: a forgotten record stays findable by its history."""
    return _of_record(agent, surface_key, record_id).exists()


def changes_since(
    agent: Agent, surface_key: str, record_id: int, version: int, *, limit: int
) -> list[Revision]:
    """The revisions written after `version`, oldest first: what a stale form missed."""
    return list(
        _of_record(agent, surface_key, record_id, version_after__gt=version).order_by(
            "version_after"
        )[:limit]
    )


def recorded_versions(surface_key: str, record_id: int) -> set[int]:
    """The versions the record's revisions produced (a record id belongs to one agent)."""
    return set(
        Revision.objects.filter(surface=surface_key, record_id=record_id).values_list(
            "version_after", flat=True
        )
    )


def text_at_version(
    agent: Agent, surface_key: str, record_id: int, version: int, field: str
) -> str | None:
    """The record's `field` text as it stood at `version`, read back from the revisions."""
    revision = (
        _of_record(agent, surface_key, record_id, version_after__lte=version, field=field)
        .order_by("-version_after")
        .only("after_text")
        .first()
    )
    return None if revision is None else revision.after_text


def text_changes_after(
    agent: Agent, surface_key: str, record_id: int, field: str, version: int
) -> QuerySet[Revision]:
    """The revisions after `version` that changed the record's `field` text, oldest first:
    what an undo of an older change is merged past. Lazy; the texts are the bulk of a row."""
    return (
        _of_record(agent, surface_key, record_id, field=field, version_after__gt=version)
        .exclude(before_text=F("after_text"))
        .order_by("version_after")
    )


def record_histories(
    agent: Agent, surface_key: str, record_ids: list[int]
) -> dict[int, list[Revision]]:
    """Every revision of each record, oldest first (one query for a whole batch of records)."""
    history: dict[int, list[Revision]] = {}
    revisions = Revision.objects.filter(
        agent=agent, surface=surface_key, record_id__in=record_ids
    ).order_by("record_id", "version_after", "pk")
    for revision in revisions:
        history.setdefault(revision.record_id, []).append(revision)
    return history


def latest_version(surface_key: str) -> Subquery:
    """For a query of `surface_key` records: the version its latest revision produced."""
    latest = Revision.objects.filter(surface=surface_key, record_id=OuterRef("pk")).order_by(
        "-version_after"
    )
    return Subquery(latest.values("version_after")[:1])


# --- an agent's changes ----------------------------------------------------------------


def agent_revisions(
    agent: Agent,
    *,
    surface: str | None = None,
    record_id: int | None = None,
    channel: str | None = None,
    op: str | None = None,
    with_body: bool = True,
) -> QuerySet[Revision]:
    """The agent's revisions, newest first, narrowed by whichever filters are given.

    Without `with_body` the texts and states stay unread, for lists that show no diff.
    """
    revisions = Revision.objects.filter(agent=agent)
    if surface is not None:
        revisions = revisions.filter(surface=surface)
    if record_id is not None:
        revisions = revisions.filter(record_id=record_id)
    if channel is not None:
        revisions = revisions.filter(channel=channel)
    if op is not None:
        revisions = revisions.filter(op=op)
    if not with_body:
        revisions = revisions.defer(*BODY)
    return revisions.order_by(*NEWEST_FIRST)


def live_refs(agent: Agent, revisions: Iterable[Revision]) -> set[tuple[str, int]]:
    """Which (surface, record id) of `revisions` still exist, so a page links a forgotten
    record to its history instead; one query per surface present."""
    by_surface: dict[str, set[int]] = {}
    for revision in revisions:
        by_surface.setdefault(revision.surface, set()).add(revision.record_id)
    found: set[tuple[str, int]] = set()
    for surface_key, ids in by_surface.items():
        spec = SURFACES.get(surface_key)
        if spec is None:
            continue
        for pk in spec.model.objects.filter(agent=agent, pk__in=ids).values_list("pk", flat=True):
            found.add((surface_key, pk))
    return found


# --- the review queue ------------------------------------------------------------------


def pending_revisions(agent: Agent, *, with_body: bool = True) -> QuerySet[Revision]:
    """What awaits a human's review, oldest first: the order it was written in."""
    pending = Revision.objects.filter(agent=agent, review=PENDING)
    if not with_body:
        pending = pending.defer(*BODY)
    return pending.order_by(*OLDEST_FIRST)


def pending_ids(
    agent: Agent, *, surface: str | None = None, record_id: int | None = None
) -> list[int]:
    """Ids of the pending revisions of the agent (of one surface, or one record)."""
    pending = Revision.objects.filter(agent=agent, review=PENDING)
    if surface is not None:
        pending = pending.filter(surface=surface)
    if record_id is not None:
        pending = pending.filter(record_id=record_id)
    return list(pending.order_by(*OLDEST_FIRST).values_list("pk", flat=True))


def pending_record_ids(agent: Agent, surface_key: str) -> QuerySet[Revision]:
    """A subquery of the records of one surface with a revision awaiting review."""
    return Revision.objects.filter(agent=agent, surface=surface_key, review=PENDING).values(
        "record_id"
    )


def pending_count(agent: Agent, surface_key: str, record_id: int) -> int:
    return _of_record(agent, surface_key, record_id, review=PENDING).count()


def pending_counts(agent: Agent, surface_key: str, record_ids: Iterable[int]) -> dict[int, int]:
    """How many revisions of each record await review (one query for a whole page)."""
    rows = (
        Revision.objects.filter(
            agent=agent, surface=surface_key, review=PENDING, record_id__in=list(record_ids)
        )
        .values("record_id")
        .annotate(count=Count("id"))
    )
    return {row["record_id"]: row["count"] for row in rows}


def pending_by_surface(agent: Agent) -> dict[str, int]:
    """How many revisions await review on each surface (one query)."""
    return dict(
        Revision.objects.filter(agent=agent, review=PENDING)
        .values_list("surface")
        .annotate(count=Count("id"))
        .values_list("surface", "count")
    )


def with_pending_counts(agents: QuerySet[Agent]) -> QuerySet[Agent]:
    """`agents`, each with `pending`: how many of its revisions await review."""
    return agents.annotate(pending=Count("revisions", filter=Q(revisions__review=PENDING)))
