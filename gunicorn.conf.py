"""gunicorn settings, read from MEMORYADMIN_* variables.

The container and the end-to-end test both start the web server as
`gunicorn -c gunicorn.conf.py memoryadmin.wsgi:application`: gunicorn manages the
processes (restarts, graceful reloads, timeouts); each runs Django (the UI and the REST
API) in a few threads that keep their database connections between requests, and the MCP
endpoint at /mcp/ on an event loop of its own (memoryadmin/wsgi.py).
"""

from __future__ import annotations

import os
from pathlib import Path


def _setting(name: str, default: str) -> str:
    return os.environ.get(f"MEMORYADMIN_{name}", default)


bind = _setting("BIND", "0.0.0.0:8000")
# Processes, one per core: each runs Python on one core at a time. Threads let a process
# serve other requests while one waits on the database (a row lock, a commit); each keeps
# its own PostgreSQL connection, so workers x threads connections in all.
workers = int(_setting("WEB_WORKERS", "2"))
worker_class = "gthread"
threads = int(_setting("WEB_THREADS", "4"))
timeout = int(_setting("WEB_TIMEOUT", "60"))
graceful_timeout = 30
keepalive = 5
# Recycle workers now and then so a slow leak never takes the service down.
max_requests = 2000
max_requests_jitter = 200
# memoryadmin.requests logs every request with its id in the app's own format (JSON in
# production); gunicorn's access log would be a second, unstructured copy.
accesslog = None
errorlog = "-"
# A worker's temporary heartbeat file in memory, not on a container's overlay disk.
worker_tmp_dir = "/dev/shm" if Path("/dev/shm").is_dir() else None
