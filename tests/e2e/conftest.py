"""One production stack for the whole end-to-end session, started once and stopped at the end.

It runs in the PostgreSQL pass of bin/test (pgvector is what production runs on); on the
SQLite pass the tests are skipped with the reason.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.stack import Stack
from tests.ports import beside_postgres


def _ports() -> tuple[int, int, int]:
    # Below the kernel's ephemeral range (32768 up): while a fault test has Redis or the
    # database stopped, any process's outgoing connection could otherwise take the port.
    base = beside_postgres(-30000)
    return base, base + 1, base + 2


# First, so pytest-xdist's own hook, which turns the group into the worker's assignment,
# sees the mark: a conftest loaded before the worker's plugin would otherwise run after it.
@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.e2e)
            # One pytest-xdist worker runs them all: the stack starts once per run.
            item.add_marker(pytest.mark.xdist_group("e2e"))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    running = getattr(item, "funcargs", {}).get("stack")
    if report.failed and isinstance(running, Stack):
        report.sections.append(("what the stack's processes logged last", running.log_tails()))
    return report


@pytest.fixture(scope="session")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Stack]:
    if not os.environ.get("MEMORYADMIN_DATABASE_URL", "").startswith("postgres"):
        pytest.skip(
            "end-to-end stack runs in the PostgreSQL pass of bin/test "
            "(set MEMORYADMIN_DATABASE_URL to a PostgreSQL URL)"
        )
    for program in ("redis-server", "redis-cli"):
        if shutil.which(program) is None:
            pytest.skip(f"{program} is not installed (bin/system-deps installs redis-server)")
    # As root the database runs as the postgres user, which must reach this folder.
    run_dir = Path(tempfile.mkdtemp(prefix="memoryadmin-e2e-"))
    run_dir.chmod(0o755)
    http_port, pg_port, redis_port = _ports()
    running = Stack(
        run_dir=run_dir,
        log_dir=tmp_path_factory.mktemp("e2e-logs"),
        pg_port=pg_port,
        redis_port=redis_port,
        http_port=http_port,
    )
    try:
        running.start()
        yield running
    finally:
        running.shutdown()
        shutil.rmtree(run_dir, ignore_errors=True)
