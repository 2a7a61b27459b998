"""gunicorn settings, read from MEMORYADMIN_* variables.

The container and the end-to-end test both start the web server as
`gunicorn -c gunicorn.conf.py memoryadmin.asgi:application`: gunicorn manages the
processes (restarts, graceful reloads, timeouts); each is a uvicorn worker whose event loop
serves MCP and the change feed's long polls, and runs Django (the UI and the REST API) in
MEMORYADMIN_WEB_THREADS threads that keep their database connections between requests
(memoryadmin/asgi.py).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from uvicorn_worker import UvicornWorker


def _setting(name: str, default: str) -> str:
    return os.environ.get(f"MEMORYADMIN_{name}", default)


bind = _setting("BIND", "0.0.0.0:8000")
# Processes, one per core: each runs Python on one core at a time. Its Django threads
# (MEMORYADMIN_WEB_THREADS) each keep their own PostgreSQL connection, so workers x threads
# connections in all.
workers = int(_setting("WEB_WORKERS", "2"))


class BoundedUvicornWorker(UvicornWorker):
    """uvicorn's worker with the cap on connections and requests at once that bin/serve
    gives uvicorn (past it: 503): gunicorn's own settings do not reach uvicorn's."""

    CONFIG_KWARGS = {
        **UvicornWorker.CONFIG_KWARGS,
        "limit_concurrency": int(_setting("MAX_CONNECTIONS", "1000")),
    }


worker_class = BoundedUvicornWorker
timeout = int(_setting("WEB_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
# Recycle each worker after about this many requests, so neither a slow leak nor the heap's
# fragmentation (a few large answers leave memory the allocator keeps) grows without bound;
# the jitter keeps the workers from restarting all at once.
max_requests = int(_setting("WEB_MAX_REQUESTS", "2000"))
max_requests_jitter = max(max_requests // 10, 1)
# X-Forwarded-For (the client's address, which the login lockout counts) and
# X-Forwarded-Proto are taken only from the proxies listed in FORWARDED_ALLOW_IPS (comma
# separated addresses or networks, "*" for any); unset, from nobody, so no client can choose
# the address it is counted by. gunicorn's own default trusts loopback.
forwarded_allow_ips = os.environ.get("FORWARDED_ALLOW_IPS", "")
# memoryadmin.requests logs every request with its id in the app's own format (JSON in
# production); gunicorn's access log would be a second, unstructured copy.
accesslog = None
errorlog = "-"
# A worker's temporary heartbeat file in memory, not on a container's overlay disk.
worker_tmp_dir = "/dev/shm" if Path("/dev/shm").is_dir() else None

# Prometheus: every worker process writes its counters to files in one folder, so a scrape of
# /metrics answered by any worker sums them all. Set before a worker imports prometheus_client.
metrics_dir = Path(
    os.environ.setdefault(
        "PROMETHEUS_MULTIPROC_DIR",
        _setting(
            "METRICS_DIR", str(Path(tempfile.gettempdir()) / f"memoryadmin-metrics-{os.getpid()}")
        ),
    )
)


def on_starting(server: object) -> None:
    # Counters start at zero with the server: files of a previous run would be added in.
    shutil.rmtree(metrics_dir, ignore_errors=True)
    metrics_dir.mkdir(parents=True, exist_ok=True)


def child_exit(server: object, worker: object) -> None:
    from prometheus_client import multiprocess

    # A recycled worker's gauges leave with it; its counters stay in the sums.
    multiprocess.mark_process_dead(worker.pid)  # type: ignore[attr-defined]
