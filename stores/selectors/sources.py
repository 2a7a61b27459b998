"""Reading sources: the conversations that wrote to an agent, and what each one wrote.

Counted in the database (a few grouped queries a page, whatever the number of revisions),
from the revisions' own source columns; a take-back's writes name the conversation they took
back and are counted apart, as what was taken back.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, field
from typing import Any

from django.db.models import Count, Max, Min, QuerySet

from stores.models import Agent, QuarantinedConversation, Revision
from stores.selectors.revisions import moment

# Conversations on one page of the Sources list.
SOURCES_PER_PAGE = 50
# Records of one conversation listed on its page.
RECORDS_SHOWN = 500


@dataclass
class ConversationSummary:
    """What one conversation wrote to an agent."""

    conversation: str
    writes: int = 0
    records: int = 0
    first_at: dt.datetime | None = None
    last_at: dt.datetime | None = None
    platforms: list[str] = field(default_factory=list)
    by_op: dict[str, int] = field(default_factory=dict)
    by_surface: dict[str, int] = field(default_factory=dict)
    # Writes of take-backs of this conversation.
    taken_back: int = 0
    # Quarantined: its agents' further writes wait in the review queue.
    held: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "first_at": moment(self.first_at), "last_at": moment(self.last_at)}


def _sourced(agent: Agent) -> QuerySet[Revision]:
    return Revision.objects.filter(agent=agent).exclude(source_conversation="").order_by()


def conversation_count(agent: Agent) -> int:
    return (
        _sourced(agent)
        .filter(source_takeback=False)
        .values("source_conversation")
        .distinct()
        .count()
    )


def conversations(
    agent: Agent, *, limit: int = SOURCES_PER_PAGE, offset: int = 0, conversation: str = ""
) -> list[ConversationSummary]:
    """The conversations that wrote to `agent`, the latest to write first (or only
    `conversation`), each with its counts by op and surface and its first and last write."""
    own = _sourced(agent).filter(source_takeback=False)
    if conversation:
        own = own.filter(source_conversation=conversation)
    latest = (
        own.values("source_conversation")
        .annotate(last=Max("created_at"))
        .order_by("-last", "source_conversation")[offset : offset + limit]
    )
    summaries = {
        row["source_conversation"]: ConversationSummary(row["source_conversation"])
        for row in latest
    }
    if not summaries:
        return []
    names = list(summaries)
    grouped = (
        own.filter(source_conversation__in=names)
        .values("source_conversation", "surface", "op")
        .annotate(writes=Count("id"), first=Min("created_at"), last=Max("created_at"))
    )
    for row in grouped:
        summary = summaries[row["source_conversation"]]
        summary.writes += row["writes"]
        summary.by_op[row["op"]] = summary.by_op.get(row["op"], 0) + row["writes"]
        summary.by_surface[row["surface"]] = (
            summary.by_surface.get(row["surface"], 0) + row["writes"]
        )
        summary.first_at = min(filter(None, (summary.first_at, row["first"])))
        summary.last_at = max(filter(None, (summary.last_at, row["last"])))
    records = (
        own.filter(source_conversation__in=names)
        .values("source_conversation", "surface", "record_id")
        .distinct()
    )
    for written in records:
        summaries[written["source_conversation"]].records += 1
    platforms = (
        own.filter(source_conversation__in=names)
        .exclude(source_platform="")
        .values_list("source_conversation", "source_platform")
        .distinct()
    )
    for name, platform in platforms:
        summaries[name].platforms.append(platform)
    taken_back = (
        _sourced(agent)
        .filter(source_takeback=True, source_conversation__in=names)
        .values("source_conversation")
        .annotate(writes=Count("id"))
    )
    for taking in taken_back:
        summaries[taking["source_conversation"]].taken_back = taking["writes"]
    # A hold names a conversation in any case (`CONV-Q` holds `conv-Q`).
    held = {
        name.casefold()
        for name in QuarantinedConversation.objects.filter(agent=agent).values_list(
            "conversation", flat=True
        )
    }
    for name, summary in summaries.items():
        summary.held = name.casefold() in held
    for summary in summaries.values():
        summary.platforms.sort()
    return list(summaries.values())


@dataclass(frozen=True)
class WrittenRecord:
    """A record one conversation wrote: how often, by which ops, when last."""

    surface: str
    record_id: int
    writes: int
    ops: tuple[str, ...]
    last_at: dt.datetime


def records_of_conversation(agent: Agent, conversation: str) -> list[WrittenRecord]:
    """The records `conversation` created or changed, the latest written first."""
    rows = (
        _sourced(agent)
        .filter(source_takeback=False, source_conversation=conversation)
        .values("surface", "record_id", "op")
        .annotate(writes=Count("id"), last=Max("created_at"))
    )
    found: dict[tuple[str, int], dict[str, Any]] = {}
    for row in rows:
        entry = found.setdefault(
            (row["surface"], row["record_id"]), {"writes": 0, "ops": [], "last": row["last"]}
        )
        entry["writes"] += row["writes"]
        entry["ops"].append(row["op"])
        entry["last"] = max(entry["last"], row["last"])
    written = [
        WrittenRecord(
            surface, record_id, entry["writes"], tuple(sorted(entry["ops"])), entry["last"]
        )
        for (surface, record_id), entry in found.items()
    ]
    written.sort(key=lambda record: (record.last_at, record.record_id), reverse=True)
    return written[:RECORDS_SHOWN]


def unsourced_held(agent: Agent) -> bool:
    """Whether the agent's writes that name no conversation are held for review."""
    return QuarantinedConversation.objects.filter(agent=agent, conversation="").exists()
