"""Benchmark: a dead webhook receiver must not slow down a write.

One command, from the repository root:

    .venv/bin/python bench/webhooks.py [--edits 300] [--port 55493] [--no-record]

Measures the p50 and p95 of a phrase edit over HTTP, side by side, with no webhook, with a
webhook pointing at a closed port, and with one pointing at a receiver that accepts the
connection and never answers (each delivery then waits for the whole timeout), in the two
shapes memoryadmin runs in:

a. the embedded default, as `bin/serve` runs it: one uvicorn process on SQLite, deliveries
   sent from a background thread of that process;
b. production: PostgreSQL, Redis, the production web server (gunicorn with 2 uvicorn
   workers) and a Celery worker process that makes the deliveries.

The figures are printed and written into their section of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from common import (
    ROOT,
    command_line,
    machine,
    record_section,
    start_database,
    stop_database,
    summary,
    work_folder,
)
from edit_path import ANCHOR

# Importable once common has put the repository root on the path.
from tests.load.server import free_port

BEGIN = "<!-- bench/webhooks.py: begin -->"
END = "<!-- bench/webhooks.py: end -->"
SERVER_ENV = {
    "MEMORYADMIN_EMBEDDING_BACKEND": "stores.embeddings.fake.FakeBackend",
    "MEMORYADMIN_LOG_LEVEL": "WARNING",
    "MEMORYADMIN_API_RATE_LIMIT": "100000000/minute",
    # The receivers are on this machine's loopback.
    "MEMORYADMIN_WEBHOOK_ALLOW_PRIVATE": "true",
    "MEMORYADMIN_WEBHOOK_TIMEOUT": "10",
}


@contextmanager
def black_hole() -> Iterator[str]:
    """A receiver that accepts every connection and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/hook"
    finally:
        stop.set()
        thread.join()
        for connection in held:
            connection.close()
        listener.close()


class Client:
    """One agent's token, and a record of its to edit."""

    def __init__(self, base: str, token: str) -> None:
        import requests

        self.base = base
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"
        self.record = self.post("memories/", {"content": f"The user prefers tea. {ANCHOR} End."})[
            "id"
        ]
        self.edits = 0

    def post(self, path: str, body: dict) -> dict:
        answer = self.session.post(f"{self.base}/api/v1/{path}", json=body, timeout=60)
        if answer.status_code not in (200, 201):
            raise SystemExit(f"{path}: {answer.status_code} {answer.text[:300]}")
        return answer.json()

    def edit(self) -> float:
        self.edits += 1
        started = time.perf_counter()
        self.post(
            f"memories/{self.record}/edit/",
            {"old_string": ANCHOR, "new_string": f"<{self.edits}> {ANCHOR}"},
        )
        return time.perf_counter() - started


CONDITIONS = ("none", "closed port", "never answers")


def agent_token(env: dict[str, str], agent: str) -> str:
    command = [sys.executable, "manage.py", "create_agent_token", agent, "--name", "bench"]
    output = subprocess.run(command, cwd=ROOT, env=env, check=True, capture_output=True)
    return output.stdout.decode().strip().splitlines()[-1]


def tokens(env: dict[str, str]) -> dict[str, str]:
    return {name: agent_token(env, f"bench-{n}") for n, name in enumerate(CONDITIONS)}


def measure(base: str, tokens: dict[str, str], edits: int) -> dict[str, dict[str, float]]:
    """Edits of three agents taken in turns (so a busy moment of the machine falls on all
    three alike): one without a webhook, one whose webhook's port is closed, one whose
    receiver never answers."""
    clients = {name: Client(base, token) for name, token in tokens.items()}
    with black_hole() as hole:
        clients["closed port"].post("webhooks/", {"url": f"http://127.0.0.1:{free_port()}/h"})
        clients["never answers"].post("webhooks/", {"url": hole})
        times: dict[str, list[float]] = {name: [] for name in CONDITIONS}
        for turn in range(edits + 20):
            order = CONDITIONS[turn % 3 :] + CONDITIONS[: turn % 3]
            for name in order:
                elapsed = clients[name].edit()
                if turn >= 20:
                    times[name].append(elapsed)
    return {name: summary(values) for name, values in times.items()}


