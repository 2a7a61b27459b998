"""The lexical side of recall: which memories hold the query's words, and how much of it.

A query's words are its terms, stopwords left out ("which", "does", "the" say nothing about
what is asked; PostgreSQL's `english` configuration drops the same words, so both databases
agree). Each term weighs its inverse document frequency among the memories searched, so a
word most memories hold ("user" in an agent's notes about its user) counts for little and a
rare one ("zanzibarite", an invoice number) for much. A memory's lexical score is the share
of the query's weight its words cover: 1.0 when it holds every term, 0.0 when it holds none.
Terms no memory holds keep their weight: the memory does not answer that part of the query.

PostgreSQL matches through the GIN index on each memory's stored `to_tsvector('english',
content)` (stemmed);
SQLite through its FTS5 index (Porter stemmer). Either way two queries, however many terms:
the memories counted with those holding each term, then the best candidates.

On PostgreSQL a term most memories hold is where the time goes: each memory holding it is
read to count it and again to rank it. So the count of a word a large store's memories hold
by the thousand (`COMMON_TERM_MEMORIES`) is its share of the agent's memories, as the
periodic count found it (stores/services/term_shares.py), times the memories searched (a
search of the whole store takes its size from that count too); every other term is counted
in a count of its own, from the index. The ranking leaves out the memories that hold only
the query's weakest terms whenever they cannot reach the best `depth` (MaxScore's bound):
when the weakest terms together weigh less than the next term alone, any memory holding a
stronger term covers more of the query than one holding only the weak ones, so as soon as
enough memories hold a stronger term, the best are among them, in the same order.
"""

from __future__ import annotations

import functools
import math
import operator
import re
from typing import Any

from django.contrib.postgres.search import SearchQuery, SearchRank, SearchVectorField
from django.db import connection
from django.db.models import Case, FloatField, Func, QuerySet, Value, When

from stores.dbops import MEMORY_SEARCH_DOCUMENT, MEMORY_TEXT_SEARCH_CONFIG, SQLITE_MEMORY_FTS
from stores.editing.words import ENGLISH_STOPWORDS
from stores.models import Memory, TermShare

_WORD = re.compile(r"\w+", re.UNICODE)

STOPWORDS = ENGLISH_STOPWORDS

# A query's first this many distinct terms are matched: the cost of the lexical side grows
# with its terms, and a question rarely has more content words than this.
MAX_TERMS = 32


def query_words(query: str) -> list[str]:
    """Every word of the query, stopwords included (an empty list: nothing to search)."""
    return _WORD.findall(query or "")


def query_terms(query: str) -> list[str]:
    """The query's distinct content words, lower-cased, in the order written."""
    terms: list[str] = []
    for word in _WORD.findall(query or ""):
        term = word.casefold()
        if term not in STOPWORDS and term not in terms:
            terms.append(term)
    return terms[:MAX_TERMS]


def term_weight(memories: int, holding: int) -> float:
    """BM25's inverse document frequency: always positive, highest for a word nobody has."""
    return math.log(1.0 + (memories - holding + 0.5) / (holding + 0.5))


class MemoryDocument(Func):
    """The memory's text-search document: its stored column, which the GIN index covers
    (`to_tsvector('english', content)`, kept by a trigger: stores/dbops.py)."""

    template = f'"{Memory._meta.db_table}"."{MEMORY_SEARCH_DOCUMENT}"'
    arity = 0
    output_field = SearchVectorField()


def lexical_candidates(
    memories: QuerySet[Memory],
    terms: list[str],
    depth: int,
    *,
    agent_id: int,
    whole_store: bool = False,
) -> list[tuple[int, float]]:
    """(id, share of the query's weight matched) of the `depth` memories of `agent_id`'s
    `memories` covering most of `terms`, best first; ties go to the denser match (ts_rank,
    BM25), then the older id. `whole_store`: `memories` are all the agent's memories still
    true, whose number the periodic count of a large store's common words knows."""
    if not terms or depth <= 0:
        return []
    if connection.vendor == "postgresql":
        return _postgres(memories, terms, depth, agent_id, whole_store)
    return _sqlite(memories, terms, depth)


def _postgres(
    memories: QuerySet[Memory], terms: list[str], depth: int, agent_id: int, whole_store: bool
) -> list[tuple[int, float]]:
    document = MemoryDocument()
    queries = [_term_query(term) for term in terms]
    total, *holding = _counts(memories, terms, queries, agent_id, whole_store)
    # A store's size from its last count may trail a word counted now (the store grew since):
    # no word is held by more memories than there are.
    total = max(total, *holding)
    weights = [term_weight(total, count) for count in holding]
    matched = functools.reduce(
        operator.add,
        [
            Case(
                When(document=query, then=Value(weight)),
                default=Value(0.0),
                output_field=FloatField(),
            )
            for query, weight in zip(queries, weights, strict=True)
        ],
    )
    anything = functools.reduce(operator.or_, queries)

    def best(holding_one: SearchQuery) -> list[tuple[int, float]]:
        return list(
            memories.annotate(document=document)
            .filter(document=holding_one)
            .annotate(matched=matched, rank=SearchRank(document, anything))
            .order_by("-matched", "-rank", "pk")
            .values_list("pk", "matched")[:depth]
        )

    strong = _strong_terms(weights, holding, depth)
    rows = best(functools.reduce(operator.or_, [queries[i] for i in strong])) if strong else []
    if len(rows) < depth:
        # No bound applied, or it rested on a common word's share and fewer memories than
        # the share promised hold the stronger terms: every term is ranked.
        rows = best(anything)
    whole = sum(weights)
    return [(record_id, float(score) / whole) for record_id, score in rows]


