"""Benchmark: what the door's scan for credentials and personal data adds to an edit.

One command, from the repository root:

    .venv/bin/python bench/doorscan.py [--edits 600] [--no-record]

On a fresh SQLite, then on a throwaway PostgreSQL (bin/postgres), one process each: memories
from the corpus of ordinary memories the tests use (tests/fixtures/ordinary_memories.py),
phrase-edited through the edit service (`record_edit`, the path of every door) in alternating
blocks with the scan on and with it replaced by a pass-through, so a busy moment of the shared
machine falls on both alike. Also the scan alone on the corpus, per memory, and on a 100,000
character document edited on one line (an edit reads the lines it changes). The figures are
printed and written into their section of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

from common import ROOT, command_line, log, machine, measured_on_both_databases, record_section

BEGIN = "<!-- bench/doorscan.py: begin -->"
END = "<!-- bench/doorscan.py: end -->"
BLOCK = 20


def measure(edits: int) -> dict:
    """Inside a Django process on the benchmark's database: edits with and without the scan."""
    sys.path.insert(0, str(ROOT))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
    import django

    django.setup()
    from django.conf import settings
    from django.core.management import call_command
    from django.db import connection

    from stores import scanning
    from stores.engine import doorscan
    from stores.engine.actors import Actor
    from stores.services import record_create, record_edit
    from stores.services.agents import agent_create
    from stores.tasks import background_reembedder
    from tests.fixtures.ordinary_memories import ordinary_memories

    call_command("migrate", verbosity=0)
    me = Actor.maintainer("bench")
    agent = agent_create(actor=me, name="bench").record
    corpus = ordinary_memories()
    ids = []
    for text in corpus[: edits // 2]:
        made = record_create(
            surface_key="memory", agent=agent, actor=me, values={"content": text + " Likes tea."}
        )
        assert made.ok, made
        ids.append(made.id)

    screen = doorscan.screen
    inside: list[float] = []

    def timed(**arguments: object) -> doorscan.Screened:
        started = time.perf_counter()
        try:
            return screen(**arguments)  # type: ignore[arg-type]
        finally:
            inside.append(time.perf_counter() - started)

    def unscanned(*, values: dict, actor: Actor, **_: object) -> doorscan.Screened:
        return doorscan.Screened(values=dict(values), actor=actor)

    times: dict[str, list[float]] = {"scan": [], "no scan": []}
    words = ("Likes tea.", "Likes coffee.")
    turn = 0
    for block in range(2 * edits // BLOCK):
        label = "scan" if block % 2 == 0 else "no scan"
        doorscan.screen = timed if label == "scan" else unscanned  # type: ignore[assignment]
        for _ in range(BLOCK):
            ref = ids[turn % len(ids)]
            old, new = words if (turn // len(ids)) % 2 == 0 else words[::-1]
            started = time.perf_counter()
            result = record_edit(
                surface_key="memory", agent=agent, ref=ref, actor=me,
                old_string=old, new_string=new,
            )  # fmt: skip
            times[label].append(time.perf_counter() - started)
            assert result.ok, result
            turn += 1
            # The re-embedding a write hands to a background thread is done before the next
            # edit starts: back to back, the next edit would wait on its SQLite write lock
            # at whatever moment the thread holds it, and time that instead.
            assert background_reembedder.drain(timeout=60)
    doorscan.screen = screen  # type: ignore[assignment]

    region = settings.MEMORYADMIN["PHONE_REGION"]
    started = time.perf_counter()
    for text in corpus:
        scanning.scan(text, region=region)
    corpus_ms = (time.perf_counter() - started) * 1000 / len(corpus)
    document = "\n".join(corpus[i % len(corpus)] for i in range(2000))[:100_000]
    lines = document.splitlines(keepends=True)
    edited = "".join([*lines[:-1], lines[-1] + " Added."])
    started = time.perf_counter()
    scanning.scan(edited, region=region, skip_lines=lines)
    one_line_ms = (time.perf_counter() - started) * 1000
    started = time.perf_counter()
    scanning.scan(document, region=region)
    whole_ms = (time.perf_counter() - started) * 1000
    return {
        "database": connection.vendor,
        "edits": {label: _summary(values) for label, values in times.items()},
        "screen ms": _summary(inside),
        "screen share": sum(inside) / sum(times["scan"]),
        "corpus ms": corpus_ms,
        "document chars": len(document),
        "document one line ms": one_line_ms,
        "document whole ms": whole_ms,
        "load": os.getloadavg()[0],
    }


def _summary(seconds: list[float]) -> dict[str, float]:
    ms = sorted(value * 1000 for value in seconds)
    return {
        "count": len(ms),
        "median": statistics.median(ms),
        "p90": ms[int(len(ms) * 0.9)],
        "mean": statistics.fmean(ms),
    }


def report(runs: list[dict]) -> str:
    rows = []
    for run in runs:
        scan, bare = run["edits"]["scan"], run["edits"]["no scan"]
        added = (scan["median"] - bare["median"]) / bare["median"] * 100
        rows.append(
            f"| {run['database']} | {bare['count']} + {scan['count']} | {bare['median']:.2f} | "
            f"{scan['median']:.2f} | {added:+.1f}% | {run['screen ms']['median']:.3f} | "
            f"{run['screen share'] * 100:.1f}% |"
        )
    first = runs[0]
    return f"""{BEGIN}
## The scan at the door (`bench/doorscan.py`)

Measured on {time.strftime("%Y-%m-%d")}: {machine()}; load average {first["load"]:.1f} (other
work shared the cores). A phrase edit of an ordinary memory through the edit service, in
one process, in alternating blocks of {BLOCK} with the scan on and replaced by a pass-through,
each edit started once the re-embedding the previous one handed to a background thread is done.
The difference of medians moves with whatever else the machine runs; the scan's own time,
measured inside the edits that ran it, is the figure that does not: its share of those edits'
whole time is what it adds.

| database | edits (off + on) | median ms off | median ms on | difference | scan ms | scan's share |
|---|---|---|---|---|---|---|
{chr(10).join(rows)}

The scan alone: {first["corpus ms"]:.3f} ms a memory over the 1,000 of the tests' corpus of
ordinary memories (about 130 characters each); on a {first["document chars"]:,}-character
document, {first["document whole ms"]:.1f} ms for the whole text (a create) and
{first["document one line ms"]:.2f} ms for an edit of one line (an edit reads only the lines
it adds).
{END}"""


def main() -> None:
    parser = command_line(__doc__)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--edits", type=int, default=600)
    options = parser.parse_args()
    if options.measure:
        options.measure.write_text(json.dumps(measure(options.edits)), "utf-8")
        return
    runs = measured_on_both_databases(
        __file__,
        "memoryadmin-doorscan.",
        "--edits",
        str(options.edits),
        env={
            "MEMORYADMIN_SUGGEST_AFTER_WRITE": "false",
            "MEMORYADMIN_EMBEDDING_BACKEND": "stores.embeddings.fake.FakeBackend",
        },
    )
    log(json.dumps(runs))
    section = report(runs)
    if not options.no_record:
        record_section(section, BEGIN, END)
        print("recorded in docs/BENCHMARKS.md")
    print(section)


if __name__ == "__main__":
    main()