def embedded(options, work: Path) -> dict:
    env = {**os.environ, **SERVER_ENV, "MEMORYADMIN_DATA_DIR": str(work / "embedded")}
    env.pop("MEMORYADMIN_DATABASE_URL", None)
    env.pop("MEMORYADMIN_BROKER_URL", None)
    env["MEMORYADMIN_REEMBED_AFTER_WRITE"] = "thread"
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    agents = tokens(env)
    port = free_port()
    uvicorn = str(Path(sys.executable).parent / "uvicorn")
    log = (work / "uvicorn.log").open("w")
    server = subprocess.Popen(
        [uvicorn, "memoryadmin.asgi:application", "--port", str(port), "--log-level", "warning"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=log,
    )
    try:
        from tests.load.server import wait_until_up

        base = f"http://127.0.0.1:{port}"
        wait_until_up(base, server, work / "uvicorn.log")
        return measure(base, agents, options.edits)
    finally:
        server.terminate()
        server.wait(20)


def production(options, work: Path) -> dict:
    from tests.load.server import gunicorn, redis_server

    url = start_database(work / "postgres", options.port)
    worker = None
    try:
        with redis_server() as redis_url:
            env = {
                **os.environ,
                **SERVER_ENV,
                "MEMORYADMIN_DATABASE_URL": url,
                "MEMORYADMIN_BROKER_URL": redis_url,
                "MEMORYADMIN_DATA_DIR": str(work / "data"),
            }
            subprocess.run(
                [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True
            )
            agents = tokens(env)
            worker = subprocess.Popen(
                [sys.executable, "-m", "celery", "-A", "memoryadmin", "worker", "--pool=solo",
                 "--loglevel=WARNING", "--without-gossip", "--without-mingle"],
                cwd=ROOT,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )  # fmt: skip
            # The server helper reads the database of this process's Django settings.
            os.environ.update(
                {"MEMORYADMIN_DATABASE_URL": url, "DJANGO_SETTINGS_MODULE": "memoryadmin.settings"}
            )
            import django

            django.setup()
            settings = {name.removeprefix("MEMORYADMIN_"): v for name, v in SERVER_ENV.items()}
            with gunicorn(workers=2, BROKER_URL=redis_url, **settings) as base:
                return measure(base, agents, options.edits)
    finally:
        if worker is not None:
            worker.terminate()
            worker.wait(20)
        stop_database(work / "postgres")


def write_section(results: dict, options) -> str:
    def rows(figures: dict) -> str:
        base = figures["none"]["p50"]
        return "\n".join(
            f"| {name} | {f['p50']:.2f} | {f['p95']:.2f} | {f['p50'] / base:.2f}x |"
            for name, f in figures.items()
        )

    section = f"""{BEGIN}
## A dead webhook receiver and the edit path

Measured by `bench/webhooks.py` on {time.strftime("%Y-%m-%d")}: {machine()}.
Three agents edit a record each over HTTP, taking turns, {options.edits} edits each after
20 warm-up turns; milliseconds. "none": the agent has no webhook; "closed port": its
webhook's URL has nobody listening; "never answers": its receiver accepts the connection
and never answers, so each delivery attempt waits for the whole 10 s timeout. A write only
leaves its deliveries for after its commit: the p50 column should not move.

**(a) the embedded default** (one uvicorn process, SQLite, deliveries from a background
thread of the server)

| webhook | p50 | p95 | p50 / none |
|---|---:|---:|---:|
{rows(results["embedded"])}

**(b) production** (PostgreSQL 18 with `fsync=off`, Redis, gunicorn with 2 uvicorn
workers, one Celery worker making the deliveries)

| webhook | p50 | p95 | p50 / none |
|---|---:|---:|---:|
{rows(results["production"])}
{END}"""
    record_section(section, BEGIN, END)
    return section


def main() -> None:
    parser = command_line(__doc__, port=55493)
    parser.add_argument("--edits", type=int, default=300)
    options = parser.parse_args()
    with work_folder() as work:
        results = {"embedded": embedded(options, work)}
        print(json.dumps(results["embedded"]), flush=True)
        results["production"] = production(options, work)
        print(json.dumps(results["production"]), flush=True)
    if not options.no_record:
        print(write_section(results, options))
    else:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
