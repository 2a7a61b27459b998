"""Fixed ports for the servers tests start (Redis, the end-to-end stack), beside the
PostgreSQL test port each run owns, so two runs on one machine stay apart, and so do the
pytest-xdist workers of one run."""

from __future__ import annotations

import os

# Ports one worker may take from each offset: the end-to-end stack takes three.
PORTS_PER_WORKER = 5


def beside_postgres(offset: int) -> int:
    base = int(os.environ.get("MEMORYADMIN_TEST_PG_PORT", "55432"))
    worker = int(os.environ.get("PYTEST_XDIST_WORKER", "gw0").removeprefix("gw"))
    return base + offset + PORTS_PER_WORKER * worker
