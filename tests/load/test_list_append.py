"""No lost update under load: a list-append history checker over real HTTP (PostgreSQL only).

Agents (bearer tokens, JSON API) and humans (a logged-in browser session posting the UI's
edit form with the version the page was loaded at, CSRF and all) put tokens in front of the
anchor of a few hot records through the production server (gunicorn.conf.py: 4 uvicorn
workers, each running Django in 4 threads, the most overlap in the database), while the
background tasks run back to back: re-embedding the hot records, the stale-vector sweep and
the importance decay pass (with a half-life of seconds, so it really writes). The history
each client saw is then checked against the rows and revisions (tests/load/history.py).

Size: MEMORYADMIN_CHECKER_WRITERS (16), MEMORYADMIN_CHECKER_EDITS per writer (60),
MEMORYADMIN_CHECKER_RECORDS (4). The full run, by hand:

    MEMORYADMIN_CHECKER_EDITS=500 MEMORYADMIN_TEST_PG_PORT=55502 bin/test tests/load -s
"""

from __future__ import annotations

import os
import random
import re
import threading
import time

import pytest
import requests
from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.db import connection

from stores import tasks
from stores.engine.actors import Actor
from stores.models import Memory
from stores.models import Revision as RevisionRow
from stores.selectors.embeddings import stale_records
from stores.services import record_create
from stores.services.agents import token_create
from tests.factories import AgentFactory
from tests.load.history import (
    ANCHOR,
    Op,
    StoredRevision,
    check_record,
    explain,
)
from tests.load.server import browser_session, csrf_from, gunicorn

