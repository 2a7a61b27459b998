"""bin/setup, bin/serve and bin/test as a newcomer runs them. Each script runs for real from
a copy of the checkout whose tools are stubs that note how they were called: nothing is
installed, served or tested."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CALLS = "calls.log"


def stub(path: Path, body: str = "") -> None:
    """An executable that appends its name and arguments to calls.log, then runs `body`."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        f'#!/usr/bin/env bash\necho "$(basename "$0") $*" >> "$(dirname "$0")/../{CALLS}"\n{body}\n'
    )
    path.chmod(0o755)


@pytest.fixture
def checkout(tmp_path) -> Path:
    for script in ("setup", "serve", "test"):
        (tmp_path / "bin").mkdir(exist_ok=True)
        shutil.copy(ROOT / "bin" / script, tmp_path / "bin" / script)
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def run(checkout: Path, script: str, *args: str, **env: str) -> subprocess.CompletedProcess:
    clean = {
        name: value for name, value in os.environ.items() if not name.startswith("MEMORYADMIN_")
    }
    return subprocess.run(
        ["bash", str(checkout / "bin" / script), *args],
        cwd=checkout,
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=60,
    )


def calls(checkout: Path, where: str = "bin") -> list[str]:
    log = checkout / where / ".." / CALLS
    return log.read_text().splitlines() if log.exists() else []


def pip_installs(checkout: Path) -> list[str]:
    lines = calls(checkout, ".venv/bin")
    return [line.split(" -e ", 1)[1] for line in lines if " install " in line and " -e " in line]


def test_setup_installs_the_runtime_only_unless_asked_for_the_test_tools(checkout):
    stub(checkout / ".venv" / "bin" / "python")

    assert run(checkout, "setup").returncode == 0
    assert pip_installs(checkout) == ["."]

    assert run(checkout, "setup", "dev").returncode == 0
    assert pip_installs(checkout) == [".", ".[dev]"]

    # Everything is there: neither asks pip again until pyproject.toml changes.
    assert run(checkout, "setup").returncode == 0
    assert run(checkout, "setup", "dev").returncode == 0
    assert pip_installs(checkout) == [".", ".[dev]"]

    with (checkout / "pyproject.toml").open("a") as pyproject:
        pyproject.write("\n# changed\n")
    assert run(checkout, "setup").returncode == 0
    assert pip_installs(checkout) == [".", ".[dev]", "."]


def test_setup_refuses_an_unknown_profile(checkout):
    stub(checkout / ".venv" / "bin" / "python")

    done = run(checkout, "setup", "everything")

    assert done.returncode == 2
    assert "usage: bin/setup [dev]" in done.stderr
    assert pip_installs(checkout) == []


def test_serve_installs_the_runtime_and_test_adds_the_test_tools(checkout):
    stub(checkout / "bin" / "setup", "exit 97")

    assert run(checkout, "serve").returncode == 97
    assert run(checkout, "test").returncode == 97

    assert calls(checkout) == ["setup ", "setup dev"]


@pytest.fixture
def busy_port():
    """A listening socket on 55432, bin/test's first choice (None if something else has it)."""
    listener = socket.socket()
    try:
        listener.bind(("127.0.0.1", 55432))
    except OSError:
        listener.close()
        yield None
        return
    listener.listen()
    yield listener
    listener.close()


def test_bin_test_starts_postgresql_on_a_free_port_and_stops_when_sqlite_fails(checkout, busy_port):
    stub(checkout / "bin" / "setup")
    stub(checkout / "bin" / "system-deps")
    stub(checkout / "bin" / "postgres", 'echo "postgres://postgres@127.0.0.1:$3/postgres"')
    venv = checkout / ".venv" / "bin"
    for tool in ("ruff", "lint-imports"):
        stub(venv / tool)
    # The venv's python: the real one for the port probe (python -), pytest as asked.
    python = shutil.which("python3")
    stub(
        venv / "python",
        f'if [ "$1" = - ]; then exec {python} -; fi\n'
        'if [ "$1 $2" = "-m pytest" ]; then exit "${FAIL_PYTEST:-0}"; fi',
    )

    done = run(checkout, "test", "-k", "x")

    assert done.returncode == 0, done.stderr
    starts = [line.split() for line in calls(checkout) if line.startswith("postgres start")]
    assert len(starts) == 1
    port = int(starts[0][3])
    assert busy_port is None or port != 55432
    with socket.socket() as probe:  # it was free (the stub started nothing on it)
        probe.bind(("127.0.0.1", port))
    # Each pass: all but the browser tests in a worker per core, then the browser tests in
    # workers of their own; the asked-for arguments after bin/test's own. The PostgreSQL pass
    # leaves out the tests that touch no database.
    pytest_runs = [line for line in calls(checkout, ".venv/bin") if " -m pytest " in line]
    assert pytest_runs == [
        "python -m pytest -n auto --dist loadgroup -m not browser -k x",
        "python -m pytest -n auto --dist loadgroup -m browser -k x",
        "python -m pytest -n auto --dist loadgroup -m not browser and not database_free -k x",
        "python -m pytest -n auto --dist loadgroup -m browser and not database_free -k x",
    ]

    failed = run(checkout, "test", FAIL_PYTEST="1")

    assert failed.returncode == 1
    assert "== tests on PostgreSQL" not in failed.stdout
    assert len([line for line in calls(checkout) if line.startswith("postgres start")]) == 1
