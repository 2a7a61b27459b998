"""The whole-agent suggestion pass over a large agent on PostgreSQL: its time and memory.

    .venv/bin/python bench/suggestions_scale.py [--memories 100000]

Starts a throwaway PostgreSQL + pgvector (bin/postgres, on port MEMORYADMIN_BENCH_PG_PORT,
else MEMORYADMIN_TEST_PG_PORT, else 55432), loads one agent's memories by binary COPY
(synthetic twelve-word texts and clustered vectors, as bench/background.py seeds recall, with
one memory in fifty repeated in other letter case so the pass has duplicates to find), builds
the HNSW index, and runs `suggest_for_agent` in a process of its own, reporting its wall time,
the suggestions it made and the process's peak resident memory.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from background import (  # noqa: E402
    clustered,
    load_memories,
    start_postgres,
    stop_postgres,
    synthetic_corpus,
)

# One memory in this many is a copy of another in upper case: an exact duplicate to find.
DUPLICATE_EVERY = 50


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


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


def measure(count: int, url: str) -> dict:
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
    import django

    django.setup()
    from django.core.management import call_command

    from stores.models import Agent
    from stores.services.suggestions import suggest_for_agent

    call_command("migrate", verbosity=0)
    agent = Agent.objects.create(name="scale")
    began = time.perf_counter()
    seed(url, agent.pk, count)
    seed_seconds = time.perf_counter() - began
    began = time.perf_counter()
    counts = suggest_for_agent(agent)
    return {
        "memories": count,
        "seed_seconds": seed_seconds,
        "pass_seconds": time.perf_counter() - began,
        "suggestions": dict(counts),
        "expected_duplicates": len(range(1, count, DUPLICATE_EVERY)),
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        url = os.environ["MEMORYADMIN_DATABASE_URL"]
        options.measure.write_text(json.dumps(measure(options.memories, url)), "utf-8")
        return
    run_dir = Path(tempfile.mkdtemp(prefix="memoryadmin-suggest-scale."))
    run_dir.chmod(0o755)  # as root the server runs as `postgres`, which must reach it
    url = start_postgres(run_dir)
    try:
        out = run_dir / "scale.json"
        subprocess.run(
            [sys.executable, __file__, "--measure", str(out), "--memories", str(options.memories)],
            cwd=ROOT,
            check=True,
            env={
                **os.environ,
                "MEMORYADMIN_LOG_LEVEL": "WARNING",
                "MEMORYADMIN_DATABASE_URL": url,
                "MEMORYADMIN_SUGGEST_AFTER_WRITE": "false",
            },
        )
        print(json.dumps(json.loads(out.read_text("utf-8")), indent=2))
    finally:
        stop_postgres(run_dir)
        shutil.rmtree(run_dir, ignore_errors=True)


if __name__ == "__main__":
    main()