WRITERS = int(os.environ.get("MEMORYADMIN_CHECKER_WRITERS", "16"))
EDITS = int(os.environ.get("MEMORYADMIN_CHECKER_EDITS", "60"))
RECORDS = int(os.environ.get("MEMORYADMIN_CHECKER_RECORDS", "4"))
HUMANS = max(1, WRITERS // 4)
PASSWORD = "correct horse battery staple"
SEED_TEXT = f"Hot record. {ANCHOR} The end."
_VERSION_INPUT = re.compile(r'name="expected_version" value="(\d+)"')
_FLASH_VERSION = re.compile(r"Now version (\d+)\.")

APPLIED = {"updated"}


@pytest.fixture
def real_password_hasher(settings):
    # gunicorn runs with the project's hashers; the test's fast MD5 one would not verify there.
    from django.conf import global_settings

    settings.PASSWORD_HASHERS = global_settings.PASSWORD_HASHERS


class Clock:
    def __init__(self) -> None:
        self.start = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self.start


def read(session: requests.Session, url: str) -> requests.Response:
    """A read, retried once: gunicorn recycles workers (max_requests), which resets an idle
    keep-alive connection; a read is safe to repeat, a write is not (it is never retried)."""
    try:
        answer = session.get(url, timeout=60)
    except requests.ConnectionError:
        answer = session.get(url, timeout=60)
    answer.raise_for_status()
    return answer


def agent_writer(base, raw_token, name, records, clock, ops, lock, failures) -> None:
    """An agent: phrase edits over the API, a third with no version, a third with the
    version in the body, a third with If-Match (read a moment before)."""
    session = requests.Session()
    session.headers["Authorization"] = f"Bearer {raw_token}"
    rng = random.Random(name)
    try:
        for number in range(EDITS):
            record_id = rng.choice(records)
            token = f"<{name}e{number:04d}>"
            mode = rng.choice(["none", "body", "header"])
            expected = None
            headers = {}
            if mode != "none":
                answer = read(session, f"{base}/api/v1/memories/{record_id}/")
                expected = int(answer.headers["ETag"].strip('"'))
                if mode == "header":
                    headers["If-Match"] = answer.headers["ETag"]
            body = {"old_string": ANCHOR, "new_string": f"{token} {ANCHOR}"}
            if mode == "body":
                body["expected_version"] = expected
            op = Op(name, record_id, token, clock.now(), expected_version=expected)
            try:
                answer = session.post(
                    f"{base}/api/v1/memories/{record_id}/edit/",
                    json=body,
                    headers=headers,
                    timeout=60,
                )
            except requests.RequestException as error:
                op.status, op.completed = f"no answer: {error}", clock.now()
                with lock:
                    ops.append(op)
                continue
            op.completed = clock.now()
            op.http_code = answer.status_code
            payload = answer.json()
            op.status = payload.get("status", "")
            op.version = payload.get("version")
            op.outcome = "applied" if op.status in APPLIED and answer.ok else "refused"
            with lock:
                ops.append(op)
    except Exception as error:  # the checker reports a broken writer as a failure
        failures.append(f"{name}: {error!r}")


def human_writer(base, username, agent_name, name, records, clock, ops, lock, failures) -> None:
    """A reviewer in a browser: load the record page, then post the edit form with the
    version it was loaded at (as htmx does), so a concurrent write makes it a conflict."""
    rng = random.Random(name)
    try:
        session = browser_session(base, username, PASSWORD)
        for number in range(EDITS):
            record_id = rng.choice(records)
            token = f"<{name}e{number:04d}>"
            page_url = f"{base}/a/{agent_name}/memory/{record_id}/"
            page = read(session, page_url)
            loaded = int(_VERSION_INPUT.search(page.text).group(1))
            op = Op(name, record_id, token, clock.now(), expected_version=loaded)
            try:
                answer = session.post(
                    f"{page_url}ops/edit/",
                    data={
                        "csrfmiddlewaretoken": csrf_from(page.text),
                        "old_string": ANCHOR,
                        "new_string": f"{token} {ANCHOR}",
                        "expected_version": loaded,
                    },
                    headers={"HX-Request": "true", "Referer": page_url},
                    timeout=60,
                )
            except requests.RequestException as error:
                op.status, op.completed = f"no answer: {error}", clock.now()
                with lock:
                    ops.append(op)
                continue
            op.completed = clock.now()
            op.http_code = answer.status_code
            if answer.status_code == 200:
                op.outcome, op.status = "applied", "updated"
                # The flash of the write itself, not the panel (which may show a later version).
                found = _FLASH_VERSION.search(answer.text)
                op.version = int(found.group(1)) if found else None
            else:
                op.outcome = "refused"
                op.status = "conflict" if answer.status_code == 409 else answer.text[:80]
            with lock:
                ops.append(op)
    except Exception as error:
        failures.append(f"{name}: {error!r}")


def background_work(records, stop, counters, failures) -> None:
    """The periodic passes, run back to back as a worker would with a short beat: re-embed
    the hot records, sweep stale vectors, decay importance. Bookkeeping that must never lose
    or make an edit."""
    try:
        while not stop.is_set():
            reembedded = tasks.reembed_records("memory", records)
            counters["reembedded"] += reembedded["stored"]
            counters["reembed_skipped_changed"] += reembedded["skipped_changed"]
            swept = tasks.sweep_stale_embeddings()
            counters["swept"] += sum(outcome["stored"] for outcome in swept.values())
            counters["decayed"] += tasks.decay_memories()["rows_touched"]
            time.sleep(0.01)
    except Exception as error:
        failures.append(f"background: {error!r}")
    finally:
        connection.close()


@pytest.mark.django_db(transaction=True)
def test_no_edit_is_lost_or_invented_under_load(real_password_hasher, settings):
    if connection.vendor != "postgresql":
        pytest.skip(
            "the list-append checker needs PostgreSQL: SQLite serialises writers on one lock, "
            "so it proves nothing about row locks (run bin/test for the PostgreSQL pass)"
        )
    # A half-life of seconds, so the decay pass really lowers importance while writers write.
    settings.MEMORYADMIN = {
        **settings.MEMORYADMIN,
        "DECAY": {**settings.MEMORYADMIN["DECAY"], "HALF_LIFE_DAYS": 30 / 86400},
    }
    agent = AgentFactory()
    maintainer = Actor.maintainer("checker")
    records = []
    for _ in range(RECORDS):
        created = record_create(
            surface_key="memory", agent=agent, actor=maintainer, values={"content": SEED_TEXT}
        )
        assert created.ok, created
        records.append(created.id)
    user_model = get_user_model()
    humans = []
    for number in range(HUMANS):
        user = user_model.objects.create(
            username=f"checker-human-{number}", is_staff=True, password=make_password(PASSWORD)
        )
        humans.append(user.username)
    agents = WRITERS - HUMANS
    maintainer = Actor.maintainer("tests")
    tokens = [
        token_create(actor=maintainer, agent=agent, name=f"writer-{n}").details["token"]
        for n in range(agents)
    ]

    ops: list[Op] = []
    lock = threading.Lock()
    failures: list[str] = []
    counters = {"reembedded": 0, "reembed_skipped_changed": 0, "swept": 0, "decayed": 0}
    clock = Clock()
    stop = threading.Event()
    with gunicorn(workers=4) as base:
        writers = [
            threading.Thread(
                target=agent_writer,
                args=(base, raw, f"a{n:02d}", records, clock, ops, lock, failures),
            )
            for n, raw in enumerate(tokens)
        ] + [
            threading.Thread(
                target=human_writer,
                args=(base, username, agent.name, f"h{n:02d}", records, clock, ops, lock, failures),
            )
            for n, username in enumerate(humans)
        ]
        background = threading.Thread(
            target=background_work, args=(records, stop, counters, failures)
        )
        background.start()
        for writer in writers:
            writer.start()
        for writer in writers:
            writer.join()
        stop.set()
        background.join()
        elapsed = clock.now()
    assert not failures, failures

    report = []
    anomalies = []
    for record_id in records:
        record = Memory.objects.get(pk=record_id)
        chain = [
            StoredRevision(*row)
            for row in RevisionRow.objects.filter(surface="memory", record_id=record_id)
            .order_by("version_after")
            .values_list(
                "version_before",
                "version_after",
                "op",
                "actor",
                "channel",
                "before_text",
                "after_text",
            )
        ]
        record_ops = [op for op in ops if op.record_id == record_id]
        found = check_record(
            record_id, record.content, record.version, SEED_TEXT, chain, record_ops
        )
        anomalies += [explain(anomaly, record_ops, chain) for anomaly in found]
        applied = sum(op.outcome == "applied" for op in record_ops)
        report.append(f"record {record_id}: {applied}/{len(record_ops)} applied, v{record.version}")
        assert record.importance < 0.5, "the decay pass never reached the hot records"
    stale = list(stale_records("memory").filter(pk__in=records).values_list("pk", flat=True))
    if stale:
        anomalies.append(f"stale vectors left at the end: records {stale}")

    applied = sum(op.outcome == "applied" for op in ops)
    print(
        f"\nlist-append checker: {len(ops)} edits by {WRITERS} writers "
        f"({HUMANS} humans) on {RECORDS} records in {elapsed:.1f} s; {applied} applied, "
        f"{len(ops) - applied} refused; "
        f"background: {counters}\n" + "\n".join(report)
    )
    assert len(ops) == WRITERS * EDITS
    refused = {op.status for op in ops if op.outcome == "refused"}
    assert refused <= {"conflict"}, refused
    assert not anomalies, "\n\n".join(anomalies[:10])
