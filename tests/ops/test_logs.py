"""Every write is one JSON log line with its ids and words, and never the memory text."""

from __future__ import annotations

import io
import json
import logging

import pytest

from memoryadmin.hosting.logs import JsonFormatter, RequestIdFilter
from tests.api.conftest import client_for
from tests.factories import agent_token

SECRET_TEXT = "The user's locker code is 4711-zebra"


@pytest.fixture
def json_log():
    """The production handler (JSON, request ids, redaction) on the root logger."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter("%(levelname)s %(name)s %(message)s"))
    handler.addFilter(RequestIdFilter())
    root = logging.getLogger()
    root.addHandler(handler)
    yield stream
    root.removeHandler(handler)


def lines_of(stream: io.StringIO, logger: str) -> list[dict]:
    records = [json.loads(line) for line in stream.getvalue().splitlines()]
    return [record for record in records if record["logger"] == logger]


def test_an_api_write_logs_one_json_line_with_its_ids_and_not_its_text(agent, json_log):
    api = client_for(agent_token(agent)[1])

    response = api.call(
        "post", "memories/", {"content": SECRET_TEXT}, **{"X-Request-ID": "req-abc.123"}
    )

    assert response.status_code == 201
    assert response["X-Request-ID"] == "req-abc.123"
    writes = lines_of(json_log, "memoryadmin.writes")
    assert len(writes) == 1
    line = writes[0]
    assert line["op"] == "record_create"
    assert line["status"] == "created"
    assert line["agent"] == agent.name
    assert line["record_id"] == response.json()["id"]
    assert line["surface"] == "memory"
    assert line["channel"] == "api"
    assert line["request_id"] == "req-abc.123"
    assert line["level"] == "INFO"
    assert "time" in line
    assert "4711" not in json_log.getvalue()
    assert "locker" not in json_log.getvalue()


def test_a_refused_edit_is_logged_with_its_status(agent, make, json_log):
    memory = make.memory(agent, content=SECRET_TEXT)
    api = client_for(agent_token(agent)[1])

    response = api.call(
        "post", f"memories/{memory.pk}/edit/", {"old_string": "zebra", "new_string": "lion"}
    )
    api.call("post", f"memories/{memory.pk}/edit/", {"old_string": "absent", "new_string": "x"})

    assert response.json()["status"] == "updated"
    edits = [
        line for line in lines_of(json_log, "memoryadmin.writes") if line["op"] != "record_create"
    ]
    assert [(line["status"], line["record_id"], line["ref"]) for line in edits] == [
        ("updated", memory.pk, str(memory.pk)),
        ("no_match", None, str(memory.pk)),  # refused before the write: the ref it was given
    ]
    assert edits[0]["request_id"] != edits[1]["request_id"]  # one id per request
    assert "4711" not in json_log.getvalue()


def test_a_request_id_that_is_not_an_id_is_replaced(client, db):
    response = client.get("/healthz", HTTP_X_REQUEST_ID="forged\nline")

    assert response["X-Request-ID"] != "forged\nline"
    assert len(response["X-Request-ID"]) == 32


def test_text_fields_are_redacted_unless_debug_logging_is_on(json_log):
    logger = logging.getLogger("memoryadmin.test_redaction")

    logger.warning("edit refused", extra={"old_string": SECRET_TEXT})
    logger.setLevel(logging.DEBUG)
    try:
        logger.warning("edit refused", extra={"old_string": SECRET_TEXT})
    finally:
        logger.setLevel(logging.NOTSET)

    quiet, verbose = lines_of(json_log, "memoryadmin.test_redaction")
    assert quiet["old_string"] == f"<{len(SECRET_TEXT)} characters, not logged>"
    assert verbose["old_string"] == SECRET_TEXT


def test_a_request_id_is_made_without_reading_the_system_random_source(client, db, monkeypatch):
    # os.urandom lets another thread take the interpreter mid-request; an id needs no secrecy.
    def refused(size: int) -> bytes:
        raise AssertionError("os.urandom read for a request id")

    monkeypatch.setattr("os.urandom", refused)
    ids = {client.get("/healthz")["X-Request-ID"] for _ in range(3)}

    assert len(ids) == 3 and all(len(made) == 32 and int(made, 16) >= 0 for made in ids)
