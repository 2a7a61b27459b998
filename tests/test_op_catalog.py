"""Every (surface, op) of the catalog is reachable through every door, walked from CATALOG.

Each op is called through the REST API, the tools endpoint, MCP and the record page with a
body built from its own declared parameters. Whatever the service answers (a refusal of the
made-up text included) proves the call reached it; what must never come back is a door's
"no such route, tool or op".
"""

from __future__ import annotations

import datetime as dt
import json
from typing import Any

import pytest
from django.urls import reverse
from django.utils import timezone
from hypothesis import find
from hypothesis import strategies as st

from memoryadmin.mcp.server import _call, tool_definitions
from memoryadmin.web.ops import web_op
from stores.editing import Status
from stores.models import AgentToken, VersionedRecord
from stores.ops.catalog import CATALOG, FIELD_PARAMS, OPS, OpSpec, Rest, Target
from stores.ops.names import OpName
from stores.ops.params import Kind, Param
from stores.selectors.revisions import last_revision
from stores.services import Actor, record_create, rules_add
from stores.services.policy import OPS_BY_STORE
from stores.surfaces import SURFACES
from stores.tools import all_tools
from tests.api.conftest import client_for
from tests.factories import agent_token

pytestmark = pytest.mark.django_db

STATUS_WORDS = {str(status) for status in Status}
# Forgetting runs last, so every other op finds its record.
PAIRS = sorted(
    [(op, key) for op in OPS for key in SURFACES if op.applies_to(key)],
    key=lambda pair: pair[0].name is OpName.FORGET,
)


def _sample(param: Param, record: VersionedRecord) -> Any:
    match param.kind:
        case Kind.VERSION:
            return record.version
        case Kind.INTEGER:
            return int(param.minimum or 1)
        case Kind.NUMBER:
            return 0.5
        case Kind.BOOLEAN:
            return True
        case Kind.CHOICE:
            return param.choices[0]
        case Kind.MOMENT:
            return (timezone.now() + dt.timedelta(days=1)).isoformat()
        case Kind.REF:
            return record.pk
        case Kind.TAGS:
            return ["sample"]
        case Kind.OBJECT:
            return {}
        case Kind.EDITS:
            return [{"old_string": "sample", "new_string": "example"}]
    if param.pattern:
        # The simplest text of the declared form (a cron line, a memory path, ...).
        return find(st.from_regex(param.pattern, fullmatch=True), lambda text: True)
    return "sample text"


def arguments(op: OpSpec, key: str, record: VersionedRecord) -> dict[str, Any]:
    """The op's required parameters (and one of each group it needs), with sample values."""
    params = {param.name: param for param in op.params(key)}
    names = [name for name, param in params.items() if param.required]
    if op.one_of:
        names += op.one_of[0]
    if op.settable_fields:
        names.append(next(name for name in params if name in FIELD_PARAMS))
    values = {name: _sample(params[name], record) for name in dict.fromkeys(names)}
    if "revision_id" in values:
        values["revision_id"] = last_revision(record.agent, key, record.pk).pk
    return values


@pytest.fixture
def records(agent) -> dict[str, VersionedRecord]:
    actor = Actor.maintainer("tests")
    made = {
        "memory": {"content": "A sample memory."},
        "working": {"key": "k", "value": "A sample value."},
        "skill": {"name": "s", "content": "# Steps\n\nA sample skill.\n"},
        "task": {"name": "t", "schedule": "0 7 * * *", "directive": "A sample task."},
        "file": {"path": "/memories/sample.md", "content": "A sample file.\n"},
    }
    found = {}
    for key, values in made.items():
        result = record_create(surface_key=key, agent=agent, actor=actor, values=values)
        found[key] = result.record
    found["rules"] = rules_add(agent=agent, actor=actor, rule="A sample rule.").record
    assert set(found) == set(SURFACES)
    return found


def test_every_op_word_is_in_the_catalog_or_bookkeeping():
    walked = {op.name for op in OPS}
    for allowed in OPS_BY_STORE.values():
        assert allowed is None or allowed <= walked


