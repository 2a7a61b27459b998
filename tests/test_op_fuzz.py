"""Hostile values in every parameter of every op, through REST, the tools endpoint and MCP.

Walked from the catalog as tests/test_op_catalog.py walks it, so a new op or parameter is
fuzzed without editing this file. Each parameter gets a few values no door may turn into a
500 (a lone surrogate, a NUL, numbers past any column, a wrong type), the other parameters
holding valid samples so the value travels as deep as it can: the answer is a status word,
over MCP a result (isError for a refusal), never a server error or a protocol error.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import urlencode

import pytest

from memoryadmin.mcp.server import _call
from stores.engine.sources import SOURCE_HEADER
from stores.models import AgentToken, VersionedRecord
from stores.ops.catalog import Op, Rest, Target
from stores.ops.params import Param
from stores.surfaces import SURFACES
from tests.api.conftest import _fresh_rate_limits, client_for
from tests.factories import agent_token
from tests.test_op_catalog import PAIRS, STATUS_WORDS, _tool_for, arguments, suitable_record

# Hundreds of calls from tokens whose ids the next test's tokens reuse: their rate-limit
# history is cleared, as the API tests' is.
pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures(_fresh_rate_limits.__name__)]

HOSTILE: dict[str, Any] = {
    "lone surrogate": "a\ud800b",
    "NUL": "a\x00b",
    "huge integer": 10**400,
    "huge number": 1e308,
    "wrong type": [{"not": "this"}],
}
# A query string carries text only, and no lone surrogate survives its UTF-8 decoding.
HOSTILE_QUERY = {"NUL": "a\x00b", "huge integer": str(10**400), "huge number": "1e308"}


def _fuzzed() -> list[tuple[Op, str, Param | None]]:
    """Each (op, surface, parameter) once per op and parameter name; None: the record's id."""
    seen: set[tuple[str, str]] = set()
    cases: list[tuple[Op, str, Param | None]] = []
    for op, key in PAIRS:
        params: list[Param | None] = [*op.params(key)]
        if op.target is Target.RECORD:
            params.append(None)
        for param in params:
            name = "id" if param is None else param.name
            if (op.name, name) not in seen:
                seen.add((op.name, name))
                cases.append((op, key, param))
    return cases


CASES = _fuzzed()


def _rest(client: Any, op: Op, key: str, record: VersionedRecord, name: str) -> list[Any]:
    """The REST answers to `name` holding each hostile value, the rest of the call sound."""
    base = f"/api/v1/{SURFACES[key].api_path}/"
    if op.rest in (Rest.LIST, Rest.RETRIEVE, Rest.DESTROY) or not op.writes:
        path = {Rest.LIST: base}.get(op.rest, f"{base}{record.pk}/")
        if op.rest is Rest.ACTION:
            path += f"{op.name}/"
        if op.rest is Rest.DESTROY and name == "source":
            # A delete has no body: its source travels in the session's header.
            return [
                client.delete(path, headers={SOURCE_HEADER: f"conversation={text}"})
                for text in HOSTILE_QUERY.values()
            ]
        method = client.delete if op.rest is Rest.DESTROY else client.get
        return [
            method(f"{path}?{urlencode({**arguments(op, key, record), name: text})}")
            for text in HOSTILE_QUERY.values()
        ]
    path = {Rest.CREATE: base, Rest.PARTIAL_UPDATE: f"{base}{record.pk}/"}.get(
        op.rest, f"{base}{record.pk}/{op.name}/"
    )
    send = client.patch if op.rest is Rest.PARTIAL_UPDATE else client.post
    answers = []
    for value in HOSTILE.values():
        record.refresh_from_db(fields=["version"])
        body = {**arguments(op, key, record), name: value}
        answers.append(send(path, json.dumps(body), content_type="application/json"))
    return answers


@pytest.mark.parametrize(
    ("op", "key", "param"),
    CASES,
    ids=[f"{op.name}-{'id' if p is None else p.name}" for op, _, p in CASES],
)
def test_no_hostile_value_is_a_server_error_at_any_door(agent, op, key, param):
    token, raw = agent_token(agent)
    client = client_for(raw)
    record = suitable_record(agent, op, key, "fuzz")
    name = "id" if param is None else param.name
    if param is not None:
        for answer in _rest(client, op, key, record, name):
            assert answer.status_code < 500, (op.name, name, answer.status_code)
            assert answer.json()["status"] in STATUS_WORDS, (op.name, name, answer.json())
    if not type(record).objects.filter(pk=record.pk).exists():
        # A value that is no hostile one for this door (a source of "1e308") let it delete.
        record = suitable_record(agent, op, key, "fuzz")
    tool, extra = _tool_for(op, key)
    token = AgentToken.objects.get(pk=token.pk)
    for label, value in HOSTILE.items():
        if op.target is Target.RECORD:
            extra["id"] = record.pk
            record.refresh_from_db(fields=["version"])
        body = {**extra, **arguments(op, key, record), name: value}
        answer = client.post(
            f"/api/v1/tools/{tool}/", json.dumps(body), content_type="application/json"
        )
        assert answer.status_code < 500, (op.name, name, label, answer.status_code)
        assert answer.json()["status"] in STATUS_WORDS, (op.name, name, label, answer.json())
        result = _call(lambda request: token, None, tool, body)
        assert result.structured_content["status"] in STATUS_WORDS, (op.name, name, label)
        if result.structured_content["status"] == "invalid":
            assert result.is_error, (op.name, name, label)
