"""The whole ASGI application (Django, the long-poll feed, MCP) under uvicorn, in a thread."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import uvicorn
from asgiref.sync import async_to_sync, sync_to_async
from django.db import connections


@contextlib.contextmanager
def asgi_server() -> Iterator[str]:
    """Serve a freshly built application on a loopback port; yield its base URL.

    Its requests read the test database (commit what they should see: transactional_db).
    """
    from memoryadmin.asgi import build_application

    # Each request's thread connects anew and closes when the request finishes: none is left
    # in the server's threads for the test database's teardown to trip over.
    settings = connections.settings["default"]
    kept, settings["CONN_MAX_AGE"] = settings.get("CONN_MAX_AGE", 0), 0
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    port = listener.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(build_application(), log_level="warning"))
    thread = threading.Thread(target=server.run, kwargs={"sockets": [listener]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while not server.started:
        assert thread.is_alive() and time.monotonic() < deadline, "uvicorn did not start"
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(20)
        listener.close()
        settings["CONN_MAX_AGE"] = kept
        async_to_sync(sync_to_async(connections.close_all, thread_sensitive=True))()