def test_every_pair_reaches_the_service_over_rest(agent, records):
    client = client_for(agent_token(agent)[1])
    for op, key in PAIRS:
        spec, record = SURFACES[key], records[key]
        base = f"/api/v1/{spec.api_path}/"
        body = arguments(op, key, record)
        match op.rest:
            case Rest.LIST:
                answer = client.get(base)
            case Rest.RETRIEVE:
                answer = client.get(f"{base}{record.pk}/")
            case Rest.CREATE:
                answer = client.post(base, body, format="json")
            case Rest.PARTIAL_UPDATE:
                answer = client.patch(f"{base}{record.pk}/", body, format="json")
            case Rest.DESTROY:
                answer = client.delete(f"{base}{record.pk}/")
            case Rest.ACTION if not op.writes:
                answer = client.get(f"{base}{record.pk}/{op.name}/", body)
            case Rest.ACTION:
                answer = client.post(f"{base}{record.pk}/{op.name}/", body, format="json")
        data = answer.json()
        assert "No API endpoint" not in data.get("message", ""), (key, op.name)
        assert answer.status_code not in (404, 405) or data["status"] == "not_found", (
            key,
            op.name,
            data,
        )
        assert data["status"] in STATUS_WORDS, (key, op.name, data)


def _tool_for(op: OpSpec, key: str) -> tuple[str, dict[str, Any]]:
    assert op.tool is not None, f"{op.name} has no tool"
    tool = next(tool for tool in all_tools() if tool.name == op.tool.name)
    properties = tool.parameters["properties"]
    extra: dict[str, Any] = {}
    if "surface" in properties:
        assert key in properties["surface"]["enum"]
        extra["surface"] = key
    return tool.name, extra


def test_every_pair_reaches_the_service_through_the_tools_endpoint(agent, records):
    client = client_for(agent_token(agent)[1])
    for op, key in PAIRS:
        name, extra = _tool_for(op, key)
        record = records[key]
        if op.target is Target.RECORD:
            extra["id"] = record.pk
        answer = client.post(
            f"/api/v1/tools/{name}/", {**extra, **arguments(op, key, record)}, format="json"
        )
        assert answer.status_code == 200, (key, op.name, answer.json())
        assert answer.json()["status"] in STATUS_WORDS, (key, op.name, answer.json())


def test_every_pair_reaches_the_service_over_mcp(agent, records):
    token = AgentToken.objects.get(pk=agent_token(agent)[0].pk)
    listed = {tool.name: tool for tool in tool_definitions()}
    for op, key in PAIRS:
        name, extra = _tool_for(op, key)
        assert name in listed
        record = records[key]
        if op.target is Target.RECORD:
            extra["id"] = record.pk
        result = _call(lambda request: token, None, name, {**extra, **arguments(op, key, record)})
        answer = result.structured_content
        assert answer["status"] in STATUS_WORDS, (key, op.name, answer)


def test_every_write_pair_is_an_op_of_the_record_page(agent, client, staff_user, records):
    client.force_login(staff_user)
    for op, key in PAIRS:
        record = records[key]
        if not op.writes and op.rest is not Rest.LIST:
            page = client.get(reverse("web:record_detail", args=[agent.name, key, record.pk]))
            assert page.status_code == 200
            continue
        if op.rest in (Rest.LIST, Rest.CREATE):
            name = "web:record_new" if op.rest is Rest.CREATE else "web:record_list"
            page = client.get(reverse(name, args=[agent.name, key]), follow=True)
            assert page.status_code == 200
            continue
        assert web_op(op.name, key) is not None, (key, op.name)
        values = arguments(op, key, record)
        if op.settable_fields:
            values["field"] = next(iter(values))
        form = {
            name: json.dumps(value) if isinstance(value, dict | list) else value
            for name, value in values.items()
        }
        form.setdefault("expected_version", record.version)
        answer = client.post(
            reverse("web:record_op", args=[agent.name, key, record.pk, op.name]),
            form,
            headers={"HX-Request": "true"},
        )
        assert answer.status_code in (200, 409, 422), (key, op.name, answer.status_code)
        assert b"is not an op the page offers" not in answer.content, (key, op.name)


def test_the_catalog_covers_every_rest_verb_and_tool():
    for key in SURFACES:
        verbs = {op.rest for op in OPS if op.applies_to(key)}
        assert {Rest.RETRIEVE, Rest.CREATE, Rest.PARTIAL_UPDATE, Rest.DESTROY} <= verbs
    native = {tool.name for tool in all_tools() if tool.family in ("native", "rockbot")}
    assert {op.tool.name for op in CATALOG.values() if op.tool} <= native


def test_a_field_no_entry_declares_is_typed_from_its_model_field():
    update = next(op for op in OPS if op.name is OpName.UPDATE)
    path = {param.name: param for param in update.params("file")}["path"]
    assert (path.kind, path.max_length) == (Kind.STRING, 1000)
    assert path.description == "The file's path, e.g. /memories/projects/heron.md."


def test_an_ops_parameters_are_built_once_per_surface():
    # Every request of an op reads them two or three times; they never change.
    edit = CATALOG[OpName.EDIT]

    assert edit.params("memory") is edit.params("memory")
    assert edit.params() is edit.params()
    assert edit.params("memory") == edit._params("memory")