def _counts(
    memories: QuerySet[Memory],
    terms: list[str],
    queries: list[SearchQuery],
    agent_id: int,
    whole_store: bool,
) -> list[int]:
    """How many memories there are, then how many hold each term, in one statement where
    each count is planned alone (the index for a rare term). A common word's count is its
    counted share (TermShare) of the memories, and only where none is kept are its
    memories counted; so is the whole store's size."""
    kept = TermShare._meta.db_table
    sql, memories_params = memories.order_by().values("pk").query.sql_with_params()
    size = f"(SELECT count(*) FROM ({sql}) AS counted)"
    params: list[Any] = list(memories_params)
    if whole_store:
        size = (
            f"COALESCE((SELECT kept.memories FROM {kept} AS kept WHERE kept.agent_id = %s "
            f"LIMIT 1), {size})"
        )
        params.insert(0, agent_id)
    parts: list[str] = ["searched.memories"]
    for term, query in zip(terms, queries, strict=True):
        holding = memories.annotate(document=MemoryDocument()).filter(document=query)
        subset_sql, subset_params = holding.order_by().values("pk").query.sql_with_params()
        count = f"(SELECT count(*) FROM ({subset_sql}) AS counted)"
        if term.isdigit():  # matched in two spellings (_term_query): always counted
            parts.append(count)
            params += subset_params
            continue
        lexemes = "tsvector_to_array(to_tsvector(%s::regconfig, %s))"
        parts.append(
            f"COALESCE((SELECT round(kept.holding::float8 / kept.memories * searched.memories) "
            f"FROM {kept} AS kept WHERE kept.agent_id = %s AND kept.lexeme = ANY({lexemes}) "
            f"AND cardinality({lexemes}) = 1), {count})"
        )
        config = MEMORY_TEXT_SEARCH_CONFIG
        params += [agent_id, config, term, config, term, *subset_params]
    with connection.cursor() as cursor:
        cursor.execute(
            f"WITH searched AS (SELECT {size} AS memories) SELECT {', '.join(parts)} FROM searched",
            params,
        )
        return [int(count) for count in cursor.fetchone()]


def _strong_terms(weights: list[float], holding: list[int], depth: int) -> list[int]:
    """The terms (indexes) one of which every one of the best `depth` memories holds, when
    that can be told from the weights alone; [] when every term must be ranked.

    The weakest terms, lightest first, are left out while together they weigh less than the
    lightest term kept: then a memory holding a kept term always covers more of the query.
    Some kept term must be held by `depth` memories or more, so that the best are among them.
    """
    order = sorted(range(len(weights)), key=weights.__getitem__)
    best: list[int] = []
    weak = 0.0
    for position, index in enumerate(order[:-1]):
        weak += weights[index]
        kept = order[position + 1 :]
        # A margin over the database's own sum of the same weights, which may round apart.
        if weak < weights[kept[0]] * (1 - 1e-9) and max(holding[i] for i in kept) >= depth:
            best = kept
    return best


def _term_query(term: str) -> SearchQuery:
    query = SearchQuery(term, config=MEMORY_TEXT_SEARCH_CONFIG, search_type="plain")
    if term.isascii() and term.isdigit():
        # PostgreSQL's parser reads "INV-20933" as the word "inv" and the signed integer
        # "-20933": a number asked for matches its signed spelling too.
        query |= SearchQuery(f"-{term}", config=MEMORY_TEXT_SEARCH_CONFIG, search_type="plain")
    return query


def _sqlite(memories: QuerySet[Memory], terms: list[str], depth: int) -> list[tuple[int, float]]:
    allowed_sql, allowed_params = memories.order_by().values("pk").query.sql_with_params()
    table = Memory._meta.db_table
    # Each term quoted: FTS5 then reads it as a plain term (or a phrase of its parts), never
    # as query syntax. A word holds no double quote.
    matches = [f'"{term}"' for term in terms]
    holds = f"IN (SELECT rowid FROM {SQLITE_MEMORY_FTS} WHERE {SQLITE_MEMORY_FTS} MATCH %s)"
    with connection.cursor() as cursor:
        cursor.execute(
            f"SELECT count(*), {', '.join(f'total({table}.id {holds})' for _ in terms)} "
            f"FROM {table} WHERE {table}.id IN ({allowed_sql})",
            [*allowed_params, *matches],
        )
        total, *holding = cursor.fetchone()
        weights = [term_weight(total, int(count)) for count in holding]
        matched = " + ".join(f"%s * (rowid {holds})" for _ in terms)
        cursor.execute(
            f"SELECT rowid, {matched} AS matched FROM {SQLITE_MEMORY_FTS} "
            f"WHERE {SQLITE_MEMORY_FTS} MATCH %s AND rowid IN ({allowed_sql}) "
            f"ORDER BY matched DESC, bm25({SQLITE_MEMORY_FTS}), rowid LIMIT %s",
            [
                *(value for pair in zip(weights, matches, strict=True) for value in pair),
                " OR ".join(matches),
                *allowed_params,
                depth,
            ],
        )
        rows = cursor.fetchall()
    whole = sum(weights)
    return [(record_id, float(score) / whole) for record_id, score in rows]
