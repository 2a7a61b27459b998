"""A real HTTP receiver on loopback for webhook tests: it records what arrives and answers
each request with the next status of its script."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


@dataclass(frozen=True)
class Received:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float


@dataclass
class Receiver:
    url: str
    # Statuses to answer, one per request; `default` once they run out.
    script: list[int] = field(default_factory=list)
    default: int = 200
    # Where a 3xx answer sends the sender.
    location: str = ""
    received: list[Received] = field(default_factory=list)
    # Cleared: requests are held unanswered until it is set again.
    answering: threading.Event = field(default_factory=threading.Event)
    arrived: threading.Condition = field(default_factory=threading.Condition)

    def wait_for(self, count: int, timeout: float = 20) -> list[Received]:
        deadline = time.monotonic() + timeout
        with self.arrived:
            while len(self.received) < count:
                remaining = deadline - time.monotonic()
                assert remaining > 0, f"{len(self.received)} of {count} requests arrived"
                self.arrived.wait(remaining)
            return list(self.received)


@contextmanager
def receiver(script: list[int] | None = None, *, default: int = 200) -> Iterator[Receiver]:
    state = Receiver(url="", script=list(script or []), default=default)
    state.answering.set()

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            with state.arrived:
                state.received.append(
                    Received(
                        path=self.path,
                        headers={name.lower(): value for name, value in self.headers.items()},
                        body=body,
                        at=time.monotonic(),
                    )
                )
                status = state.script.pop(0) if state.script else state.default
                state.arrived.notify_all()
            state.answering.wait(30)
            self.send_response(status)
            if 300 <= status < 400 and state.location:
                self.send_header("Location", state.location)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    state.url = f"http://127.0.0.1:{server.server_address[1]}/hooks/memoryadmin"
    try:
        yield state
    finally:
        state.answering.set()
        server.shutdown()
        server.server_close()
