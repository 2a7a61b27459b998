"""What the benchmarks share: the machine they ran on, their sections of docs/BENCHMARKS.md,
a throwaway PostgreSQL, a timed `manage.py` step and their command lines.

Each bench runs as `.venv/bin/python bench/<name>.py` from the repository root, so this
folder is on the path and the root is not: importing this module puts the root there, for
the project's own packages (Django's settings, tests.load.server).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCHMARKS = ROOT / "docs" / "BENCHMARKS.md"
sys.path.insert(0, str(ROOT))


def log(message: str) -> None:
    """Progress, on stderr: stdout keeps what a bench reports."""
    print(message, file=sys.stderr, flush=True)


# --- timing ------------------------------------------------------------------------------


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(seconds: list[float]) -> dict[str, float]:
    """p50, p95 and mean of `seconds`, in milliseconds."""
    return {
        "p50": percentile(seconds, 0.5) * 1000,
        "p95": percentile(seconds, 0.95) * 1000,
        "mean": statistics.fmean(seconds) * 1000,
    }


# Runs a command and writes the peak resident memory of what it ran. A process this one
# starts begins in this one's memory map until it executes its program, and Linux counts
# that map's peak as the new process's own: wait4 on the step reported this benchmark's
# peak whenever it was the larger (a 400 MiB parent, a 60 MiB step: 414 MiB). The step is
# started from this small launcher instead, so its peak is its own.
_LAUNCHER = (
    "import resource, subprocess, sys\n"
    "code = subprocess.call(sys.argv[2:])\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss\n"
    "open(sys.argv[1], 'w').write(str(peak))\n"
    "sys.exit(code)\n"
)


def run_step(label: str, args: list[str], env: dict[str, str]) -> dict[str, object]:
    """`manage.py *args` in a process of its own: its wall time, CPU time (from wait4's
    rusage) and peak resident memory, the machine's load as it ended, and what it printed."""
    started = time.perf_counter()
    with tempfile.NamedTemporaryFile("r", suffix=".peak") as peak:
        process = subprocess.Popen(
            [sys.executable, "-c", _LAUNCHER, peak.name, sys.executable, "manage.py", *args],
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
        peak_mib = int(peak.read()) / 1024  # Linux reports kilobytes
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


# --- the report --------------------------------------------------------------------------


def machine() -> str:
    """The machine a bench ran on, in one phrase: CPUs, memory, Python, operating system."""
    meminfo = Path("/proc/meminfo").read_text()
    total_kib = int(re.search(r"MemTotal:\s+(\d+)", meminfo).group(1))
    cpuinfo = Path("/proc/cpuinfo").read_text()
    model = re.search(r"model name\s*:\s*(.+)", cpuinfo)
    return (
        f"{os.cpu_count()} CPUs ({model.group(1).strip() if model else platform.processor()}), "
        f"{total_kib / 1024 / 1024:.1f} GiB memory, Python {platform.python_version()}, "
        f"{platform.system()} {platform.release()}"
    )


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


def command_line(doc: str, *, port: int | None = None) -> argparse.ArgumentParser:
    """A bench's arguments, described by the first line of its `doc`: --no-record and, for a
    bench whose PostgreSQL takes a port of the caller's, --port (MEMORYADMIN_TEST_PG_PORT,
    else `port`). The bench adds its own."""
    parser = argparse.ArgumentParser(description=doc.splitlines()[0])
    if port is not None:
        default = int(os.environ.get("MEMORYADMIN_TEST_PG_PORT", str(port)))
        parser.add_argument("--port", type=int, default=default)
    parser.add_argument("--no-record", action="store_true", help="Do not write BENCHMARKS.md.")
    return parser


# --- databases ---------------------------------------------------------------------------


@contextmanager
def work_folder(prefix: str = "memoryadmin-bench.") -> Iterator[Path]:
    """A temporary folder for a run, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix=prefix, ignore_cleanup_errors=True) as temp:
        work = Path(temp)
        work.chmod(0o755)  # the server runs as the `postgres` user when we are root
        yield work


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


def start_postgres(run_dir: Path) -> str:
    """start_database in `run_dir`, on port MEMORYADMIN_BENCH_PG_PORT, else
    MEMORYADMIN_TEST_PG_PORT, else 55432."""
    port = os.environ.get("MEMORYADMIN_BENCH_PG_PORT") or os.environ.get(
        "MEMORYADMIN_TEST_PG_PORT", "55432"
    )
    return start_database(run_dir / "postgres", port)


def stop_postgres(run_dir: Path) -> None:
    stop_database(run_dir / "postgres")


@contextmanager
def migrated_postgres(port: int) -> Iterator[tuple[Path, dict[str, str]]]:
    """A PostgreSQL of its own (bin/postgres) in a temporary folder, migrated: the folder and
    the environment a `manage.py` process runs on it with; stopped and removed afterwards."""
    with work_folder() as work:
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


def measured_on_both_databases(
    script: str, prefix: str, *arguments: str, env: dict[str, str] | None = None
) -> list[dict]:
    """What `script --measure OUT *arguments` wrote to OUT, run in a process of its own on a
    fresh SQLite, then on a throwaway PostgreSQL (start_postgres); `env` goes to both."""
    with work_folder(prefix) as run_dir:

        def measured(database: dict[str, str], out: Path) -> dict:
            subprocess.run(
                [sys.executable, script, "--measure", str(out), *arguments],
                cwd=ROOT,
                check=True,
                env={**os.environ, "MEMORYADMIN_LOG_LEVEL": "WARNING", **(env or {}), **database},
            )
            return json.loads(out.read_text("utf-8"))

        log("SQLite ...")
        (run_dir / "sqlite").mkdir()
        sqlite = {"MEMORYADMIN_DATA_DIR": str(run_dir / "sqlite"), "MEMORYADMIN_DATABASE_URL": ""}
        runs = [measured(sqlite, run_dir / "sqlite.json")]
        log("PostgreSQL ...")
        url = start_postgres(run_dir)
        try:
            runs.append(measured({"MEMORYADMIN_DATABASE_URL": url}, run_dir / "pg.json"))
        finally:
            stop_postgres(run_dir)
    return runs


def main_on_both_databases(
    doc: str,
    script: str,
    prefix: str,
    measure: Callable[[], dict],
    report: Callable[[str, list[dict], float], str],
    section: tuple[str, str],
) -> None:
    """A bench measured on both databases: `measure` in each child process (`--measure OUT`),
    `report(host, runs, seconds)` in the parent, printed and recorded between `section`'s
    marks (unless --no-record)."""
    parser = command_line(doc)
    parser.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.measure:
        options.measure.write_text(json.dumps(measure()), "utf-8")
        return
    started = time.perf_counter()
    runs = measured_on_both_databases(script, prefix)
    text = report(machine(), runs, time.perf_counter() - started)
    if not options.no_record:
        record_section(text, *section)
    print(text)
