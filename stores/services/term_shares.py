"""The periodic count of each large store's common words, which recall weighs by it.

A query's word weighs by how many of the searched memories hold it (stores/selectors/
lexical.py). Counting a word nine memories in ten hold reads nine memories in ten: at
100,000 memories that was most of a search's time. This pass counts, per agent, the words
at least `COMMON_TERM_MEMORIES` of its memories hold, and keeps each with the store's size;
recall takes that share of the memories it searches for such a word, and counts every
other word exactly; a search of the whole store takes the store's size from the count too.
An import that creates that many memories counts its agent at once. PostgreSQL only:
SQLite's full-text index answers a word's count from the index itself.
"""

from __future__ import annotations

from dataclasses import dataclass

from django.conf import settings
from django.db import connection, transaction
from django.db.models import Count
from django.utils import timezone

from stores.dbops import MEMORY_SEARCH_DOCUMENT
from stores.models import Agent, Memory, TermShare
from stores.selectors.filters import MemoryFilters, filtered_memories, still_true


@dataclass(frozen=True)
class ShareCount:
    agents: int
    terms: int

    def as_dict(self) -> dict[str, int]:
        return {"agents": self.agents, "terms": self.terms}


def common_term_memories() -> int:
    """How many memories hold a word before recall weighs it by its counted share."""
    return settings.MEMORYADMIN["SEARCH"]["COMMON_TERM_MEMORIES"]


def term_shares_refresh() -> ShareCount:
    """Count the common words of every agent with that many memories still true, again."""
    if connection.vendor != "postgresql":
        return ShareCount(agents=0, terms=0)
    least = common_term_memories()
    large = (
        Memory.objects.filter(still_true())
        .values("agent")
        .annotate(memories=Count("pk"))
        .filter(memories__gte=least)
        .values_list("agent", "memories")
    )
    counted = dict(large)
    terms = 0
    for agent in Agent.objects.filter(pk__in=counted):
        terms += _count_agent(agent, counted[agent.pk], least)
    # A store that shrank below the bound is counted exactly again.
    TermShare.objects.exclude(agent__in=counted).delete()
    return ShareCount(agents=len(counted), terms=terms)


def term_shares_refresh_agent(agent: Agent) -> ShareCount:
    """Count one agent's common words again (after an import that grew its store), or drop
    them when its store is not large."""
    if connection.vendor != "postgresql":
        return ShareCount(agents=0, terms=0)
    least = common_term_memories()
    memories = filtered_memories(agent=agent, filters=MemoryFilters()).count()
    if memories < least:
        TermShare.objects.filter(agent=agent).delete()
        return ShareCount(agents=0, terms=0)
    return ShareCount(agents=1, terms=_count_agent(agent, memories, least))


def _count_agent(agent: Agent, memories: int, least: int) -> int:
    searched = filtered_memories(agent=agent, filters=MemoryFilters())
    sql, params = searched.order_by().values("pk").query.sql_with_params()
    table = Memory._meta.db_table
    with connection.cursor() as cursor:
        # A document holds each lexeme once, so its rows per lexeme are its memories.
        cursor.execute(
            f"SELECT word.lexeme, count(*) FROM {table}, unnest({table}.{MEMORY_SEARCH_DOCUMENT})"
            f" AS word WHERE {table}.id IN ({sql}) GROUP BY word.lexeme HAVING count(*) >= %s",
            [*params, least],
        )
        rows = cursor.fetchall()
    now = timezone.now()
    with transaction.atomic():
        TermShare.objects.filter(agent=agent).delete()
        TermShare.objects.bulk_create(
            TermShare(
                agent=agent, lexeme=lexeme, holding=holding, memories=memories, counted_at=now
            )
            for lexeme, holding in rows
        )
    return len(rows)
